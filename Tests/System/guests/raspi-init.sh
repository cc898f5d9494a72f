#!/bin/sh
# /init of the emulated Raspberry Pi 3 or 4 (Tests/System/test_raspberry_pi.py), run by busybox. It drives the
# packaged lightorgan against the Pi's real GPIO driver (pinctrl-bcm2835, which registers as pinctrl-bcm2711 on
# a Pi 4) and reads the pins back from the kernel side: the driver's own pin report in debugfs (GPLEV, the level
# register of QEMU's BCM2835 or BCM2838 GPIO model) and, for PWM timing, the kernel's gpio_value trace events
# with its own timestamps. Prints "PI: ..." lines for the test to judge, then goes on as /strip-init
# (guests/raspi-strip.sh) in the same boot, which ends with "PI: done".
/usr/bin/busybox --install -s /usr/bin
mount -t proc proc /proc; mount -t sysfs sys /sys; mount -t devtmpfs dev /dev
mount -t debugfs debugfs /sys/kernel/debug; mount -t tracefs tracefs /sys/kernel/tracing 2>/dev/null
ip link set lo up
export HOME=/tmp
cd /tmp
echo "PI: kernel $(uname -r) on $(tr -d '\0' </proc/device-tree/model)"
echo "PI: booted after $(cut -d' ' -f1 /proc/uptime) s"
# The driver's folder is DEVICE-NAME: 3f200000.gpio-pinctrl-bcm2835 on a Pi 3, fe200000.gpio-pinctrl-bcm2711 on a Pi 4.
pins=$(ls -d /sys/kernel/debug/pinctrl/*bcm2835*/pins /sys/kernel/debug/pinctrl/*bcm2711*/pins \
    2>/dev/null | head -n 1)
# lines: the levels of BCM 5, 6, 13 as "0 1 0", from the driver's report
# ("pin 5 (gpio5) 5:pinctrl-bcm2835 function gpio_out in hi; irq 0 (none)": "in hi" is the level register).
lines() { awk '$1 == "pin" && ($2 == 5 || $2 == 6 || $2 == 13) { v[$2] = ($0 ~ / in hi/) } END { print v[5] + 0, v[6] + 0, v[13] + 0 }' "$pins"; }
# sample N: N readings of the three lines; prints how many were on, per line: "on5 on6 on13".
sample() {
    n=0; a=0; b=0; c=0
    while [ $n -lt "$1" ]; do
        set -- "$1" $(lines); a=$((a + $2)); b=$((b + $3)); c=$((c + $4)); n=$((n + 1))
    done
    echo "$a $b $c"
}
# frames BASS MID TREBLE SECONDS PORT: a 2016-style client: raw 3-byte frames every 50 ms, then it closes
# (nc shuts its side at the end of input, the receiver closes, nc ends). Run in the background, waited for
# by its pid: a bare `wait` would wait for the receiver too.
frames() {
    octal=$(printf '\\%03o\\%03o\\%03o' "$1" "$2" "$3")
    count=$(($4 * 20))
    (i=0; while [ $i -lt $count ]; do printf "$octal"; sleep 0.05; i=$((i + 1)); done) | nc 127.0.0.1 "$5"
}
# ticks PID: user + system CPU time of PID, in clock ticks (1/100 s).
ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }
# cost PID LABEL: "PI: LABEL cpu ticks N over T0 T1 Rss: … Private_Dirty: …" for PID over 5 s of guest time.
cost() {
    u0=$(ticks "$1"); read t0 _ </proc/uptime
    sleep 5
    u1=$(ticks "$1"); read t1 _ </proc/uptime
    echo "PI: $2 cpu ticks $((u1 - u0)) over $t0 $t1 $(grep -E '^(Rss|Private_Clean|Private_Dirty):' "/proc/$1/smaps_rollup" | tr -s ' ' | tr '\n' ' ')"
}

echo "PI: pins report $pins: $(grep -E '^pin 5 ' "$pins")"
/usr/bin/lightorgan receive --output gpio --chip nosuchchip --port 8190 --quiet 2>/tmp/chips.log
echo "PI: chips $(cat /tmp/chips.log)"

# The receiver as the package's service runs it: its settings file (output: gpio, chip: auto).
/usr/bin/lightorgan receive --config /etc/lightorgan/lightorgan.yaml 2>/tmp/receive.log &
receiver=$!
i=0; while [ $i -lt 60 ] && ! grep -q "listening on " /tmp/receive.log; do sleep 0.5; i=$((i + 1)); done
echo "PI: receiver $(grep -o 'GPIO: .*' /tmp/receive.log | head -n 1)"
echo "PI: lines at start $(lines)"

frames 255 0 255 4 8181 & feeder=$!
sleep 1.5
echo "PI: bass and treble full, samples of 40 on $(sample 40)"
wait $feeder
sleep 0.6
echo "PI: lines 0.6 s after the sender closed $(lines)"

frames 0 255 0 4 8181 & feeder=$!
sleep 1.5
echo "PI: mid full, samples of 40 on $(sample 40)"
wait $feeder

# PWM from the kernel's own timestamps: every write to the lines is a gpio_value trace event.
events=/sys/kernel/tracing/events/gpio/gpio_value
if [ -d "$events" ]; then
    echo > /sys/kernel/tracing/trace
    frames 0 160 0 5 8181 & feeder=$!
    sleep 1.5
    echo 1 >"$events/enable"
    sleep 2
    echo 0 >"$events/enable"
    wait $feeder
    # "NAME-PID [CPU] FLAGS 123.456789: gpio_value: 518 set 1" -> "123.456789 518 1" (time, global line, value)
    awk '{ for (i = 2; i <= NF - 3; i++) if ($i == "gpio_value:" && $(i + 2) == "set") { t = $(i - 1); sub(/:$/, "", t); print t, $(i + 1), $(i + 3) } }' \
        /sys/kernel/tracing/trace >/tmp/edges.txt
    echo "PI: traced writes $(wc -l </tmp/edges.txt)"
    # Line 6 is the one lit: its global number is the chip's base + 6; the base is the smallest line number seen
    # minus 5 (bass, line 5, is written too, always 0).
    awk 'NR == 1 || $2 < low { low = $2 } { t[NR] = $1; g[NR] = $2; v[NR] = $3 } END {
        mid = low - 5 + 6; last = -1
        for (i = 1; i <= NR; i++) if (g[i] == mid) {
            if (last >= 0 && state == 1) on += t[i] - last
            if (last >= 0) total += t[i] - last
            if (v[i] == 1 && state == 0) rises++
            state = v[i]; last = t[i]
        }
        if (total <= 0) total = 1
        printf "PI: pwm duty %.3f rises %d over %.3f s\n", on / total, rises, total }' /tmp/edges.txt
else
    echo "PI: no gpio trace events in this kernel"
fi

# The receiver's cost while it drives three lines from a real sender: the demo groove through the level
# response (the default dance response leaves a lamp dark between its band's onsets; level follows loudness,
# so every lamp moves all the time).
LIGHTORGAN_ANALYSIS_RESPONSE=level /usr/bin/lightorgan send --host 127.0.0.1 --port 8181 --input demo --quiet &
sender=$!
sleep 3
cost $receiver receiver
echo "PI: lines while the demo plays, samples of 40 on $(sample 40)"
# The page: its address from the log, then one page open on /live (a WebSocket through openssl s_client,
# reading everything) while the receiver's cost is measured again.
echo "PI: page $(grep -o 'page: https://[^ ]*' /tmp/receive.log | head -n 1 | cut -d' ' -f2)"
(printf 'GET /live HTTP/1.1\r\nHost: 127.0.0.1:8443\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\nOrigin: https://127.0.0.1:8443\r\n\r\n'
    sleep 12) | openssl s_client -quiet -connect 127.0.0.1:8443 >/tmp/page.bin 2>/tmp/page.err &
page=$!
sleep 3
cost $receiver "receiver with a page"
kill $page 2>/dev/null
# lamp messages: 3-byte binary frames (0x82 0x03); status messages: text frames holding "type":"status".
echo "PI: page socket $(head -n 1 /tmp/page.bin | tr -d '\r') lamp messages $(grep -c "$(printf '\202\003')" /tmp/page.bin) status messages $(grep -o '"type":"status"' /tmp/page.bin | wc -l)"
kill -TERM $receiver
sleep 1.5
echo "PI: lines after SIGTERM $(lines)"
kill -0 $receiver 2>/dev/null && echo "PI: receiver still running after SIGTERM" || echo "PI: receiver ended after SIGTERM"
kill -TERM $sender

/usr/bin/lightorgan test-leds --config /etc/lightorgan/lightorgan.yaml --step 1.5 >/tmp/leds.txt 2>/tmp/leds.log &
leds=$!
# Every change of the three lines until test-leds ends (at most 60 s of guest time).
previous=""; states=""; read start _ </proc/uptime
while kill -0 $leds 2>/dev/null; do
    state="$(lines)"; [ "$state" != "$previous" ] && states="$states|$state"; previous=$state
    read now _ </proc/uptime; [ "${now%.*}" -gt $((${start%.*} + 60)) ] && break
done
echo "PI: test-leds states $states|"
echo "PI: test-leds said $(head -n 3 /tmp/leds.txt | tr '\n' '/')"
echo "PI: test-leds after $(lines)"

# gpio-sim, the kernel's GPIO simulator, as a second chip: auto must still pick the Pi's controller, and a
# chip named by its label works.
# Each module that does not load is named ("PI: insmod gpio-sim failed: …"), and the test fails on it. configfs may
# be built into the kernel: its insmod failing counts only when the kernel has no configfs at all.
unloaded=""
insmod /lib/modules/configfs.ko 2>/tmp/insmod.txt || grep -qw configfs /proc/filesystems ||
    unloaded="configfs ($(tr '\n' ' ' </tmp/insmod.txt))"
[ -z "$unloaded" ] && { insmod /lib/modules/gpio-sim.ko 2>/tmp/insmod.txt || unloaded="gpio-sim ($(tr '\n' ' ' </tmp/insmod.txt))"; }
if [ -z "$unloaded" ]; then
    mount -t configfs none /sys/kernel/config
    sim=/sys/kernel/config/gpio-sim/lightorgan
    mkdir $sim $sim/bank0
    echo 32 >$sim/bank0/num_lines
    echo lightorgan-sim >$sim/bank0/label
    echo 1 >$sim/live
    base=/sys/devices/platform/$(cat $sim/dev_name)/$(cat $sim/bank0/chip_name)
    simlines() { read a <$base/sim_gpio5/value; read b <$base/sim_gpio6/value; read c <$base/sim_gpio13/value; echo "$a $b $c"; }
    /usr/bin/lightorgan receive --config /etc/lightorgan/lightorgan.yaml --port 8182 2>/tmp/auto.log &
    receiver=$!
    i=0; while [ $i -lt 60 ] && ! grep -q "listening on " /tmp/auto.log; do sleep 0.5; i=$((i + 1)); done
    echo "PI: gpio-sim beside it, auto $(grep -o 'GPIO: .*' /tmp/auto.log | head -n 1)"
    grep -q 'GPIO: ' /tmp/auto.log || echo "PI: gpio-sim auto receiver said $(tail -n 2 /tmp/auto.log | tr '\n' '/')"
    kill -TERM $receiver; wait $receiver
    /usr/bin/lightorgan receive --config /etc/lightorgan/lightorgan.yaml --chip lightorgan-sim --port 8183 2>/tmp/sim.log &
    receiver=$!
    i=0; while [ $i -lt 60 ] && ! grep -q "listening on " /tmp/sim.log; do sleep 0.5; i=$((i + 1)); done
    frames 0 255 0 3 8183 & feeder=$!
    sleep 1.5
    echo "PI: gpio-sim lines while mid is full $(simlines)"
    kill -TERM $receiver
    sleep 1
    echo "PI: gpio-sim lines after SIGTERM $(simlines)"
    wait $feeder
else
    echo "PI: insmod failed: $unloaded"
fi
# Every lightorgan of these steps gone (the lines and ports free, up to 20 s), the same boot goes on with the strip's.
i=0; while [ $i -lt 40 ] && pidof lightorgan >/dev/null; do sleep 0.5; i=$((i + 1)); done
pidof lightorgan >/dev/null && echo "PI: lightorgan still running after the GPIO steps: $(pidof lightorgan)"
exec /strip-init
