"""The suite's set-ups beside the tests (support/beside.py), checked beside CPU hogs: a set-up runs at idle priority
until a test waits for it, and from then at normal priority, down to the process that a chroot started with its
environment cleared (support/debian_roots.py's `in_root`, the path of apt under qemu-user in the Debian roots).
A full run beside two hogs (`stress-ng --cpu 2`) once waited there with no end: set-ups were then found by a variable
in their environment, which that process had lost, so it stayed at idle priority, and the hogs left it no CPU.
"""
import os
import subprocess
import threading
import time

from support import debian_roots
from support.beside import Beside
from support.processes import wait_for

# About a second of one core in dash: enough to starve at idle priority beside hogs on every core (SCHED_IDLE weighs
# 3 against a hog's 1024: well over ten minutes), and done within seconds at normal priority beside them.
BUSY = "i=0; while [ $i -lt 400000 ]; do i=$((i + 1)); done"
TOKEN = "lightorgan-test-beside"  # the chroot's shell's $0, by which the test finds it
# Long enough for any machine at normal priority beside the hogs, and far short of what the idle priority takes; at
# the deadline the hogs stop, so a set-up left at idle priority ends the test with a failed check, not a hang.
DEADLINE_SECONDS = 120


def test_a_set_up_that_a_test_waits_for_runs_at_normal_priority_beside_cpu_hogs(check, figure):
    beside = Beside(workers=2)
    hogs = []
    try:
        def make(wrapper):
            # The set-up's own shell, then a chroot whose environment is cleared, then a child of that one: the shape
            # of apt's fetch in a Debian root.
            return debian_roots.in_root("/", ["sh", "-c", f"{BUSY}; sh -c '{BUSY}'", TOKEN], wrapper=wrapper)

        beside.start("a busy root", make)
        # The hogs come once the chroot's shell runs, as when the hogs left a set-up at idle priority enough CPU to
        # get that far: from then, at idle priority beside them, next to none.
        check("the chroot's shell runs", wait_for(lambda: _running(TOKEN), 30))
        hogs += [subprocess.Popen(["sh", "-c", "while :; do :; done"]) for _ in os.sched_getaffinity(0)]
        time.sleep(1)
        started = time.monotonic()
        deadline = threading.Timer(DEADLINE_SECONDS, lambda: [hog.kill() for hog in hogs])
        deadline.start()
        try:
            result = beside.result("a busy root", make)  # a test waiting: from now at normal priority
        finally:
            deadline.cancel()
        waited = time.monotonic() - started
        check("the set-up ran", result.returncode == 0, result.stdout[-500:])
        check(f"a test waiting for the set-up beside {len(hogs)} CPU hogs waits within {DEADLINE_SECONDS} s "
              f"(waited {waited:.1f} s)", waited < DEADLINE_SECONDS)
        figure(f"a set-up of about two seconds of CPU in a chroot with its environment cleared, waited for beside "
               f"{len(hogs)} CPU hogs: {waited:.1f} s")
    finally:
        for hog in hogs:
            hog.kill()
            hog.wait()
        beside.close()


def _running(token):
    """Whether a process other than this one has `token` as an argument."""
    for entry in os.listdir("/proc"):
        if entry.isdigit() and entry != str(os.getpid()):
            try:
                with open(f"/proc/{entry}/cmdline", "rb") as cmdline:
                    if token.encode() in cmdline.read().split(b"\0"):
                        return True
            except OSError:
                continue
    return False
