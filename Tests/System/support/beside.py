"""Set-ups made beside the tests: minutes of CPU whose results do not depend on how fast the host makes them (an
emulated Pi whose clock counts instructions, apt in a Debian root through qemu-user), started when the session
starts, their processes at the lowest priority, SCHED_IDLE: they take only the CPU the tests leave idle (the
system tests keep this two-core machine about two thirds idle: they wait on sockets, browsers and real time), so
the tests around them run about as fast as without them. From the moment a test waits for one, that one runs at
normal priority, so the test never waits on a machine kept busy by others.

A module opts in with `prepare_beside(request, beside)` (conftest.py calls each selected module's once, after the
up-front fetch, with the session's `Beside`); a fixture asks for the result with `beside.result(name, make)`, which
also makes it there and then when nothing started it (a run of one module, `-k`). Start them before any test
enters a network namespace of its own (support/namespaces.py): a set-up's thread is made when it starts, in the
namespace of the thread that starts it, and one that fetches needs the machine's network.

`make(wrapper)` puts `wrapper` before each command it runs: `chrt --idle 0` (util-linux) and a variable naming the
set-up, which its processes and theirs inherit with the priority. Only those processes run at SCHED_IDLE: the
set-up's thread in this process stays at normal priority, since a thread of pytest at idle priority holding
Python's lock would hold up the tests. Raising a set-up's priority finds its processes by that variable, and their
descendants. SCHED_IDLE weighs against the other tasks of its own autogroup (its session): the tests and these
set-ups share pytest's session, so they weigh against each other, and against other sessions as that session does.
"""
import concurrent.futures
import os
import re
import threading
import time

MARK = "PYTEST_BESIDE_SETUP"  # the variable that names a set-up in its processes' environment


class Beside:
    """The session's set-ups beside the tests, by name; each made once."""

    def __init__(self, workers=8):
        self._pool = concurrent.futures.ThreadPoolExecutor(workers, thread_name_prefix="beside")
        self._jobs, self._raised, self._lock = {}, {}, threading.Lock()
        self.stopping = threading.Event()  # set when the session ends: a set-up still running stops early
        self.seconds = {}  # name: seconds from its start to its end, for the run's figures

    def start(self, name, make):
        """Starts `make(wrapper)` beside the tests, once for `name`; returns its Future."""
        with self._lock:
            if name not in self._jobs:
                self._jobs[name] = self._pool.submit(self._run, name, make)
            return self._jobs[name]

    def started(self, name):
        """Whether `name` was started (it may have ended)."""
        with self._lock:
            return name in self._jobs

    def done(self, name):
        """Whether `name` was started and has ended (its folders may be removed)."""
        with self._lock:
            job = self._jobs.get(name)
        return job is not None and job.done()

    def raised_at(self, name):
        """time.monotonic() when a test first waited for `name`, or None."""
        return self._raised.get(name)

    def result(self, name, make):
        """What `make(wrapper)` returned, started now if it was not yet; waits for it with its processes at normal
        priority. Its exception, if it raised one."""
        self._raised.setdefault(name, time.monotonic())
        future = self.start(name, make)
        while True:
            raise_priority(_slug(name))
            try:
                return future.result(timeout=1)
            except concurrent.futures.TimeoutError:
                continue

    def _run(self, name, make):
        started = time.monotonic()
        wrapper = ["env", f"{MARK}={_slug(name)}"]
        try:
            return make(wrapper if name in self._raised else ["chrt", "--idle", "0", *wrapper])
        finally:
            self.seconds[name] = time.monotonic() - started

    def close(self):
        """Stops what still runs beside (their loops watch `stopping`) and waits for the threads to end."""
        self.stopping.set()
        raise_priority()
        self._pool.shutdown(wait=True, cancel_futures=True)


def _slug(name):
    return re.sub(r"[^A-Za-z0-9]+", "-", name).strip("-")


def _parents():
    """{pid: parent pid} of every process."""
    parents = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as stat:
                    # "pid (comm) state ppid …": comm may hold spaces and parentheses; the last ")" ends it.
                    parents[int(entry)] = int(stat.read().rpartition(")")[2].split()[1])
            except (OSError, ValueError, IndexError):
                continue
    return parents


def _marked(pid, slug):
    try:
        with open(f"/proc/{pid}/environ", "rb") as environ:
            names = environ.read().split(b"\0")
    except OSError:
        return False
    return any(entry.startswith(f"{MARK}=".encode()) and (slug is None or entry == f"{MARK}={slug}".encode())
               for entry in names)


def raise_priority(slug=None):
    """Every task at SCHED_IDLE of the set-up `slug` (all set-ups: None) to normal priority: the processes of this
    process's descendants that carry its mark, and all of theirs. Returns how many it raised."""
    parents = _parents()
    children = {}
    for pid, parent in parents.items():
        children.setdefault(parent, []).append(pid)
    descendants, queue = [], list(children.get(os.getpid(), []))
    while queue:
        pid = queue.pop()
        descendants.append(pid)
        queue += children.get(pid, [])
    family, queue = set(), [pid for pid in descendants if _marked(pid, slug)]
    while queue:
        pid = queue.pop()
        if pid not in family:
            family.add(pid)
            queue += children.get(pid, [])
    raised = 0
    for pid in family:
        try:
            tasks = os.listdir(f"/proc/{pid}/task")
        except OSError:
            continue
        for task in map(int, tasks):
            try:
                if os.sched_getscheduler(task) == os.SCHED_IDLE:
                    os.sched_setscheduler(task, os.SCHED_OTHER, os.sched_param(0))
                    raised += 1
            except OSError:  # it ended
                continue
    return raised
