# Private sound servers for scripts/test-monitor and scripts/bench-sender (sourced). They run in the
# caller's XDG_RUNTIME_DIR, log into it, and their PIDs are appended to sound_server_pids.
sound_server_pids=()
# What a desktop gives its sound server (RTKit raises PulseAudio and PipeWire to nice -11 or real-time): without
# it, a busy test machine starves the server and the audio itself breaks up. The test's own players and
# reference recorders get it too; lightorgan raises its own threads (DedicatedThread.setNice).
desktop_nice=(nice -n -11)

# start_pipewire: a session bus, PipeWire, WirePlumber (the session manager: links, the default sink;
# it needs the bus) and pipewire-pulse (which pactl and parec talk to); returns once pactl gets an
# answer. WirePlumber and pipewire-pulse give up at once when PipeWire's socket is not there yet, so
# they start after it. Exports DBUS_SESSION_BUS_ADDRESS.
start_pipewire() {
    local run=$XDG_RUNTIME_DIR
    dbus-daemon --session --address="unix:path=$run/bus" --nofork --nopidfile >"$run/dbus.log" 2>&1 &
    sound_server_pids+=($!)
    export DBUS_SESSION_BUS_ADDRESS=unix:path=$run/bus
    for _ in $(seq 50); do [[ -S $run/bus ]] && break; sleep 0.1; done
    "${desktop_nice[@]}" pipewire >"$run/pipewire.log" 2>&1 &
    sound_server_pids+=($!)
    for _ in $(seq 50); do [[ -S $run/pipewire-0 ]] && break; sleep 0.1; done
    for daemon in wireplumber pipewire-pulse; do
        "${desktop_nice[@]}" "$daemon" >"$run/$daemon.log" 2>&1 &
        sound_server_pids+=($!)
    done
    for _ in $(seq 50); do pactl info >/dev/null 2>&1 && break; sleep 0.1; done
}

# set_default_sink SINK: sets it until the server has taken it (WirePlumber, which keeps the default
# under PipeWire, may still be starting); fails after 5 s.
set_default_sink() {
    for _ in $(seq 50); do
        pactl set-default-sink "$1" 2>/dev/null && [[ $(pactl get-default-sink 2>/dev/null) == "$1" ]] && return 0
        sleep 0.1
    done
    pactl set-default-sink "$1"
}
