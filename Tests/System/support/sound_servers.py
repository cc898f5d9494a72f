"""Private sound servers, as a desktop runs them: PulseAudio, or PipeWire with pipewire-pulse and
WirePlumber on a session bus of their own (test_monitor.py, scripts/bench-sender).

A `SoundServer` runs in a runtime folder of its own (`XDG_RUNTIME_DIR` and `HOME` there, and the
session bus's address under PipeWire: `env`); pactl, parec, pacat, pw-dump and `lightorgan send` find
it through `env`. Its daemons log into that folder (NAME.out, NAME.err) and are all stopped by
`stop()` (or at the end of a `with` block).
`pipewire_latency_ms` and `pulseaudio_latency_ms` give a sink's latency as each server states it.

Measured facts behind the set-up:
- What a desktop gives its sound server (RTKit raises PulseAudio and PipeWire to nice -11 or
  real-time): without it, a busy test machine starves the server and the audio itself breaks up (at
  normal priority PipeWire broke a steady tone up beside a build on both cores). The tests' own
  players and reference recorders get it too (`DESKTOP_NICE`); lightorgan raises its own threads
  (DedicatedThread.setNice).
- WirePlumber and pipewire-pulse give up at once when PipeWire's socket is not there yet (4 of 9
  set-ups had no default sink when all three started together), so they start after it.
- pipewire-pulse (0.3.65) checks for `runtime`/pulse and then makes it: when a client made it in
  between (libpulse makes it too, and `pactl info` polls while the server starts), it exits with
  "mkdir() … failed: File exists" (seen once beside a CPU hog). The folder is made before it starts.
- WirePlumber, which keeps the default sink under PipeWire, may still be starting when the first
  sink is made: `set_default_sink` sets it until the server has taken it.
- A tunnel sink into PipeWire itself hangs: the far end of a tunnel under PipeWire is a second,
  PulseAudio, server (`pulseaudio(…)` in a folder of its own).
- The first recording from a PulseAudio null sink's monitor after a player starts on it waits
  1-1.6 s for data (measured: 1.58 s 0.4 s after a 100 ms player started, 1.05 s after a 10 ms one;
  a second recorder then starts within 10-70 ms; with nothing playing, 2 s): the sink still renders
  the long block it began before the low-latency streams came. A desktop's server has long been
  running its player: `warm_up` records once after the player starts, as a recorder like ours.
"""
import json
import os
import re
import shutil
import subprocess
import time

from .processes import Process, wait_for

DESKTOP_NICE = ["nice", "-n", "-11"]


class SoundServer:
    """The daemons of one private sound server in `runtime` (made if missing)."""

    def __init__(self, runtime):
        self.runtime = runtime
        os.makedirs(runtime, exist_ok=True)
        self.env = {"XDG_RUNTIME_DIR": runtime, "HOME": runtime}
        self.daemons = []  # (name, Process)

    def environment(self):
        """os.environ with this server's variables: for subprocess's `env`."""
        return {**os.environ, **self.env}

    def start(self, name, command, nice=True):
        """Starts a daemon of the server (at the desktop's priority unless `nice` is false)."""
        daemon = Process(self.runtime, name, command, wrapper=DESKTOP_NICE if nice else (), env=self.env)
        self.daemons.append((name, daemon))
        return daemon

    def pids(self):
        """{name: pid} of the daemons."""
        return {name: daemon.pid for name, daemon in self.daemons}

    def stop(self):
        for _, daemon in reversed(self.daemons):
            daemon.stop(timeout=3)
        self.daemons = []

    def __enter__(self):
        return self

    def __exit__(self, *exception):
        self.stop()

    def pactl(self, *arguments, check=True):
        """pactl's output."""
        result = subprocess.run(["pactl", *arguments], env=self.environment(), capture_output=True, text=True)
        if check and result.returncode != 0:
            raise RuntimeError(f"pactl {' '.join(arguments)} failed: {result.stderr.strip()}")
        return result.stdout.strip()

    def answers(self):
        """Whether pactl gets an answer."""
        return subprocess.run(["pactl", "info"], env=self.environment(), capture_output=True).returncode == 0

    def wait_until_it_answers(self, timeout=5):
        if not wait_for(self.answers, timeout):
            raise RuntimeError(f"the sound server in {self.runtime} does not answer: {self.logs()}")

    def logs(self):
        return " | ".join(f"{name}: {daemon.log()[-300:]}" for name, daemon in self.daemons)

    def load_module(self, *arguments):
        """Loads a module; its index."""
        return self.pactl("load-module", *arguments)

    def sinks(self):
        return [line.split()[1] for line in self.pactl("list", "short", "sinks", check=False).splitlines()
                if len(line.split()) > 1]

    def set_default_sink(self, sink, timeout=5):
        """Sets the default sink until the server has taken it (WirePlumber may still be starting)."""
        def taken():
            result = subprocess.run(["pactl", "set-default-sink", sink], env=self.environment(), capture_output=True)
            return result.returncode == 0 and self.pactl("get-default-sink", check=False) == sink
        if not wait_for(taken, timeout):
            raise RuntimeError(f"the default sink stays {self.pactl('get-default-sink', check=False)!r}, not {sink!r}")

    def warm_up(self, sink, seconds=2):
        """Records `sink`'s monitor with a 10 ms recorder for `seconds` s, so that the next recorder
        starts at once (see the module's notes): call it after starting the player."""
        subprocess.run([*DESKTOP_NICE, "timeout", str(seconds), "parec", f"--device={sink}.monitor", "--raw",
                        "--latency-msec=10", "--latency=1920"], env=self.environment(), stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL)


def pulseaudio(runtime, *modules, name="pulseaudio"):
    """A PulseAudio server in `runtime` with `modules` ("module-null-sink sink_name=speakers", …) and
    its native protocol on a unix socket (`runtime`/pulse/native), once it answers."""
    server = SoundServer(runtime)
    try:
        server.start(name, ["pulseaudio", "--daemonize=no", "--exit-idle-time=-1", "-n",
                            *(f"--load={module}" for module in modules), "--load=module-native-protocol-unix",
                            "--log-level=error"])
        if not wait_for(lambda: os.path.exists(socket_of(server)), 5):
            raise RuntimeError(f"pulseaudio did not start in {runtime}: {server.logs()}")
        server.wait_until_it_answers()
    except BaseException:
        server.stop()
        raise
    return server


def socket_of(server):
    """The PulseAudio native protocol's socket of `server` (PulseAudio's, or pipewire-pulse's)."""
    return os.path.join(server.runtime, "pulse", "native")


def pipewire(runtime):
    """PipeWire as most desktops now run it: a session bus, PipeWire, WirePlumber (the session manager:
    links, the default sink; it needs the bus) and pipewire-pulse (which pactl and parec talk to);
    returned once pactl gets an answer."""
    for tool in ("dbus-daemon", "pipewire", "wireplumber", "pipewire-pulse"):
        if not shutil.which(tool):
            raise RuntimeError(f"{tool} is not installed")
    server = SoundServer(runtime)
    bus = os.path.join(runtime, "bus")
    server.env["DBUS_SESSION_BUS_ADDRESS"] = f"unix:path={bus}"
    try:
        server.start("dbus", ["dbus-daemon", "--session", f"--address=unix:path={bus}", "--nofork", "--nopidfile"],
                     nice=False)
        if not wait_for(lambda: os.path.exists(bus), 5):
            raise RuntimeError(f"the session bus did not start: {server.logs()}")
        server.start("pipewire", ["pipewire"])
        if not wait_for(lambda: os.path.exists(os.path.join(runtime, "pipewire-0")), 5):
            raise RuntimeError(f"pipewire did not start: {server.logs()}")
        server.start("wireplumber", ["wireplumber"])
        # pipewire-pulse makes its socket's folder after finding it missing, and fails if anyone made it
        # in between (pactl, asking whether the server answers yet, does): made here first.
        os.makedirs(os.path.dirname(socket_of(server)), mode=0o700, exist_ok=True)
        server.start("pipewire-pulse", ["pipewire-pulse"])
        server.wait_until_it_answers()
    except BaseException:
        server.stop()
        raise
    return server


def wait_for_sink(server, sink, timeout=5):
    if not wait_for(lambda: sink in server.sinks(), timeout):
        raise RuntimeError(f"no sink {sink!r} in {server.sinks()}: {server.logs()}")


def pipewire_latency_ms(server, sink):
    """The sink's latency as PipeWire states it on its input ports (pipewire-pulse says 0), ms, or None.
    pw-dump now and then catches the graph before the ports state their latency: asked again, for up
    to 2 s."""
    for _ in range(10):
        result = subprocess.run(["pw-dump"], env=server.environment(), capture_output=True, text=True)
        try:
            objects = json.loads(result.stdout)
            node = next(o["id"] for o in objects
                        if o["type"].endswith(":Node") and o["info"]["props"].get("node.name") == sink)
            return max(latency["minNs"] // 1000000 for o in objects
                       if o["type"].endswith(":Port") and o["info"]["props"].get("node.id") == node
                       for latency in (o["info"].get("params") or {}).get("Latency", [])
                       if latency["direction"] == "Input")
        except (ValueError, KeyError, StopIteration, TypeError):
            time.sleep(0.2)
    return None


def pulseaudio_latency_ms(server, sink):
    """The sink's latency as `pactl list sinks` states it, ms, or None."""
    found = False
    for line in server.pactl("list", "sinks").splitlines():
        if re.search(rf"Name: {sink}$", line.strip()):
            found = True
        elif found and "Latency:" in line:
            return int(int(line.split()[1]) / 1000)
    return None
