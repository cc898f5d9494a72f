#!/bin/bash
# Run in a throw-away copy of a plain Debian arm64 root (bookworm or trixie) by
# Tests/System/test_raspberry_pi.py, through qemu-user, with no systemd running and no network (only lo):
# `apt install ./lightorgan_*_arm64.deb` from the package lists and .debs fetched before the tests, then the
# installed lightorgan used. Prints "ROOT: ..." lines for the test to judge.
# Two steps, one call each: `debian-root.sh install` (apt and what it made: nothing timed, run beside the tests at
# idle priority), then `debian-root.sh run` (the installed sender and receiver, in real time).
set -u
export DEBIAN_FRONTEND=noninteractive

install() {
    deb=$(ls /tmp/lightorgan_*_arm64.deb)
    # Without the Recommends (avahi-daemon and D-Bus, whose maintainer scripts are slow under qemu-user): the
    # Depends are what must resolve.
    apt-get install -y -q --no-install-recommends "$deb" >>/tmp/apt.log 2>&1
    echo "ROOT: apt status $? glibc $(dpkg-query -W -f='${Version}' libc6)"
    tail -n 3 /tmp/apt.log | sed 's/^/ROOT: apt said /'
    echo "ROOT: dpkg $(dpkg-query -W -f='${Status} ${Version}' lightorgan)"
    echo "ROOT: user $(id lightorgan 2>&1)"
    echo "ROOT: conffile $(dpkg-query -W -f='${Conffiles}' lightorgan | awk 'NF { print $1 }') output $(awk '$1 == "output:" { print $2 }' /etc/lightorgan/lightorgan.yaml)"
    echo "ROOT: unit $(grep ^ExecStart= /usr/lib/systemd/system/lightorgan-receiver.service)"
    echo "ROOT: help $(lightorgan --help 2>&1 | head -n 1)"
}

run() {
    # The installed receiver fed by the installed sender over loopback, and a 2016 client's raw frame.
    lightorgan receive --bind 127.0.0.1 --port 28181 --output stdout --quiet >/tmp/frames.txt 2>/tmp/receive.log &
    receiver=$!
    sleep 3
    lightorgan send --host 127.0.0.1 --port 28181 --input demo --quiet 2>/tmp/send.log &
    sender=$!
    # Until 100 frames arrived (1 s of the demo), or 30 s: under qemu-user on a busy machine the sender's start
    # alone can take seconds; that is the emulation, not the code.
    for i in $(seq 60); do [ "$(wc -l </tmp/frames.txt)" -ge 100 ] && break; sleep 0.5; done
    kill -TERM $sender; wait $sender
    sleep 0.5
    exec 3<>/dev/tcp/127.0.0.1/28181; printf '\310\040\377' >&3; sleep 1; exec 3>&-
    sleep 0.5
    kill -TERM $receiver; wait $receiver
    echo "ROOT: receiver status $? frames $(wc -l </tmp/frames.txt) raw frame $(grep -c ' 200 32 255$' /tmp/frames.txt)"
}

case ${1:-} in
    install | run) "$1" ;;
    *) echo "usage: debian-root.sh install|run" >&2; exit 2 ;;
esac
