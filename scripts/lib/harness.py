"""Shared by the script tests that run the built lightorgan executable (scripts/test-link, scripts/test-discovery).

A test script calls `start(kind, lightorgan)` once, makes processes with `Process(name, *arguments)`,
records checks with `check(name, ok, detail)` and ends with `finish()`, which stops every child and
prints the closing line `KIND: N passed, N failed`.
"""
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time

_state = {"lightorgan": None, "work": None, "kind": None, "passed": 0, "failed": 0}
children = []


def start(kind, lightorgan):
    """Begins a script test of `kind` (the closing line's word) with the executable at `lightorgan`."""
    _state.update(lightorgan=os.path.abspath(lightorgan), kind=kind, work=tempfile.mkdtemp(prefix=f"lightorgan-{kind}-"))


def work():
    """The temporary folder of this run."""
    return _state["work"]


def check(name, ok, detail=""):
    kind = _state["kind"]
    if ok:
        _state["passed"] += 1
        print(f"✔ {kind}: {name}" + (f" ({detail})" if detail else ""), flush=True)
    else:
        _state["failed"] += 1
        print(f"✘ {kind}: {name} ({detail})", flush=True)


def run_all(tests):
    """Runs each test function; one that raises counts as a failed check named by its docstring."""
    for test in tests:
        try:
            test()
        except Exception as error:  # a broken check is a failed check, not a crash of the script
            check(test.__doc__.strip().splitlines()[0], False, f"{type(error).__name__}: {error}")


def finish():
    """Stops every child, prints the closing line and exits 0 only when no check failed."""
    for child in children:
        if child.poll() is None:
            child.send_signal(signal.SIGCONT)
            child.kill()
            child.wait()
    print(f"{_state['kind']}: {_state['passed']} passed, {_state['failed']} failed")
    sys.exit(0 if _state["failed"] == 0 else 1)


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class Process:
    """A lightorgan process whose stdout and stderr go to files; `wrapper` runs it through another
    command (e.g. nsenter)."""

    def __init__(self, name, *arguments, wrapper=()):
        self.out_path = os.path.join(work(), f"{name}.out")
        self.err_path = os.path.join(work(), f"{name}.err")
        self.started = time.monotonic()
        self.process = subprocess.Popen(
            [*wrapper, _state["lightorgan"], *arguments], stdout=open(self.out_path, "w"),
            stderr=open(self.err_path, "w"))
        children.append(self.process)

    def lines(self):
        with open(self.out_path) as file:
            return [line.split() for line in file if line.endswith("\n")]

    def log(self):
        with open(self.err_path) as file:
            return file.read()

    def signal(self, number):
        self.process.send_signal(number)

    def stop(self):
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(5)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        return self.process.returncode

    def rss_kib(self):
        with open(f"/proc/{self.process.pid}/status") as status:
            return next(int(line.split()[1]) for line in status if line.startswith("VmRSS:"))

    def alive(self):
        return self.process.poll() is None


def veth_namespace(test_veth, other_veth, test_address, address):
    """A new network namespace joined to this one by a veth pair: `test_veth` here with
    `test_address`/24, `other_veth` there with `address`/24, lo up on both sides. It is held by a
    child `unshare --net setpriv --pdeathsig KILL sleep infinity` (no /run/netns file; it dies with
    the thread that called this), which is returned; killing it removes the namespace and the pair.
    `nsenter --net=/proc/PID/ns/net COMMAND` runs a command inside (ola_fixture.Olad, and
    browser_fixture.Namespace for the page's tests)."""
    def run(*command):
        subprocess.run(command, check=True, capture_output=True, text=True)

    holder = subprocess.Popen(["unshare", "--net", "setpriv", "--pdeathsig", "KILL", "sleep", "infinity"])
    try:
        own = os.readlink("/proc/self/ns/net")
        deadline = time.monotonic() + 5
        while True:
            try:
                if os.readlink(f"/proc/{holder.pid}/ns/net") != own:
                    break
            except FileNotFoundError:
                pass
            if holder.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError("unshare --net did not make a network namespace")
            time.sleep(0.005)
        inside = ["nsenter", f"--net=/proc/{holder.pid}/ns/net"]
        run("ip", "link", "add", test_veth, "type", "veth", "peer", "name", other_veth, "netns", str(holder.pid))
        run("ip", "link", "set", "lo", "up")
        run("ip", "address", "add", f"{test_address}/24", "dev", test_veth)
        run("ip", "link", "set", test_veth, "up")
        run(*inside, "ip", "link", "set", "lo", "up")
        run(*inside, "ip", "address", "add", f"{address}/24", "dev", other_veth)
        run(*inside, "ip", "link", "set", other_veth, "up")
    except BaseException:
        holder.kill()
        holder.wait()
        raise
    return holder


def wait_for(condition, timeout):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.01)
    return condition()


def applied(receiver_process):
    """[(time, counter)] of the receiver's applied frames, all-off frames left out."""
    frames = []
    for fields in receiver_process.lines():
        if len(fields) == 4:
            counter = int(fields[1]) << 16 | int(fields[2]) << 8 | int(fields[3])
            if counter:
                frames.append((float(fields[0]), counter))
    return frames


def made(sender_process):
    return {int(fields[1]): float(fields[0]) for fields in sender_process.lines() if len(fields) == 2}


def ages_ms(receiver_process, sender_process, since=0.0):
    sent = made(sender_process)
    return [(at, (at - sent[n]) * 1000) for at, n in applied(receiver_process) if n in sent and at >= since]


def percentile(values, share):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))] if ordered else float("nan")


def cpu_seconds(pid):
    """CPU time, user + system, of every thread the process has had, seconds (10 ms resolution)."""
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def run_seconds(pid):
    """Time on a CPU, seconds, summed over the process's live threads, to the nanosecond (the
    scheduler's own count, /proc/PID/task/*/schedstat). Unlike the tick-sampled user + system time
    of /proc/PID/stat, it sees a process that wakes briefly between ticks (100 short wake-ups a
    second can go unsampled)."""
    total = 0
    for task in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{task}/schedstat") as schedstat:
                total += int(schedstat.read().split()[0])
        except FileNotFoundError:
            pass  # the thread ended
    return total / 1e9


def context_switches(pid):
    """Voluntary + involuntary context switches summed over the process's live threads: each
    voluntary one is a sleep that ended in a wake-up."""
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
