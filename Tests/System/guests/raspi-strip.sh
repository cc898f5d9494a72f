#!/bin/sh
# /strip-init of the emulated Raspberry Pi 3 or 4 (Tests/System/test_strip_on_the_pi.py), run by busybox: an LED
# strip on SPI0 through spidev and the kernel's spi-bcm2835 driver into QEMU's BCM2835 SPI model, whose register
# writes QEMU traces to a file on the host. The host decodes the bytes the driver put in the FIFO; here the guest
# marks each step with a transfer of its own ("MARK:name", ASCII) and prints "PI: ..." lines for the test to judge.
# First the route itself (busybox writing known bytes: spidev takes a plain write() as one transfer), then the
# packaged receiver with a strip. Two boots run it (support/raspberry_pi.py, Boots): after guests/raspi-init.sh's
# GPIO steps, the route and the receiver's strip with spidev's default transfer limit; booted as itself with
# lightorgan.cost (and QEMU's -icount) and spidev.bufsiz above 4096, the large frames, then the cost benchmark.
if [ ! -e /proc/self ]; then  # /init itself: not run after raspi-init.sh, which did this
    /usr/bin/busybox --install -s /usr/bin
    mount -t proc proc /proc; mount -t sysfs sys /sys; mount -t devtmpfs dev /dev
    mount -t debugfs debugfs /sys/kernel/debug
    ip link set lo up
    echo "PI: kernel $(uname -r) on $(tr -d '\0' </proc/device-tree/model)"
    echo "PI: booted after $(cut -d' ' -f1 /proc/uptime) s"
fi
export HOME=/tmp
cd /tmp
echo "PI: strip steps from $(cut -d' ' -f1 /proc/uptime) s"

# The modules as modprobe would load them (it passes the command line's MODULE.PARAMETER=VALUE; insmod does not):
# spidev is built into Debian's kernel, spi-bcm2835 is a module.
load() {
    [ -e "/lib/modules/$1.ko" ] || return 0
    insmod "/lib/modules/$1.ko" $(tr ' ' '\n' </proc/cmdline | sed -n "s/^$(echo "$1" | sed 's/[-_]/[-_]/g')\.//p")
}
load spidev; load spi-bcm2835
i=0; while [ $i -lt 40 ] && [ ! -c /dev/spidev0.0 ]; do sleep 0.25; i=$((i + 1)); done
spi=/dev/spidev0.0
echo "PI: spidev $(ls -l $spi 2>&1 | tr -s ' ') bufsiz $(cat /sys/module/spidev/parameters/bufsiz)"
controller=$(ls /sys/bus/platform/drivers/spi-bcm2835 2>/dev/null | grep '\.spi$' | head -n 1)
echo "PI: spi controller ${controller:-none} polling_limit_us $(cat /sys/module/spi_bcm2835/parameters/polling_limit_us 2>/dev/null)"
echo "PI: spi driver said $(dmesg | grep -o 'spi-bcm2835 .*' | head -n 2 | tr '\n' '/')"
# The core clock the kernel's clock driver gave spi-bcm2835: the clock whose consumer it is, in clk_summary
# ("clock enable prepare protect rate accuracy phase duty hw-enable consumer id"; more consumers on lines of two).
echo "PI: spi core clock $(awk -v dev="$controller" 'NF >= 10 { name = $1; rate = $5 } { for (i = 1; i <= NF; i++) if ($i == dev) print name, rate }' /sys/kernel/debug/clk/clk_summary | head -n 1)"
modes() { cat /sys/kernel/debug/spi-bcm2835-*/count_transfer_polling /sys/kernel/debug/spi-bcm2835-*/count_transfer_irq \
    /sys/kernel/debug/spi-bcm2835-*/count_transfer_dma 2>/dev/null | tr '\n' ' '; }

echo "PI: lightorgan $(/usr/bin/lightorgan --version 2>&1 | head -n 1), receive --help names $(/usr/bin/lightorgan receive --help 2>&1 | grep -c -- '--strip-') strip options"

mark() { printf 'MARK:%s' "$1" >$spi; }
# frames BASS MID TREBLE SECONDS PORT: raw 3-byte frames every 50 ms, then the connection closes (as raspi-init.sh).
frames() {
    octal=$(printf '\\%03o\\%03o\\%03o' "$1" "$2" "$3")
    count=$(($4 * 20))
    (i=0; while [ $i -lt $count ]; do printf "$octal"; sleep 0.05; i=$((i + 1)); done) | nc 127.0.0.1 "$5"
}
# receiver NAME PORT FLAGS…: the packaged receiver in the background ($receiver), up to 30 s to listen; run by
# $pin when set (taskset).
receiver() {
    name=$1 port=$2; shift 2
    $pin /usr/bin/lightorgan receive --port "$port" "$@" 2>"/tmp/$name.log" &
    receiver=$!
    i=0; while [ $i -lt 60 ] && kill -0 $receiver 2>/dev/null && ! grep -q "listening on " "/tmp/$name.log"; do
        sleep 0.5; i=$((i + 1)); done
    grep -q "listening on " "/tmp/$name.log" && echo "PI: $name listening" \
        || echo "PI: $name not listening, said $(grep -v '^$' "/tmp/$name.log" | head -n 1)"
}
# fails NAME COMMAND…: a command that must end with an error within 20 s: "PI: NAME status S lines N said LINE"
# (N: the lines it wrote to stderr, LINE: the first).
fails() {
    name=$1; shift
    "$@" >/tmp/$name.out 2>/tmp/$name.err & pid=$!
    i=0; while [ $i -lt 40 ] && kill -0 $pid 2>/dev/null; do sleep 0.5; i=$((i + 1)); done
    kill -0 $pid 2>/dev/null && { kill -TERM $pid; echo "PI: $name still running after 20 s"; }
    wait $pid; status=$?
    echo "PI: $name status $status lines $(grep -c . /tmp/$name.err) said $(grep -v '^$' /tmp/$name.err | head -n 1)"
}
# spi_counts: the SPI controller's transfers, bytes sent and transfers of 2048 to 4095 bytes so far (the kernel's
# statistics of spi0). The three files are read one after the other while frames go out (a transfer that ended
# in between made them disagree by one frame): read until two readings in a row agree (or 50 times).
spi_counts() {
    statistics=/sys/class/spi_master/spi0/statistics
    last="" tries=0
    while [ $tries -lt 50 ]; do
        counts=$(cat $statistics/transfers $statistics/bytes_tx "$statistics/transfer_bytes_histo_2048-4095" | tr '\n' ' ')
        [ "$counts" = "$last" ] && break
        last=$counts tries=$((tries + 1))
    done
    echo "$counts"
}
# cost PID LABEL: "PI: LABEL cpu user U system S over T0 T1 spi transfers N bytes B of-2048-4095 W": PID's CPU
# time (clock ticks, 1/100 s) over 30 s of guest time, user (lightorgan's own code) and system (the kernel's, the
# SPI driver's FIFO feeding included) apart, and what the SPI controller sent meanwhile.
cost() {
    pid=$1 label=$2
    set -- $(awk '{ print $14, $15 }' "/proc/$pid/stat") $(spi_counts); read t0 _ </proc/uptime
    user=$1 system=$2 transfers=$3 bytes=$4 whole=$5
    sleep 30
    set -- $(awk '{ print $14, $15 }' "/proc/$pid/stat") $(spi_counts); read t1 _ </proc/uptime
    echo "PI: $label cpu user $(($1 - user)) system $(($2 - system)) over $t0 $t1 spi transfers $(($3 - transfers))" \
        "bytes $(($4 - bytes)) of-2048-4095 $(($5 - whole))"
}
# threads PID: "TID:NAME USER SYSTEM" of each of PID's threads (clock ticks; spaces in NAME as _).
threads() {
    for task in /proc/$1/task/*; do
        echo "${task##*/}:$(tr ' ' _ <$task/comm) $(sed 's/.*) //' $task/stat | awk '{ print $12, $13 }')"
    done | tr '\n' ','
}
strip="--strip-effect segments --strip-brightness 100 --strip-gamma 1"

if [ "$(cat /sys/module/spidev/parameters/bufsiz)" -gt 4096 ]; then
    # -- booted with spidev.bufsiz: a 600-pixel frame goes out whole ------------------------------
    dd if=/dev/zero of=/tmp/5000.bin bs=5000 count=1 2>/dev/null
    mark route-5000; dd if=/tmp/5000.bin of=$spi bs=5000 count=1 2>/tmp/dd.err
    echo "PI: route 5000 bytes status $? $(grep -o 'error.*' /tmp/dd.err)"
    mark large
    receiver large 8181 --output stdout --strip-device $spi $strip --strip-pixels 600
    frames 255 0 255 2 8181; sleep 0.6
    kill -TERM $receiver; wait $receiver
    echo "PI: large receiver status $? said $(grep -v '^$' /tmp/large.log | head -n 1)"
    # What the kernel cut: a transfer the SPI core timed out (the guest starved by its host) ends early.
    echo "PI: large spi timedout $(cat /sys/class/spi_master/spi0/statistics/timedout) errors $(cat /sys/class/spi_master/spi0/statistics/errors) output-failed $(grep -c 'output failed' /tmp/large.log)"
    mark large-end
    # The host stops QEMU's trace of the SPI block here: what follows (the cost benchmark) is counted from the
    # kernel's own SPI statistics, not decoded (a trace of every FIFO byte at 100 frames a second: 2 GB, and a
    # third more of QEMU's time).
    echo "PI: trace may stop"
fi
if grep -q 'lightorgan.cost' /proc/cmdline; then
    # -- what the strip costs: the receiver with its GPIO lamps alone, then with 300 pixels on SPI beside them, each
    # fed the demo groove at 100 frames/s by the packaged sender (the level response: every lamp moves all the time).
    # Booted for this alone, with QEMU counting instructions (-icount): CPU time is then the guest's instructions,
    # whatever the host does beside it.
    # Under -icount the vCPUs take turns on one host thread while the guest's clock counts all their instructions:
    # a thread on one busy vCPU is charged the time another busy vCPU ran. So the receiver, its sender and the SPI
    # controller's interrupt share CPU 1, and the others stay idle (halted, no instructions). CPU 1 is nohz_full
    # (the kernel's command line): there the kernel counts user and system time at each entry and exit, where a
    # tick's sample would charge an interrupt that hit user code (the SPI FIFO's, thousands a second) as user time.
    pin="taskset 0x2"
    irq=$(awk '/spi/ { sub(":", "", $1); print $1; exit }' /proc/interrupts)
    [ -n "$irq" ] && echo 2 >/proc/irq/$irq/smp_affinity 2>/dev/null
    echo "PI: cost pinned to CPU 1 (nohz_full $(cat /sys/devices/system/cpu/nohz_full)), spi interrupt ${irq:-none} affinity $(cat /proc/irq/$irq/smp_affinity 2>/dev/null)"
    # The lamps' PWM in each run, from the kernel's own timestamps of every line write (the gpio_value event, in
    # the guest's clock, which counts instructions): "PI: cost-RUN pwm GPIO PERIODS H:N ..." for each line, N
    # periods (rising edge to rising edge) of H quarter milliseconds (H 80: 20 ms or longer).
    tracing=/sys/kernel/tracing
    mount -t tracefs tracefs $tracing
    echo mono >$tracing/trace_clock; echo 8192 >$tracing/buffer_size_kb; echo 0 >$tracing/tracing_on
    echo 1 >$tracing/events/gpio/gpio_value/enable || echo "PI: cost gpio_value event: $(ls $tracing/events/gpio 2>&1)"
    pwm() {
        awk -v run="$1" '
            # "37.094553:" is 37094553 µs (joined as text: busybox awk reads "094553" as octal).
            function micros(stamp) { sub(":", "", stamp); split(stamp, part, "."); return (part[1] part[2]) + 0 }
            /gpio_value:/ && !first { first = $0 }
            NF > 4 && $(NF - 3) == "gpio_value:" && $(NF - 1) == "set" {
                line = $(NF - 2); value = $NF
                if (value == 1 && last[line] == 0) {
                    for (i = 1; i <= NF; i++) if ($(i + 1) == "gpio_value:") at = micros($i)
                    if (line in rose) { bucket = int((at - rose[line]) / 250); if (bucket > 80) bucket = 80; count[line "," bucket]++; periods[line]++; recorded++ }
                    rose[line] = at
                }
                last[line] = value
            }
            END { if (!recorded) print "PI: cost-" run " pwm none: " NR " trace lines, the first " first
                  for (line in periods) { text = ""; for (b = 0; b <= 80; b++) if ((line "," b) in count) text = text " " b ":" count[line "," b]
                                          print "PI: cost-" run " pwm " line " " periods[line] text } }' $tracing/trace
    }
    for run in lamps strip; do
        [ $run = lamps ] && extra="" || extra="--strip-device $spi --strip-pixels 300 --strip-effect scroll"
        receiver cost-$run 8181 --output gpio $extra
        LIGHTORGAN_ANALYSIS_RESPONSE=level $pin /usr/bin/lightorgan send --host 127.0.0.1 --port 8181 --input demo --fps 100 --quiet &
        sender=$!
        sleep 3
        before=$(threads $receiver)
        echo >$tracing/trace; echo 1 >$tracing/tracing_on
        mark cost-$run; cost $receiver "cost $run"; after=$(threads $receiver); mark cost-$run-end
        echo 0 >$tracing/tracing_on; pwm $run
        echo "PI: cost-$run threads before $before after $after"
        echo "PI: cost-$run interrupts $(grep -E 'spi|arch_timer' /proc/interrupts | tr -s ' ' | tr '\n' '/')"
        kill -TERM $sender; wait $sender
        kill -TERM $receiver; wait $receiver
    done
    # -- the Pi's own sound beside the strip, no sender: a FIFO written 0.105 s of audio every 0.1 s or so, as
    # librespot writes (noise, S16LE 44.1 kHz stereo: the analysis costs the same whatever it hears), analysed,
    # played on ALSA's null device (timed by the receiver's clock) and shown on the lamps and 300 pixels.
    head -c 1852000 /dev/urandom >/tmp/noise.raw
    receiver cost-own 8181 --output gpio --strip-device $spi --strip-pixels 300 --strip-effect scroll \
        --sound pipe:/tmp/own.fifo --play null
    (i=0; while [ $i -lt 400 ]; do dd if=/tmp/noise.raw bs=18520 count=1 skip=$((i % 100)) 2>/dev/null; sleep 0.1
        i=$((i + 1)); done) >/tmp/own.fifo &
    writer=$!
    sleep 3
    before=$(threads $receiver)
    mark cost-own; cost $receiver "cost own"; after=$(threads $receiver); mark cost-own-end
    echo "PI: cost-own threads before $before after $after"
    echo "PI: cost-own said $(grep -c 'pipe /tmp/own.fifo: playing' /tmp/cost-own.log) streams"
    kill $writer; wait $writer
    kill -TERM $receiver; wait $receiver
    # -- a room of a Snapcast house beside the strip: Debian's snapserver here, its pipe written as above, and the
    # receiver joined to it through its snapclient child (receiver.sound: snapcast), played on ALSA's null device.
    # The server and the writer share CPU 1 as the sender does in the strip run; the cost is the receiver's and
    # its snapclient's, "PI: cost snap cpu … child user U system S".
    mkfifo /tmp/snapfifo; mkdir -p /tmp/snapserver
    printf '%s\n' "[server]" "datadir = /tmp/snapserver" "[http]" "enabled = false" "[tcp]" "bind_to_address = 127.0.0.1" \
        "[stream]" "bind_to_address = 127.0.0.1" "source = pipe:///tmp/snapfifo?name=house&mode=read" \
        "sampleformat = 44100:16:2" "codec = pcm" "buffer = 1000" >/tmp/snapserver.conf
    $pin snapserver -c /tmp/snapserver.conf >/tmp/snapserver.log 2>&1 &
    server=$!
    $pin sh -c 'i=0; while [ $i -lt 500 ]; do dd if=/tmp/noise.raw bs=18520 count=1 skip=$((i % 100)) 2>/dev/null
        sleep 0.1; i=$((i + 1)); done' >/tmp/snapfifo &
    writer=$!
    receiver cost-snap 8181 --output gpio --strip-device $spi --strip-pixels 300 --strip-effect scroll \
        --sound snapcast://127.0.0.1:1704 --play null --name Kitchen
    i=0; while [ $i -lt 60 ] && ! grep -q 'Snapcast: playing' /tmp/cost-snap.log; do sleep 0.5; i=$((i + 1)); done
    sleep 3
    client=$(for stat in /proc/[0-9]*/stat; do awk -v parent=$receiver '$4 == parent && $2 == "(snapclient)" { print $1 }' $stat; done 2>/dev/null | head -n 1)
    if [ -n "$client" ]; then
        set -- $(awk '{ print $14, $15 }' /proc/$client/stat)
        before=$(threads $receiver)
        mark cost-snap; cost $receiver "cost snap child-before $1 $2"; after=$(threads $receiver); mark cost-snap-end
        echo "PI: cost-snap child after $(awk '{ print $14, $15 }' /proc/$client/stat)"
        echo "PI: cost-snap threads before $before after $after"
    else
        echo "PI: cost-snap no snapclient child: $(tail -n 5 /tmp/cost-snap.log | tr '\n' '/') server: $(tail -n 3 /tmp/snapserver.log | tr '\n' '/')"
    fi
    echo "PI: cost-snap said $(grep -c 'Snapcast: playing' /tmp/cost-snap.log) streams"
    kill $writer; kill -TERM $receiver; wait $receiver; kill -TERM $server; wait $server; wait $writer
    pin=""
fi
if [ "$(cat /sys/module/spidev/parameters/bufsiz)" -le 4096 ]; then
    # -- the route: busybox's bytes come back exactly -------------------------------------------
    mark route-3; printf '\001\002\003' >$spi; echo "PI: route 3 bytes status $?"
    i=0; : >/tmp/384.bin; while [ $i -lt 384 ]; do printf "\\$(printf %03o $((i % 256)))" >>/tmp/384.bin; i=$((i + 1)); done
    mark route-384; dd if=/tmp/384.bin of=$spi bs=384 count=1 2>/tmp/dd.err; echo "PI: route 384 bytes status $?"
    # Four pixels, red, green, blue, (200, 100, 50), encoded by hand at 3 SPI bits an LED bit (G, R, B), then 120
    # zero bytes: the reset at the device's 3 MHz.
    printf '\222\111\044\333\155\266\222\111\044\333\155\266\222\111\044\222\111\044\222\111\044\222\111\044\333\155\266\233\111\244\332\115\044\223\151\064' >/tmp/pixels.bin
    dd if=/dev/zero bs=120 count=1 >>/tmp/pixels.bin 2>/dev/null
    mark route-pixels; dd if=/tmp/pixels.bin of=$spi bs=156 count=1 2>/tmp/dd.err; echo "PI: route pixels status $?"
    dd if=/dev/zero of=/tmp/5000.bin bs=5000 count=1 2>/dev/null
    mark route-5000; dd if=/tmp/5000.bin of=$spi bs=5000 count=1 2>/tmp/dd.err
    echo "PI: route 5000 bytes status $? $(grep -o 'error.*' /tmp/dd.err)"
    echo "PI: spi-bcm2835 transfers after the route polling irq dma $(modes)"

    # -- the receiver's strip beside the GPIO lamps ----------------------------------------------
    mark receiver-start
    receiver strip-receiver 8181 --config /etc/lightorgan/lightorgan.yaml --output gpio --strip-device $spi $strip --strip-pixels 9
    echo "PI: strip receiver said $(grep -i -m 1 'strip' /tmp/strip-receiver.log)"
    mark full-255-0-255; frames 255 0 255 2 8181; sleep 0.6
    mark levels-200-100-50; frames 200 100 50 2 8181; sleep 0.6
    # receiver.timeout (1 s): the sender stays connected but sends nothing after its frames.
    mark timeout; (printf '\000\377\000'; sleep 3) | nc 127.0.0.1 8181 & feeder=$!
    sleep 2.2; mark timeout-after-2.2s; wait $feeder
    mark sigterm; frames 0 0 255 4 8181 & feeder=$!
    sleep 1.5; kill -TERM $receiver; sleep 1.5
    if kill -0 $receiver 2>/dev/null; then echo "PI: strip receiver still running after SIGTERM"
    else wait $receiver; echo "PI: strip receiver ended after SIGTERM, status $?"; fi
    mark after-sigterm; wait $feeder

    mark test-leds
    /usr/bin/lightorgan test-leds --strip-device $spi --strip-pixels 9 --strip-brightness 100 --step 0.5 >/tmp/leds.out 2>/tmp/leds.err
    echo "PI: strip test-leds status $? said $(tail -n 1 /tmp/leds.err)"
    mark test-leds-end

    # -- the page's wiring check of the strip, over the page's WebSocket (openssl s_client; the client's frames
    # masked with a zero key), read back from the SPI bytes between the marks --------------------------------
    mark page-check
    receiver page-strip 8181 --output gpio --strip-device $spi $strip --strip-pixels 9
    key=$(grep -o '#key=[A-Za-z0-9_-]*' /tmp/page-strip.log | head -n 1 | cut -d= -f2)
    # ws TEXT: one masked WebSocket text frame (payload under 126 bytes).
    ws() { printf "\\201\\$(printf %03o $((128 + ${#1})))\\000\\000\\000\\000%s" "$1"; }
    (printf 'GET /live HTTP/1.1\r\nHost: 127.0.0.1:8443\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\nOrigin: https://127.0.0.1:8443\r\n\r\n'
        sleep 1; ws "{\"type\":\"hello\",\"key\":\"$key\"}"; sleep 0.5; ws '{"type":"check","id":1,"strip":true}'; sleep 7) \
        | openssl s_client -quiet -connect 127.0.0.1:8443 >/tmp/page-check.bin 2>/tmp/page-check.err &
    # s_client -quiet ignores the end of its input: it is stopped once the check has had its time.
    page=$!; sleep 10; kill $page 2>/dev/null; wait $page 2>/dev/null
    echo "PI: page check key ${#key} chars, answered $(grep -ao '{[^{}]*"type":"check"[^{}]*}' /tmp/page-check.bin | head -n 1), status checkingStrip $(grep -o '"checkingStrip":true' /tmp/page-check.bin | head -n 1)"
    kill -TERM $receiver; wait $receiver
    mark page-check-end

    # -- every fault in one line, and the device never created -----------------------------------
    mark errors
    fails no-device /usr/bin/lightorgan receive --quiet --output stdout --port 8191 $strip --strip-device /tmp/spidev0.1
    [ -e /tmp/spidev0.1 ] && echo "PI: no-device created /tmp/spidev0.1" || echo "PI: no-device created nothing"
    : >/tmp/plain
    fails plain-file /usr/bin/lightorgan receive --quiet --output stdout --port 8192 $strip --strip-device /tmp/plain
    echo "PI: plain-file left $(stat -c '%F %s' /tmp/plain)"
    fails no-permission su -s /bin/sh nobody -c "/usr/bin/lightorgan receive --quiet --output stdout --port 8193 --strip-device $spi $strip"
    mark too-large
    receiver too-large 8194 --output stdout --strip-device $spi $strip --strip-pixels 600
    kill -0 $receiver 2>/dev/null && { frames 255 0 255 2 8194; sleep 1; }
    kill -0 $receiver 2>/dev/null && { echo "PI: too-large still running"; kill -TERM $receiver; }
    wait $receiver
    # Its log has other lines before the error when it fails at the first frame: the line naming the fix, else
    # the last one.
    echo "PI: too-large status $? said $(grep -m 1 'bufsiz' /tmp/too-large.log || grep -v '^$' /tmp/too-large.log | tail -n 1)"
    mark too-large-end
fi
echo "PI: spi-bcm2835 transfers polling irq dma $(modes)"
echo "PI: done"
sync
# Linux cannot power a raspi3b or raspi4b off: the host stops QEMU on "PI: done".
while true; do sleep 60; done
