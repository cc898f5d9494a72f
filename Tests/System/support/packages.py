"""The built Debian packages the `package` tests judge: given (`--pi-package`, `--amd64-package`: scripts/test's full
tier gives the amd64 one, made from its own build before the tests), being built beside the tests
(`--packages-building`: the arm64 one in scripts/test's full tier), or built here by scripts/build-pi.

scripts/test starts scripts/build-pi arm64 at idle priority (SCHED_IDLE) before its own build and does not wait for
it: the tests that need no package run first (conftest.py puts the `package` tests last) and the package's build
takes the CPU those tests leave idle. Whoever needs a package, a test or a set-up beside the tests (apt in a Debian
root, the Pis' boot files), waits for it here; once a test waits for it, or for a set-up that waits for it, the
build runs at normal priority, so no test waits on a build that the machine's other work starves. A build that
failed fails whatever waits, with its log's end.

The folder of `--packages-building` holds what scripts/test's `beside` writes: `out`, scripts/build-pi's standard
output (each .deb's path as it is made), `log` (its messages), `pid` (the build's process) and `status` (its exit
status, once it has ended).
"""
import os
import subprocess
import threading
import time

from support.beside import raise_tree, waits_at_normal_priority
from support.processes import outside_test_timeout

REPOSITORY = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
OPTIONS = {"arm64": "--pi-package", "amd64": "--amd64-package"}
WAIT_SECONDS = 3600  # the longest a package may take once waited for (a new machine builds both from nothing)

_lock = threading.Lock()
_arch_locks = {arch: threading.Lock() for arch in OPTIONS}
_paths = {}


def package_path(config, arch):
    """The path of the `arch` .deb (arm64, amd64): waits for it, or builds it, the first time; from any thread."""
    with _lock:
        if arch in _paths:
            return _paths[arch]
    given = config.getoption(OPTIONS[arch])
    if given:
        path = os.path.abspath(given)
        if not os.path.isfile(path):
            raise RuntimeError(f"{OPTIONS[arch]} {given}: no such package (scripts/build-pi {arch} failed: its log is "
                               "in scripts/test's output)")
    elif config.getoption("--fetch-only"):  # beside the builds: the package is not built yet, nor built here
        raise RuntimeError(f"--fetch-only asked for the {arch} package: a fetch_up_front() must not; what needs a "
                           "package is fetched beside the tests (support/beside.py)")
    elif config.getoption("--packages-building"):
        # Every waiter waits by itself (no lock): a test that waits must raise the build, whoever else waits.
        path = _waited_for(config.getoption("--packages-building"), arch)
    else:
        with _arch_locks[arch]:  # one build per architecture, whoever asks
            with _lock:
                if arch in _paths:
                    return _paths[arch]
            output = subprocess.run(["bash", "scripts/build-pi", arch], cwd=REPOSITORY, check=True,
                                    capture_output=True, text=True).stdout
            path = output.strip().splitlines()[-1]
    with _lock:
        _paths[arch] = path
    return path


def _waited_for(folder, arch):
    """The `arch` .deb that scripts/build-pi, running beside, writes to `folder`/out; its build raised to normal
    priority while it is waited for. Out of the waiting test's own timeout (pytest-timeout's SIGALRM, in the main
    thread): the build may need longer than a test may take."""
    started = time.monotonic()
    with outside_test_timeout(WAIT_SECONDS):
        while True:
            path = _built(folder, arch)
            if path:
                return path
            status = _read(os.path.join(folder, "status"))
            if status is not None:
                path = _built(folder, arch)  # made just before the build ended
                if path:
                    return path
                log = (_read(os.path.join(folder, "log")) or "").splitlines()[-15:]
                raise RuntimeError(f"scripts/build-pi (beside the tests) ended with status {status.strip()} "
                                   f"without the {arch} package:\n" + "\n".join(log))
            if time.monotonic() - started > WAIT_SECONDS:
                raise RuntimeError(f"the {arch} package was not built within {WAIT_SECONDS} s of being waited for")
            pid = _read(os.path.join(folder, "pid"))
            if pid and pid.strip().isdigit() and waits_at_normal_priority():
                raise_tree(int(pid))
            time.sleep(1)


def _built(folder, arch):
    lines = (_read(os.path.join(folder, "out")) or "").split("\n")
    # A line is whole once the next one began or the file ends with a newline.
    complete = lines[:-1]
    return next((line for line in complete if line.endswith(f"_{arch}.deb") and os.path.exists(line)), None)


def _read(path):
    try:
        with open(path) as file:
            return file.read()
    except OSError:
        return None
