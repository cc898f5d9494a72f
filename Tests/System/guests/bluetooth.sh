#!/bin/sh
# The Bluetooth part of the kernel-device guest (support/bluetooth_guest.py puts trixie's BlueZ and BlueALSA, the
# receiver and the phone under /bt). Sourced by vm-init.sh (the snd-aloop card and the Bluetooth modules loaded), or
# run as /init by itself with "alone" (a guest of its own, for working on it). Says what it sees in "VM: bt ..." lines.
#
# btvirt -l3 links three virtual controllers: hci0 is the Pi's (bluealsa -p a2dp-sink, the receiver with
# receiver.sound bluetooth playing on the loopback card), hci1 the phone's (bluealsa -B source -p a2dp-source, and
# guests/bt_phone.py for BlueZ's calls), hci2 a stranger's that finds the Pi in a window and tries to pair after it.
# One bluetoothd serves all, as the spike's did.
if [ "$1" = alone ]; then
    mount -t proc proc /proc; mount -t sysfs sys /sys; mount -t devtmpfs dev /dev
    for module in $(cat /lib/modules/order); do insmod "/lib/modules/$module" || echo "VM: insmod $module failed"; done
    ip link set lo up
fi
B=/bt
bt_say() { echo "VM: bt $*"; }
now() { cut -d' ' -f1 /proc/uptime; }
in_bt() {
    chroot $B /usr/bin/env -i PATH=/usr/sbin:/usr/bin HOME=/tmp LANG=C.UTF-8 LIGHTORGAN_ANALYSIS_RESPONSE=level "$@"
}
# in_bt_exec: the same, replacing the shell (of a background job): $! is then the program's own PID.
in_bt_exec() {
    exec chroot $B /usr/bin/env -i PATH=/usr/sbin:/usr/bin HOME=/tmp LANG=C.UTF-8 LIGHTORGAN_ANALYSIS_RESPONSE=level "$@"
}
phone() { in_bt python3.13 /opt/bt/bt_phone.py "$@"; }
# until_said FILE TEXT TENTHS: waits until FILE holds TEXT, at most TENTHS tenths of a second.
until_said() {
    i=0
    while ! grep -q "$2" "$B$1" 2>/dev/null; do
        [ $i -ge "$3" ] && return 1
        sleep 0.1; i=$((i + 1))
    done
}
bt_started=$(now)
mount --bind /proc $B/proc; mount --bind /sys $B/sys; mount --bind /dev $B/dev
mount -t tmpfs tmp $B/tmp; mount -t tmpfs run $B/run; mkdir -p $B/run/dbus
in_bt dbus-uuidgen --ensure=/etc/machine-id
# The phone's bluealsa owns org.bluealsa.source: BlueALSA's own policy allows org.bluealsa only (the ALSA plugin
# would say "Device or resource busy").
cat >$B/etc/dbus-1/system.d/bluealsa-phone.conf <<'POLICY'
<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-BUS Bus Configuration 1.0//EN" "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig><policy user="root"><allow send_destination="org.bluealsa.source"/></policy></busconfig>
POLICY
# The Pi shows as a loudspeaker; the phone remembers a device it found for 10 minutes (BlueZ forgets one it did not
# pair with after 30 s: the refused pairing below comes later than that).
sed -i 's/^#Class = .*/Class = 0x000414/; s/^#TemporaryTimeout = .*/TemporaryTimeout = 600/' $B/etc/bluetooth/main.conf
in_bt dbus-daemon --system --fork
# The receiver, a Bluetooth speaker playing on the loopback card, started before BlueZ: it says what is missing,
# one line each, until each comes (bluetoothd, an adapter, BlueALSA).
in_bt_exec lightorgan receive --bind 127.0.0.1 --port 8190 --output stdout --sound bluetooth --play hw:Loopback,0,0 \
    --name "Organ Pi" --stats-interval 0 >$B/tmp/bt-frames.txt 2>$B/tmp/bt-receive.log &
receiver=$!
until_said /tmp/bt-receive.log "bluetoothd is not running" 100 || bt_say "receiver never missed bluetoothd"
start_bluetoothd() {
    in_bt_exec /usr/libexec/bluetooth/bluetoothd -n >>/tmp/bluetoothd.log 2>&1 &
    bluetoothd=$!
}
start_bluetoothd
until_said /tmp/bt-receive.log "no Bluetooth adapter" 150 || bt_say "receiver never missed the adapter"
in_bt_exec btvirt -l3 >/tmp/btvirt.log 2>&1 &
btvirt=$!
i=0; while [ ! -e /sys/class/bluetooth/hci2 ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
bt_say "controllers $(ls /sys/class/bluetooth | tr '\n' ' ')"
# phone_ready: waits until bluetoothd shows the phone's controller; sets PHONE to its address.
phone_ready() {
    i=0; until PHONE=$(phone address hci1 2>/dev/null | cut -d' ' -f2) && [ -n "$PHONE" ]; do
        sleep 0.2; i=$((i + 1)); [ $i -gt 150 ] && break
    done
}
phone_ready
PI=$(phone address hci0 | cut -d' ' -f2)
bt_say "addresses Pi $PI phone $PHONE"
until_said /tmp/bt-receive.log "BlueALSA is not running" 150 || bt_say "receiver never missed BlueALSA"
in_bt_exec bluealsa -i hci0 -p a2dp-sink >/tmp/bluealsa-pi.log 2>&1 &
in_bt_exec bluealsa -B source -i hci1 -p a2dp-source >/tmp/bluealsa-phone.log 2>&1 &
bt_say "set up in $(awk -v a="$bt_started" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }') s"
# The phone's name holds a tab and a terminal's escape sequence.
bt_say "phone $(phone alias hci1 "$(printf 'Evil\tPhone \033[31mred')")"
# 1. No window: the phone does not find the Pi.
bt_say "no window: discover $(phone discover hci1 "$PI" 6)"
# 2. A short window: the phone and the stranger find the Pi; after it closes, the phone's pairing is refused (a Pi
# no phone has paired with does not even answer a page then).
# open_window SECONDS NAME: lightorgan pair in the background (its PID in $pair, its output in /tmp/NAME.txt), once
# it says the window is open.
open_window() {
    in_bt_exec lightorgan pair --seconds "$1" >$B/tmp/$2.txt 2>&1 &
    pair=$!
    until_said /tmp/$2.txt "pairing window open" 200
}
open_window 20 pair1
bt_say "window: discover $(phone discover hci1 "$PI" 9)"
bt_say "stranger in the window: discover $(phone discover hci2 "$PI" 9)"
wait $pair
bt_say "after the window: pair $(phone pair hci1 "$PI")"
# 3. A window: the phone pairs, connects and plays three tones.
open_window 60 pair2
# The phone forgot the Pi when its pairing failed (BlueZ drops a device it found and could not pair with).
bt_say "window: discover again $(phone discover hci1 "$PI" 9)"
bt_say "window: pair $(phone pair hci1 "$PI")"
bt_say "window: connect $(phone connect hci1 "$PI")"
until_said /tmp/bt-receive.log "connected, codec" 100 || bt_say "the receiver never opened the phone's stream"
sleep 0.5
# A second of 1 kHz, then the phone pauses (its player stops, the link stays): the lamps go dark; then it plays on.
phone_play() {
    in_bt aplay -q -D "bluealsa:DEV=$PI,PROFILE=a2dp,SRV=org.bluealsa.source" -t raw -f S16_LE -r 48000 -c 2 "$1"
}
burst_from=$(now)
bt_say "burst from $burst_from"
phone_play /opt/bt/burst.raw 2>>$B/tmp/aplay.log
bt_say "pause from $(now)"
sleep 2.5
# The phone leaves during the last tone: the lamps go dark within a second.
tones_from=$(now)
bt_say "tones from $tones_from"
phone_play /opt/bt/tones.raw 2>>$B/tmp/aplay.log &
player=$!
while [ "$(awk -v a="$tones_from" -v b="$(now)" 'BEGIN { print (b - a >= 4.0) }')" = 0 ]; do sleep 0.05; done
left=$(now)
bt_say "phone leaves at $left $(phone off hci1)"
wait $player
bt_say "aplay said $(tr '\n' '|' <$B/tmp/aplay.log)"
sleep 2
kill -INT $pair; wait $pair
# The stranger found the Pi in the first window; with the window closed its pairing fails (the Pi's BlueZ never even
# lists it).
STRANGER=$(phone address hci2 | cut -d' ' -f2)
bt_say "stranger after the windows: pair $(phone pair hci2 "$PI" 10)"
bt_say "the Pi knows the stranger: $STRANGER $(phone paired hci0 "$STRANGER" 2>&1 | tr '\n' ' ' | tail -c 300)"
# 4. bluetoothd restarts, no window: the trusted phone connects again by itself.
kill -TERM $bluetoothd; wait $bluetoothd
start_bluetoothd
phone_ready
sleep 1
bt_say "after a restart: connect $(phone connect hci1 "$PI")"
i=0; while [ "$(grep -c "connected, codec" $B/tmp/bt-receive.log)" -lt 2 ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
sleep 1
kill -TERM $receiver; sleep 1
bt_say "pair said $(tr '\n' '|' <$B/tmp/pair2.txt)"
grep -a "Bluetooth" $B/tmp/bt-receive.log | sed 's/^[^ ]* //' | tr -d '\033' | while read -r line; do bt_say "receiver said $line"; done
# The frames from a second before the burst to 5 s after the phone left.
bt_say "frames $(awk -v from="$burst_from" -v to="$left" '$1 >= from - 1 && $1 <= to + 5 { printf "%s,%s,%s,%s ", $1, $2, $3, $4 }' $B/tmp/bt-frames.txt)"
bt_say "ran in $(awk -v a="$bt_started" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }') s"
# For a failure's diagnosis: whether the radio's emulator and bluetoothd lived to the end, and their last lines.
bt_say "daemons at the end: btvirt $(kill -0 $btvirt 2>/dev/null && echo running || echo gone), bluetoothd $(kill -0 $bluetoothd 2>/dev/null && echo running || echo gone)"
[ "$1" = alone ] || for log in bluetoothd.log btvirt.log; do tail -n 15 /tmp/$log | sed "s/^/VM: bt tail $log /"; done
kill $btvirt 2>/dev/null
if [ "$1" = alone ]; then
    sed "s/^/VM: bt log receive /" $B/tmp/bt-receive.log | tail -n 40
    for log in bluetoothd.log btvirt.log bluealsa-pi.log bluealsa-phone.log; do sed "s/^/VM: bt log $log /" /tmp/$log; done
    echo "VM: done"
    sync; poweroff -f
fi
