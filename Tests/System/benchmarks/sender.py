"""What the sender costs a laptop, at 100 frames/s, release build, streaming to a receiver on loopback.

Usage: python Tests/System/benchmarks/sender.py LIGHTORGAN SECONDS FLOOR [MEMORY_RUNS]
       (scripts/bench-sender builds and runs it with the suite's venv)

- CPU share of one core (the scheduler's nanosecond count), wake-ups per frame, resident and private dirty
  memory of `lightorgan send`: from a WAV file, and from the monitor of a real PulseAudio daemon, then of real
  PipeWire (pipewire-pulse, WirePlumber), playing a tone, on a null sink and on a 200 ms tunnel sink (there
  what the sound server and the player spend before and while it records is measured too; the record stream
  is a thread of the sender's own, counted in its CPU). Each after a 3 s warm-up, SECONDS long.
- First the yardsticks: a C loop that only wakes up 100 times a second, and one that also sends a frame each
  time (FLOOR, scripts/lib/sender_floor.c), the least any sender pays on this machine.
- Memory is sampled every 100 ms from the sender's start to its end: the line gives the highest private dirty
  memory seen, and how much of it was anonymous (heap, stacks, relocated data) and file-backed. Then
  MEMORY_RUNS (default 10) WAV runs of 5 s give the peak's min, median and max.

Private dirty memory counts the pages of a file that is not yet written back (a binary just linked, a WAV just
written) in the only process that maps them: the sender's figure then grows with the code it has run (by 0.4
and 1.1 MiB in two runs of a binary copied just before) until the kernel writes the file out (30 s by default).
Everything is synced before measuring.
The sound servers are support/sound_servers.py's, at a desktop's nice -11 (as the tests run them).
"""
import math
import os
import statistics
import struct
import subprocess
import sys
import threading
import time
import wave

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from support import sound_servers  # noqa: E402
from support.processes import bench_folder, Process, context_switches, free_port, memory_mib, run_seconds  # noqa: E402

lightorgan, seconds, floor = sys.argv[1], float(sys.argv[2]), sys.argv[3]
memory_runs = int(sys.argv[4]) if len(sys.argv) > 4 else 10
work = bench_folder("sender")
children = []  # receivers, senders and players, killed at the end (the sound servers stop with their `with`)
# One second holds whole periods of both tones: repeated, it outlasts every measurement a player
# runs through (two at most, each with its baseline).
second = [int(9000 * (math.sin(2 * math.pi * 55 * i / 48000) + 0.5 * math.sin(2 * math.pi * 2000 * i / 48000))) for i in range(48000)]
pcm = b"".join(struct.pack("<hh", v, v) for v in second) * int(7 * seconds + 30)
with wave.open(f"{work}/music.wav", "wb") as out:
    out.setnchannels(2), out.setsampwidth(2), out.setframerate(48000), out.writeframes(pcm)
with open(f"{work}/music.raw", "wb") as out:
    out.write(pcm)
# Written back now, the binary just built as well: pages of a file not yet on disk count as private dirty
# memory of the one process that maps them (the sender maps the WAV file and its own binary).
os.sync()


class MemorySampler:
    """Samples a process's memory every 100 ms on a thread of its own until stopped: `peak` is the sample
    with the most private dirty memory, as (resident, private dirty, of it anonymous) in MiB."""

    def __init__(self, pid):
        self.pid, self.peak, self.samples = pid, (0.0, 0.0, 0.0), 0
        self.stopping = threading.Event()
        self.thread = threading.Thread(target=self.run, daemon=True)
        self.thread.start()

    def run(self):
        while not self.stopping.is_set():
            try:
                rss, dirty = memory_mib(self.pid)
                with open(f"/proc/{self.pid}/smaps_rollup") as rollup:
                    anonymous = next(int(line.split()[1]) for line in rollup if line.startswith("Anonymous:")) / 1024
            except (FileNotFoundError, ProcessLookupError, StopIteration):
                break
            self.samples += 1
            if dirty > self.peak[1]:
                self.peak = (rss, dirty, anonymous)
            self.stopping.wait(0.1)

    def stop(self):
        self.stopping.set()
        self.thread.join()
        return self.peak


def measure(label, *send_arguments, environment=None, helper_name=None, command=None, watch=()):
    """Measures `lightorgan send` with `send_arguments`, or `command(port)` in its place; `watch`
    names other processes (label, pid) whose CPU is measured over the same time, and before the
    sender starts for as long (what the sender adds to them)."""
    def cpu_of(pids):
        return [run_seconds(pid) for pid in pids]
    watched, before = [pid for _, pid in watch], []
    if watch:
        before0 = cpu_of(watched)
        time.sleep(seconds)
        before = [(b - a) / seconds for a, b in zip(before0, cpu_of(watched))]
    port = free_port()
    receiver = Process(work, f"receiver-{label}", [lightorgan, "receive", "--bind", "127.0.0.1", "--port", str(port), "--output",
                                                   "stdout", "--quiet"])
    children.append(receiver.process)
    time.sleep(0.4)
    env = dict(os.environ, **(environment or {}))
    argv = command(port) if command else [lightorgan, "send", "--host", "127.0.0.1", "--port", str(port), "--stats-interval", "0",
                                          *send_arguments]
    sender = subprocess.Popen(argv, stderr=open(f"{work}/sender-{label}.err", "w"), env=env)
    children.append(sender)
    sampler = MemorySampler(sender.pid)
    time.sleep(3)
    helper = None
    if helper_name:
        found = subprocess.run(["pgrep", "-P", str(sender.pid), helper_name], capture_output=True, text=True).stdout.split()
        helper = int(found[0]) if found else None
    frames0 = len(receiver.lines())
    cpu0, switches0 = run_seconds(sender.pid), context_switches(sender.pid)
    helper0 = run_seconds(helper) if helper else 0
    watched0 = cpu_of(watched)
    started = time.monotonic()
    time.sleep(seconds)
    elapsed = time.monotonic() - started
    cpu, switches = run_seconds(sender.pid) - cpu0, context_switches(sender.pid) - switches0
    helper_cpu = run_seconds(helper) - helper0 if helper else None
    during = [(b - a) / elapsed for a, b in zip(watched0, cpu_of(watched))]
    frames = len(receiver.lines()) - frames0
    rss, dirty, anonymous = sampler.stop()
    sender.terminate(), sender.wait()
    receiver.stop()
    rate = f"{switches / max(frames, 1):.2f} wake-ups per frame" if frames else f"{switches / elapsed:.0f} wake-ups/s"
    line = (f"{label}: CPU {100 * cpu / elapsed:.2f} % of one core, {frames / elapsed:.0f} frames/s, "
            f"{rate}, at its peak RSS {rss:.1f} MiB, Private_Dirty {dirty:.1f} MiB ({anonymous:.1f} anonymous)")
    if helper_cpu is not None:
        line += f"; its {helper_name}: CPU {100 * helper_cpu / elapsed:.2f} %"
    for (name, _), was, now in zip(watch, before, during):
        line += f"; {name}: CPU {100 * was:.2f} % before, {100 * now:.2f} % while it records"
    print(line, flush=True)
    return dirty


def play(server, servers):
    """Starts a music player on the default sink of `server`. It asks for 200 ms of buffer, as players
    do; the sound server then runs the sink with as much as the streams on it allow, and a recorder of
    its monitor asking for less makes it wake up more often. Returns what to watch beside the sender."""
    player = subprocess.Popen(["pacat", "--playback", "--raw", "--format=s16le", "--rate=48000", "--channels=2",
                               "--latency-msec=200", f"{work}/music.raw"], env=server.environment())
    children.append(player)
    time.sleep(1)
    return player, [*servers, ("the player", player.pid)]


def monitor_measurements():
    # PulseAudio (support/sound_servers.py: the servers at a desktop's nice -11).
    with sound_servers.pulseaudio(f"{work}/pulse", "module-null-sink sink_name=speakers") as pulse:
        pulse_servers = [("pulseaudio", pulse.pids()["pulseaudio"])]
        player, server_and_player = play(pulse, pulse_servers)
        measure("monitor of a null sink (input auto; virtual: no delay, 10 ms blocks)", environment=pulse.env,
                watch=server_and_player)
        # The same sink with a delay that covers 40 ms blocks: the sink's own buffer grows to match them.
        measure("monitor of a null sink (--delay 30: 40 ms blocks, paced)", "--delay", "30", environment=pulse.env,
                watch=server_and_player)
        # An output with a speaker's latency (a tunnel sink of 200 ms, as a Bluetooth speaker has): the delay
        # covers 40 ms blocks, and the frames are paced by a thread of their own.
        player.kill()
        pulse.load_module("module-tunnel-sink", "sink_name=slow", f"server=unix:{sound_servers.socket_of(pulse)}",
                          "sink=speakers", "latency_msec=200")
        pulse.set_default_sink("slow")
        player, server_and_player = play(pulse, pulse_servers)
        measure("monitor of a 200 ms network sink (delay auto: 40 ms blocks, paced)", environment=pulse.env,
                watch=server_and_player)
        player.kill()
        # The same under PipeWire (pipewire-pulse answers libpulse and pactl; WirePlumber needs a session bus),
        # whose tunnel sink leads to the PulseAudio server above (a tunnel into PipeWire itself hangs).
        with sound_servers.pipewire(f"{work}/pipewire") as pipewire:
            pids = pipewire.pids()
            servers = [(name, pids[name]) for name in ("pipewire", "wireplumber", "pipewire-pulse")]
            pipewire.load_module("module-null-sink", "sink_name=speakers")
            pipewire.set_default_sink("speakers")
            player, server_and_player = play(pipewire, servers)
            measure("PipeWire: monitor of a null sink (input auto; virtual: no delay, 10 ms blocks)",
                    environment=pipewire.env, watch=server_and_player)
            measure("PipeWire: monitor of a null sink (--delay 30: 40 ms blocks, paced)", "--delay", "30",
                    environment=pipewire.env, watch=server_and_player)
            player.kill()
            pipewire.load_module("module-tunnel-sink", "sink_name=slow", f"server=unix:{sound_servers.socket_of(pulse)}",
                                 "sink=speakers", "latency_msec=200")
            sound_servers.wait_for_sink(pipewire, "slow")
            pipewire.set_default_sink("slow")
            player, server_and_player = play(pipewire, servers)
            measure("PipeWire: monitor of a 200 ms network sink (delay auto, from pw-dump: 40 ms blocks, paced)",
                    environment=pipewire.env, watch=server_and_player)
            player.kill()


try:
    measure("wake-ups alone (C: 100 a second, nothing sent)", command=lambda port: [floor, "-"])
    measure("floor (C: wake-up + send only)", command=lambda port: [floor, str(port)])
    measure("WAV file", "--input", f"{work}/music.wav")
    seconds = 5
    peaks = [measure(f"WAV file, memory run {run + 1} of {memory_runs}", "--input", f"{work}/music.wav")
             for run in range(memory_runs)]
    if peaks:
        print(f"WAV file, the sender's peak private dirty memory over {memory_runs} runs: min {min(peaks):.2f}, "
              f"median {statistics.median(peaks):.2f}, max {max(peaks):.2f} MiB (goal ≤ 4)", flush=True)
    seconds = float(sys.argv[2])
    monitor_measurements()
finally:
    for child in children:
        if child.poll() is None:
            child.kill()
        child.wait()
