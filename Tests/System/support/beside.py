"""Set-ups made beside the tests: minutes of CPU whose results do not depend on how fast the host makes them (an
emulated Pi whose clock counts instructions, apt in a Debian root through qemu-user), started when the session
starts, their processes at the lowest priority, SCHED_IDLE: they take only the CPU the tests leave idle (the
system tests keep this two-core machine about two thirds idle: they wait on sockets, browsers and real time), so
the tests around them run about as fast as without them. From the moment a test waits for one, that one runs at
normal priority, and so do the set-ups it waits for (by `result`, or for a cache lock that one holds:
support/caches.py), so the test never waits on a machine kept busy by others.

A module opts in with `prepare_beside(request, beside)` (conftest.py calls each selected module's once, after the
up-front fetch, with the session's `Beside`); a fixture asks for the result with `beside.result(name, make)`, which
also makes it there and then when nothing started it (a run of one module, `-k`). Start them before any test
enters a network namespace of its own (support/namespaces.py): a set-up's thread is made when it starts, in the
namespace of the thread that starts it, and one that fetches needs the machine's network.

`make(wrapper)` puts `wrapper` before each command it runs: `chrt --idle 0` (util-linux) and a shell that notes
its process id in the set-up's file of the session before it becomes the command (the id stays through `exec`);
the processes and theirs inherit the priority. Only those processes run at SCHED_IDLE: the set-up's thread in this
process stays at normal priority, since a thread of pytest at idle priority holding Python's lock would hold up the
tests. Raising a set-up's priority finds its processes by those noted ids, and their descendants. (A variable in
their environment named them before: a command that clears its environment, `env -i` before `chroot` as
support/debian_roots.py's `in_root` does, took it out of the very process that then runs apt under qemu-user, and
beside two CPU hogs that process starved at idle priority while a test waited for it.) SCHED_IDLE weighs against
the other tasks of its own autogroup (its session): the tests and these set-ups share pytest's session, so they weigh
against each other, and against other sessions as that session does.
"""
import concurrent.futures
import os
import re
import shutil
import tempfile
import threading
import time

from support import caches

_sessions = []  # the Beside of the session, while it runs


def waits_at_normal_priority():
    """Whether what waits in this thread is a test (pytest's main thread) or a set-up a test is waiting for (raised):
    then what it waits for should run at normal priority too."""
    if threading.current_thread() is threading.main_thread():
        return True
    return any(session.raised_in_this_thread() for session in list(_sessions))


class Beside:
    """The session's set-ups beside the tests, by name; each made once."""

    def __init__(self, workers=16):
        self._pool = concurrent.futures.ThreadPoolExecutor(workers, thread_name_prefix="beside")
        self._jobs, self._raised, self._lock = {}, {}, threading.Lock()
        self._needs = {}  # name: the names of the set-ups it waited for
        self._threads = {}  # thread: the name of the set-up it runs
        self.stopping = threading.Event()  # set when the session ends: a set-up still running stops early
        self.seconds = {}  # name: seconds from its start to its end, for the run's figures
        self.created, self.created_wall = time.monotonic(), time.time()
        self._noted = tempfile.mkdtemp(prefix="pytest-beside-")  # a file per set-up: the ids its wrapper noted
        self.started_at = {}  # name: time.monotonic() when its thread began to make it
        caches.while_blocked.append(self._blocked)
        _sessions.append(self)

    def raised_in_this_thread(self):
        """Whether this thread runs a set-up of this session that was raised to normal priority."""
        name = self._threads.get(threading.current_thread())
        return name is not None and name in self._raised

    def start(self, name, make):
        """Starts `make(wrapper)` beside the tests, once for `name`; returns its Future."""
        with self._lock:
            if name not in self._jobs:
                self._jobs[name] = self._pool.submit(self._run, name, make)
            return self._jobs[name]

    def done(self, name):
        """Whether `name` was started and has ended (its folders may be removed)."""
        with self._lock:
            job = self._jobs.get(name)
        return job is not None and job.done()

    def raised_at(self, name):
        """time.monotonic() when `name` was raised to normal priority (a test waited for it, or for a set-up
        waiting for it), or None."""
        return self._raised.get(name)

    def result(self, name, make):
        """What `make(wrapper)` returned, started now if it was not yet; its exception, if it raised one. A test
        waits for it with its processes at normal priority, and those of the set-ups it waits for (see `_raise`);
        a set-up waits for it at its own priority, and from then a test that waits for that set-up raises this
        one too."""
        waiter = self._threads.get(threading.current_thread())
        if waiter is not None:
            with self._lock:
                self._needs.setdefault(waiter, set()).add(name)
            return self.start(name, make).result()
        self._raise(name)
        future = self.start(name, make)
        while True:
            self._raise(name)
            try:
                return future.result(timeout=1)
            except concurrent.futures.TimeoutError:
                continue

    def _raise(self, name):
        """`name`, the set-ups it waits for, and theirs, at normal priority from now on: a test waiting for a set-up
        that waits at idle priority for another would wait as long as the machine's other work starves that one."""
        with self._lock:
            family, queue = [], [name]
            while queue:
                job = queue.pop()
                if job not in family:
                    family.append(job)
                    queue += self._needs.get(job, ())
            now = time.monotonic()
            for job in family:
                self._raised.setdefault(job, now)
        for job in family:
            raise_priority(_slug(job), self._noted)

    def _blocked(self, lock, holder):
        """caches.locked's hook, in a thread waiting for `lock` that the thread `holder` holds: a set-up holding a
        lock that a test (pytest's main thread), or a raised set-up, waits for is raised. Two set-ups that share
        a cache (the apt lists of a suite) would otherwise make a raised one wait for an idle one."""
        owner = self._threads.get(holder)
        waiter = self._threads.get(threading.current_thread())
        if owner is not None and (waiter in self._raised if waiter is not None
                                  else threading.current_thread() is threading.main_thread()):
            self._raise(owner)

    def timeline(self, name, since):
        """When `name`, a set-up that ran (it is in `seconds`), ran, in seconds since `since` (time.time()): (start,
        end, raised or None), raised the moment it went to normal priority (a test waited for it, or for a set-up
        waiting for it)."""
        offset = self.created_wall - since - self.created  # a time.monotonic() plus this: seconds since `since`
        started = self.started_at[name]
        ended = started + self.seconds[name]
        raised = self._raised.get(name)
        if raised is not None and raised >= ended:
            raised = None  # a test asked for it when it was made already
        return (started + offset, ended + offset, None if raised is None else max(raised, started) + offset)

    def _run(self, name, make):
        started = self.started_at[name] = time.monotonic()
        self._threads[threading.current_thread()] = name
        slug = _slug(name)
        # (sh -c SCRIPT NOTE COMMAND…: $0 is the note, "$@" the command, which keeps the shell's process id)
        wrapper = ["sh", "-c", 'echo $$ >>"$0" && exec "$@"', os.path.join(self._noted, slug)]
        try:
            return make(wrapper if name in self._raised else ["chrt", "--idle", "0", *wrapper])
        finally:
            self._threads.pop(threading.current_thread(), None)
            self.seconds[name] = time.monotonic() - started

    def close(self):
        """Stops what still runs beside (their loops watch `stopping`) and waits for the threads to end."""
        self.stopping.set()
        if self._blocked in caches.while_blocked:
            caches.while_blocked.remove(self._blocked)
        if self in _sessions:
            _sessions.remove(self)
        raise_priority(None, self._noted)
        self._pool.shutdown(wait=True, cancel_futures=True)
        shutil.rmtree(self._noted, ignore_errors=True)


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


def raise_priority(slug, noted):
    """Every task at SCHED_IDLE of the set-up `slug` (all set-ups: None) to normal priority: the processes of this
    process's descendants whose ids its wrapper noted in `noted` (the session's folder of notes), and all of theirs.
    Returns how many it raised."""
    parents = _parents()
    children = {}
    for pid, parent in parents.items():
        children.setdefault(parent, []).append(pid)
    descendants, queue = set(), list(children.get(os.getpid(), []))
    while queue:
        pid = queue.pop()
        descendants.add(pid)
        queue += children.get(pid, [])
    # (an id noted by a process that has ended may be another's now: only this process's descendants count)
    ids = {pid for pid in _noted_ids(noted, slug) if pid in descendants}
    return _raise_family([pid for pid in descendants if pid in ids], children)


def _noted_ids(noted, slug):
    """The process ids that the wrappers of the set-up `slug` (all set-ups: None) noted in the folder `noted`."""
    try:
        names = os.listdir(noted) if slug is None else [slug]
    except OSError:
        return set()
    ids = set()
    for name in names:
        try:
            with open(os.path.join(noted, name)) as note:
                ids.update(int(line) for line in note.read().split() if line.isdigit())
        except OSError:
            continue
    return ids


def raise_tree(pid):
    """Every task at SCHED_IDLE of process `pid` and its descendants (any process's: scripts/test's package build)
    to normal priority. Returns how many it raised."""
    children = {}
    for child, parent in _parents().items():
        children.setdefault(parent, []).append(child)
    return _raise_family([pid], children)


def _raise_family(roots, children):
    family, queue = set(), list(roots)
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
