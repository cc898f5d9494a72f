"""Processes of the built lightorgan (and the tools beside it) whose output the tests read.

A `Process` writes its stdout and stderr to files in the test's folder. Receivers run with
`--output stdout` (one line `<CLOCK_MONOTONIC s> bass mid treble` per applied frame) and senders with
`--pattern counter` (one line `<CLOCK_MONOTONIC s> n` per frame made; frame n carries n in its three
bytes), so a frame's age is the receiver's time minus the sender's time for the same counter: both
read the same clock, in every network namespace.
"""
import contextlib
import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time


class Process:
    """A child process whose stdout and stderr go to `folder/name.out` and `folder/name.err`.

    `wrapper` runs it through another command (`nsenter …`), `env` adds variables. The `spawn`
    fixture makes these and stops every one of them when its test ends, passed or failed."""

    def __init__(self, folder, name, command, wrapper=(), env=None, stdin=None):
        self.name = name
        self.out_path = os.path.join(folder, f"{name}.out")
        self.err_path = os.path.join(folder, f"{name}.err")
        self.started = time.monotonic()
        environment = None if env is None else {**os.environ, **env}
        with open(self.out_path, "w") as out, open(self.err_path, "w") as err:
            self.process = subprocess.Popen([*wrapper, *command], stdout=out, stderr=err, env=environment,
                                            stdin=stdin if stdin is not None else subprocess.DEVNULL)
        self.pid = self.process.pid

    def lines(self):
        """stdout's complete lines, each split into fields."""
        with open(self.out_path) as file:
            return [line.split() for line in file if line.endswith("\n")]

    def output(self):
        with open(self.out_path) as file:
            return file.read()

    def log(self):
        """Everything it wrote to stderr so far (lightorgan's log)."""
        with open(self.err_path, errors="replace") as file:
            return file.read()

    def signal(self, number):
        if self.process.poll() is None:
            self.process.send_signal(number)

    def wait(self, timeout=None):
        return self.process.wait(timeout)

    def stop(self, timeout=5):
        """SIGTERM (after SIGCONT, in case it was stopped), SIGKILL after `timeout` s; the exit status."""
        return stop_popen(self.process, timeout)

    def kill(self):
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait()

    def alive(self):
        return self.process.poll() is None

    def rss_kib(self):
        with open(f"/proc/{self.pid}/status") as status:
            return next(int(line.split()[1]) for line in status if line.startswith("VmRSS:"))


class Spawner:
    """Starts processes in one folder (a test's, a benchmark's) and stops them all, newest first, with
    `stop_all()` (the `spawn` fixture does at the end of its test, whatever happened; a `with` block at its end)."""

    def __init__(self, folder, executable):
        self.folder, self.executable, self.processes = folder, executable, []

    def __call__(self, name, *arguments, wrapper=(), env=None, binary=None, stdin=None):
        """`lightorgan ARGUMENTS` (or `binary ARGUMENTS`) as a Process named `name`."""
        return self.command(name, [binary or self.executable, *arguments], wrapper=wrapper, env=env, stdin=stdin)

    def command(self, name, command, wrapper=(), env=None, stdin=None):
        process = Process(self.folder, name, [str(part) for part in command], wrapper=wrapper, env=env, stdin=stdin)
        self.processes.append(process)
        return process

    def stop_all(self):
        for process in reversed(self.processes):
            process.stop(timeout=3)

    def __enter__(self):
        return self

    def __exit__(self, *exception):
        self.stop_all()


def bench_folder(name):
    """A new folder for benchmark `name`'s files (logs, recordings), named on stderr so they can be read after."""
    folder = tempfile.mkdtemp(prefix=f"lightorgan-bench-{name}-")
    print(f"output in {folder}", file=sys.stderr)
    return folder


def stop_popen(process, timeout=5):
    """Stops a subprocess.Popen: SIGTERM (after SIGCONT, in case it was stopped), SIGKILL after `timeout` s;
    its exit status. Nothing happens to one that has ended."""
    if process.poll() is None:
        process.send_signal(signal.SIGCONT)
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
    return process.returncode


def free_port(host="127.0.0.1"):
    """A TCP port nobody listens on right now, in this network namespace."""
    with socket.socket() as probe:
        probe.bind((host, 0))
        return probe.getsockname()[1]


def free_port_pair(host="127.0.0.1"):
    """A TCP port P such that nobody listens on P or P + 1 right now (Snapcast's stream and control ports)."""
    while True:
        port = free_port(host)
        if port < 65535:
            with socket.socket() as probe:
                try:
                    probe.bind((host, port + 1))
                    return port
                except OSError:
                    pass


@contextlib.contextmanager
def outside_test_timeout(seconds):
    """The `with` block out of the running test's own timeout (pytest-timeout's SIGALRM, armed in the main thread
    for the test and its set-up): up to `seconds` of its own, then the test's time left as it was. Elsewhere (another
    thread, --timeout 0, another timeout method) nothing changes."""
    armed = threading.current_thread() is threading.main_thread() and signal.getitimer(signal.ITIMER_REAL)[0] > 0
    left = signal.setitimer(signal.ITIMER_REAL, seconds)[0] if armed else 0
    try:
        yield
    finally:
        if armed:
            signal.setitimer(signal.ITIMER_REAL, left)


def wait_for(condition, timeout):
    """Polls `condition` every 10 ms for up to `timeout` s; its last value."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.01)
    return condition()


def applied(receiver_process):
    """[(time, counter)] of a `--output stdout` receiver's applied frames, all-off frames left out."""
    frames = []
    for fields in receiver_process.lines():
        if len(fields) == 4:
            counter = int(fields[1]) << 16 | int(fields[2]) << 8 | int(fields[3])
            if counter:
                frames.append((float(fields[0]), counter))
    return frames


def made(sender_process):
    """{counter: time made} of a `--pattern counter` sender."""
    return {int(fields[1]): float(fields[0]) for fields in sender_process.lines() if len(fields) == 2}


def ages_ms(receiver_process, sender_process, since=0.0, made_since=0.0):
    """[(time applied, age ms)] of every counter frame the receiver applied at or after `since` that the
    sender made at or after `made_since`."""
    sent = made(sender_process)
    return [(at, (at - sent[n]) * 1000) for at, n in applied(receiver_process)
            if n in sent and at >= since and sent[n] >= made_since]


def percentile(values, share):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))] if ordered else float("nan")


def out_of_order(numbers):
    """The first two neighbours of `numbers` out of order, "A before B", or "" when they are in order."""
    return next((f"{a} before {b}" for a, b in zip(numbers, numbers[1:]) if b < a), "")


def cpu_seconds(pid):
    """CPU time, user + system, of every thread the process has had, seconds (10 ms resolution)."""
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def run_seconds(pid):
    """Time on a CPU, seconds, summed over the process's live threads, to the nanosecond (the
    scheduler's own count, /proc/PID/task/*/schedstat). Unlike the tick-sampled user + system time
    of /proc/PID/stat, it sees a process that wakes briefly between ticks."""
    total = 0
    for task in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{task}/schedstat") as schedstat:
                total += int(schedstat.read().split()[0])
        except FileNotFoundError:
            pass  # the thread ended
    return total / 1e9


def context_switches(pid):
    """Voluntary + involuntary context switches summed over the process's live threads."""
    total = 0
    for task in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{task}/status") as status:
                total += sum(int(line.split()[1]) for line in status if "ctxt_switches:" in line)
        except FileNotFoundError:
            pass
    return total


def memory_mib(pid):
    """(resident set, private dirty) in MiB. Private dirty is what only this process holds and the
    kernel cannot drop (heap, stacks, relocated data); the rest is clean code mapped from files."""
    with open(f"/proc/{pid}/smaps_rollup") as rollup:
        fields = {line.split(":")[0]: int(line.split()[1]) for line in rollup if line.strip().endswith("kB")}
    return fields["Rss"] / 1024, fields["Private_Dirty"] / 1024


def children(pid):
    """PIDs of the processes whose parent is `pid`."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as stat:
                    if int(stat.read().rsplit(")", 1)[1].split()[1]) == pid:
                        found.append(int(entry))
            except (FileNotFoundError, ProcessLookupError):
                pass
    return found


def command_line(pid):
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as cmdline:
            return cmdline.read().replace(b"\0", b" ").decode(errors="replace")
    except FileNotFoundError:
        return ""


def running(pid):
    """Whether `pid` exists and is no zombie."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def frozen(pid):
    """Whether every thread of `pid` is stopped (state T, after SIGSTOP): it reads and writes nothing more
    until SIGCONT. kill(2) returns before a thread running on another CPU has stopped."""
    states = []
    for task in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{task}/stat") as stat:
                states.append(stat.read().rsplit(")", 1)[1].split()[0])
        except FileNotFoundError:
            pass  # the thread ended
    return bool(states) and all(state == "T" for state in states)


def listening(port):
    """Whether a TCP socket listens on `port` in this network namespace (/proc/net/tcp and tcp6)."""
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            with open(table) as rows:
                next(rows)
                if any(fields[3] == "0A" and int(fields[1].rsplit(":", 1)[1], 16) == port
                       for fields in (row.split() for row in rows)):
                    return True
        except FileNotFoundError:
            pass
    return False
