#!/bin/sh
# /init of the throw-away QEMU guest of Tests/System/test_kernel_devices.py (support/kernel_vm.py builds
# the initramfs: busybox, the kernel's snd-aloop and gpio-sim modules, /bin/lightorgan with its
# libraries, /bin/gpio-trace, a 1 kHz tone in /tmp/tone.raw). It says what it sees in "VM: ..." lines on
# the console; the host judges them. Then it powers the guest off.
mount -t proc proc /proc; mount -t sysfs sys /sys; mount -t devtmpfs dev /dev
for module in $(cat /lib/modules/order); do insmod "/lib/modules/$module" || echo "VM: insmod $module failed"; done
ip link set lo up
export HOME=/tmp
# The kernel's own trace of the loaded PWM step (below), set up now while nothing else runs: enabling an event
# patches the kernel's code on every vCPU (a static key), which then needs no receiver, PWM timer or CPU hog
# running beside it. Until that step turns tracing on, an event's probe finds the buffer off and returns.
tracing=/sys/kernel/tracing
mount -t tracefs tracefs $tracing
echo mono >$tracing/trace_clock; echo 8192 >$tracing/buffer_size_kb; echo 0 >$tracing/tracing_on
for event in gpio/gpio_value timer/hrtimer_start timer/hrtimer_expire_entry; do echo 1 >$tracing/events/$event/enable; done
# Steady tones check capture, transport and GPIO: the level response shows a steady tone as a steady
# lamp (the default dance response flashes its onset, then goes dark).
export LIGHTORGAN_ANALYSIS_RESPONSE=level
echo "VM: cards: $(cat /proc/asound/cards | head -1)"
cd /tmp
# ticks PID SECONDS: "TICKS over T0 T1", PID's CPU time (user and system, 1/100 s) over SECONDS of uptime.
ticks() {
    read -r _ _ _ _ _ _ _ _ _ _ _ _ _ u0 s0 _ </proc/$1/stat; read t0 _ </proc/uptime
    sleep $2
    read -r _ _ _ _ _ _ _ _ _ _ _ _ _ u1 s1 _ </proc/$1/stat; read t1 _ </proc/uptime
    echo "$((u1 + s1 - u0 - s0)) over $t0 $t1"
}
# A watcher on each vCPU notes when the busy host did not run it (see gpio-trace.c): the host judges the
# frame rate and the lit bands where nothing stalled.
/bin/gpio-trace watch 0 6 alsa-cpu0 >/tmp/alsa-cpu0.txt &
w0=$!
/bin/gpio-trace watch 1 6 alsa-cpu1 >/tmp/alsa-cpu1.txt &
w1=$!
/bin/lightorgan receive --bind 127.0.0.1 --port 8181 --output stdout --quiet >/tmp/frames.txt 2>/tmp/receive.log &
receiver=$!
sleep 1
/bin/aplay -q -D hw:Loopback,0,0 -t raw -f S16_LE -r 48000 -c 2 /tmp/tone.raw &
player=$!
sleep 0.5
/bin/lightorgan send --host 127.0.0.1 --input hw:Loopback,1,0 --port 8181 2>/tmp/send.log &
sender=$!
sleep 1
# The stdout receiver's cost here, to compare with the GPIO receiver's below and with the native figure
# of scripts/bench-link (under TCG emulation CPU time is inflated; this gives the factor).
echo "VM: stdout receiver cpu ticks $(ticks $receiver 2)"
kill -TERM $sender; sleep 0.5; kill -TERM $receiver $player; sleep 0.5
echo "VM: send log: $(grep -o 'input: .*' /tmp/send.log | head -1)"
echo "VM: send overruns $(grep -c 'capture overrun' /tmp/send.log)"
echo "VM: frames $(wc -l </tmp/frames.txt)"
echo "VM: last $(tail -n 1 /tmp/frames.txt)"
echo "VM: frame list $(awk '{ printf "%s,%s,%s,%s ", $1, $2, $3, $4 }' /tmp/frames.txt)"
wait $w0 $w1
cat /tmp/alsa-cpu0.txt /tmp/alsa-cpu1.txt
/bin/arecord -q -D hw:Loopback,1,0 -t raw -f S16_LE -r 48000 -c 2 /dev/null &
recorder=$!
sleep 0.5
/bin/lightorgan send --host 127.0.0.1 --input hw:Loopback,1,0 --quiet 2>/tmp/busy.log
echo "VM: busy status $? $(cat /tmp/busy.log)"
kill -TERM $recorder
sleep 0.5
# The receiver's own sound from the loopback (receiver.sound: an ALSA capture device, a USB microphone on a Pi):
# the tone played into it lights the mid lamp, with no sender at all.
/bin/aplay -q -D hw:Loopback,0,0 -t raw -f S16_LE -r 48000 -c 2 /tmp/tone.raw &
player=$!
sleep 0.5
/bin/lightorgan receive --bind 127.0.0.1 --port 8182 --output stdout --sound hw:Loopback,1,0 --stats-interval 0 \
    >/tmp/own.txt 2>/tmp/own.log &
own=$!
sleep 3
kill -TERM $own; sleep 0.5; kill -TERM $player
echo "VM: own sound log $(grep -o 'line-in: .*' /tmp/own.log | head -1)"
echo "VM: own sound frames $(wc -l </tmp/own.txt) mid lit $(awk '$3 >= 200 && $2 <= 10 && $4 <= 10' /tmp/own.txt | wc -l)"
echo "VM: own sound last $(tail -n 1 /tmp/own.txt)"

# GPIO through a real kernel chip: gpio-sim
mount -t configfs none /sys/kernel/config
sim=/sys/kernel/config/gpio-sim/lightorgan
mkdir $sim $sim/bank0
echo 32 >$sim/bank0/num_lines
echo lightorgan-sim >$sim/bank0/label
echo 1 >$sim/live
base=/sys/devices/platform/$(cat $sim/dev_name)/$(cat $sim/bank0/chip_name)
echo "VM: gpio chip $(cat $sim/bank0/chip_name) at $base"
lines() { read a <$base/sim_gpio5/value; read b <$base/sim_gpio6/value; read c <$base/sim_gpio13/value; echo "$a $b $c"; }
# sample N: N readings of the three lines; prints how many were on, per line: "on5 on6 on13" (a line under PWM is
# off for part of each period: one reading cannot tell a dim line from a dark one).
sample() {
    n=0; x=0; y=0; z=0
    while [ $n -lt "$1" ]; do
        set -- "$1" $(lines); x=$((x + $2)); y=$((y + $3)); z=$((z + $4)); n=$((n + 1))
    done
    echo "$x $y $z"
}
trace() {  # $1 seconds, $2 name: "VM: trace $2 ..." and "VM: stalls $2-cpuN ..." (see gpio-trace.c)
    /bin/gpio-trace watch 0 $(($1 + 1)) $2-cpu0 >/tmp/$2-cpu0.txt &
    w0=$!
    /bin/gpio-trace watch 1 $(($1 + 1)) $2-cpu1 >/tmp/$2-cpu1.txt &
    w1=$!
    /bin/gpio-trace lines $base $1 $2 >/tmp/$2.txt
    wait $w0 $w1
    cat /tmp/$2.txt /tmp/$2-cpu0.txt /tmp/$2-cpu1.txt
}
/bin/lightorgan receive --bind 127.0.0.1 --port 8182 --output gpio --chip lightorgan-sim 2>/tmp/gpio.log &
receiver=$!
sleep 1
echo "VM: gpio lines at start $(lines)"
cat /tmp/tone.raw /tmp/tone.raw /tmp/tone.raw /tmp/tone.raw | /bin/lightorgan send --host 127.0.0.1 --input - --rate 48000 --port 8182 --quiet &
sender=$!
sleep 1.5
# The lines from the kernel side for 6 s while the tone plays, by gpio-trace at nice 19 (the test's own
# load must not starve the receiver's PWM thread), with a watcher on each vCPU: a guest starved by a busy
# host (TCG) stalls, and the host judges the PWM only over periods where nothing stalled.
trace 6 duty
echo "VM: gpio receiver log: $(grep -v '^$' /tmp/gpio.log | tail -3 | tr '\n' '|')"
# The same PWM beside two CPU hogs (a busy Pi: the page, a strip, a compile), seen by the kernel itself: its
# gpio_value event stamps every line write as the receiver makes it (CLOCK_MONOTONIC), so no sampler of ours
# competes with the hogs. Its timer events tell the emulator's part: a PWM thread's sleep whose timer fired over
# 0.5 ms after it was due (QEMU's timers run on a host thread that two busy vCPUs and the host's load delay) is a
# gap, as the sampler's are. "VM: trace loaded START END WRITES EVENT..." in gpio-trace's format (START and END
# the markers written around it), and the watchers' stalls as above.
# (The trace's events were enabled at the start.) "VM: loaded at …" says how far it came: a guest that stops
# here shows its last one (and the host's sysrq dump of the vCPUs, support/kernel_vm.py).
gpiobase=$(for chip in /sys/class/gpio/gpiochip*; do [ "$(cat $chip/label)" = lightorgan-sim ] && cat $chip/base; done)
hog() { while :; do :; done; }
echo "VM: loaded at hogs"
hog & hog1=$!; hog & hog2=$!
sleep 1
initial=$(lines | tr -d ' ')
echo "VM: loaded at trace on"
echo 1 >$tracing/tracing_on; echo lightorgan-start >$tracing/trace_marker
/bin/gpio-trace watch 0 6 loaded-cpu0 >/tmp/loaded-cpu0.txt & w0=$!
/bin/gpio-trace watch 1 6 loaded-cpu1 >/tmp/loaded-cpu1.txt & w1=$!
wait $w0 $w1
echo lightorgan-end >$tracing/trace_marker; echo 0 >$tracing/tracing_on
echo "VM: loaded at trace off"
kill $hog1 $hog2
echo "VM: loaded trace base ${gpiobase:-none}, $(grep -c gpio_value $tracing/trace) writes traced, $(grep -c 'lost' $tracing/trace) losses, hogs $(cat /proc/loadavg)"
awk -v base="$gpiobase" -v state="$initial" '
    # "37.094553:" is 37094553 µs (joined as text: busybox awk reads "094553" as octal).
    function micros(stamp) { sub(":", "", stamp); split(stamp, part, "."); return (part[1] part[2]) + 0 }
    { delete field; for (i = 2; i <= NF; i++) { if ($i ~ /^[a-z_]+:$/ && !what) { what = $i; at = micros($(i - 1)) }
                                                if (split($i, pair, "=") == 2) field[pair[1]] = pair[2] } }
    what == "tracing_mark_write:" && $NF == "lightorgan-start" { start = at }
    what == "tracing_mark_write:" && $NF == "lightorgan-end" { end = at }
    # The PWM thread going to sleep, and a timer firing: late when due over 500 µs before (ns in both).
    what == "hrtimer_start:" && /^ *lightorgan pwm-/ { due[field["hrtimer"]] = field["softexpires"] }
    what == "hrtimer_expire_entry:" && (field["hrtimer"] in due) {
        late = field["now"] - due[field["hrtimer"]]
        from = int(due[field["hrtimer"]] / 1000) - start
        if (start && from >= 0 && late > 500000) { gaps = gaps " " from "!" int(late / 1000); lateTimers++ }
        delete due[field["hrtimer"]]
    }
    what == "gpio_value:" && start && $(NF - 1) == "set" {
        line = $(NF - 2) - base
        index_ = line == 5 ? 1 : line == 6 ? 2 : line == 13 ? 3 : 0
        if (index_) {
            writes++
            changed = substr(state, 1, index_ - 1) $NF substr(state, index_ + 1)
            if (changed != state) { state = changed; events = events " " (at - start) "=" state }
        }
    }
    { what = "" }
    END { print "VM: trace loaded " start, end, writes + 0, "0=" state0 events gaps; print "VM: loaded late timers " lateTimers + 0 }
' state0="$initial" $tracing/trace
cat /tmp/loaded-cpu0.txt /tmp/loaded-cpu1.txt
# Receiver cost while driving 3 lines at 100 frames/s (under emulation: CPU time is inflated): the demo
# groove lights all three bands at changing levels, the PWM's worst case (up to 4 writes a period).
kill -TERM $sender; sleep 0.3
/bin/lightorgan send --host 127.0.0.1 --input demo --port 8182 --quiet &
sender=$!
sleep 1.5
echo "VM: gpio receiver cpu ticks $(ticks $receiver 3) rss $(grep VmRSS /proc/$receiver/status) $(grep Private_Dirty /proc/$receiver/smaps_rollup)"
# A sender that freezes (connection open, no frames): lamps off within receiver.timeout (1 s).
kill -STOP $sender; sleep 1.6
echo "VM: gpio lines after a frozen sender $(lines)"
kill -KILL $sender; sleep 0.3
echo "VM: gpio lines after the sender stopped $(lines)"
# Dark lamps, no sender: the PWM thread sleeps until the duties change (no 200 Hz wake-ups).
echo "VM: gpio idle receiver cpu ticks $(ticks $receiver 2)"
/bin/lightorgan receive --output gpio --chip nosuchchip --port 8183 --quiet 2>/tmp/missing.log
echo "VM: gpio missing chip $? $(cat /tmp/missing.log)"
/bin/lightorgan receive --output gpio --chip lightorgan-sim --port 8184 --quiet 2>/tmp/busy.log
echo "VM: gpio busy line $? $(cat /tmp/busy.log)"
/bin/lightorgan send --host 127.0.0.1 --input - --rate 48000 --port 8182 --quiet </tmp/tone.raw &
sender=$!
sleep 1.5
echo "VM: gpio lines while lit, on of 50 readings $(sample 50)"
kill -TERM $receiver; sleep 0.7
echo "VM: gpio lines after SIGTERM $(lines)"
kill -TERM $sender
echo "VM: gpio receiver $(grep -o 'GPIO: .*' /tmp/gpio.log | head -n 1)"
LIGHTORGAN_RECEIVER_MODE=onoff /bin/lightorgan receive --bind 127.0.0.1 --port 8185 --output gpio --chip lightorgan-sim --quiet &
receiver=$!
sleep 1
# 18 s of tone: the trace must end before the tone does (its end turns the lamps off, as it should).
cat /tmp/tone.raw /tmp/tone.raw /tmp/tone.raw | /bin/lightorgan send --host 127.0.0.1 --input - --rate 48000 --port 8185 --quiet &
sender=$!
sleep 1.5
trace 4 onoff
kill -TERM $sender $receiver; sleep 0.7
echo "VM: gpio lines after onoff $(lines)"
# onoff hysteresis from the kernel side: bass levels 200, 110, 90, 110, 130 (threshold 128, hysteresis 32)
# must give on, still on, off, still off, on; raw frames as a 2016 client would send them. Each step is
# sent every 50 ms until the mid line, a marker that flips between 255 and 0 from step to step, shows the
# step was applied; then the lines are read again (the bass line is read before the mid line). Order, not
# timing: a busy emulator only makes it slower. A guest the host stalls for more than a second between two
# frames would let receiver.timeout turn the lamps off (and so forget the hysteresis' state): 30 s here.
LIGHTORGAN_RECEIVER_MODE=onoff /bin/lightorgan receive --bind 127.0.0.1 --port 8186 --output gpio --chip lightorgan-sim --timeout 30 --quiet &
receiver=$!
sleep 1
mkfifo /tmp/feed
nc 127.0.0.1 8186 </tmp/feed &
feeder=$!
exec 3>/tmp/feed
hold() {  # $1: the frame (printf escapes), $2: the mid line once it is applied
    tries=0
    while [ $tries -lt 200 ]; do
        printf "$1" >&3; sleep 0.05
        set -- "$1" "$2" $(lines)
        if [ "$4" = "$2" ]; then lines; return; fi
        tries=$((tries + 1))
    done
    echo "never applied"
}
s1=$(hold '\310\377\000' 1); s2=$(hold '\156\000\000' 0); s3=$(hold '\132\377\000' 1); s4=$(hold '\156\000\000' 0)
s5=$(hold '\202\377\000' 1)
exec 3>&-
echo "VM: onoff hysteresis $s1|$s2|$s3|$s4|$s5"
kill $feeder 2>/dev/null
sleep 0.5; kill -TERM $receiver; sleep 0.5
/bin/lightorgan test-leds --chip lightorgan-sim --step 0.4 --quiet >/tmp/leds.txt 2>&1 &
previous=""; states=""; i=0
while [ $i -lt 40 ]; do
    state="$(lines)"; [ "$state" != "$previous" ] && states="$states|$state"; previous=$state; sleep 0.08; i=$((i + 1))
done
echo "VM: test-leds states $states"
echo "VM: test-leds after $(lines) said $(head -n 1 /tmp/leds.txt | tr -d '\n') / $(tail -n 1 /tmp/leds.txt)"
# The Bluetooth speaker, when the initramfs holds it (support/bluetooth_guest.py): "VM: bt ..." lines.
[ -d /bt ] && sh /bin/bluetooth.sh
echo "VM: done"
sync
poweroff -f
