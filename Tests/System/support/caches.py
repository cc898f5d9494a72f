"""What the suite keeps between runs (Debian roots, the music corpus, the kernel's gpio-sim module):
under `$XDG_CACHE_HOME/lightorgan` (`~/.cache/lightorgan`), filled under a lock so that two runs on
one machine never write the same folder at once, and installing Debian packages the same way."""
import contextlib
import fcntl
import os
import subprocess
import threading
import time

_holders = {}  # lock name: the thread of this process that holds it
# Called about every half second, as hook(lock name, thread holding it or None), by a thread of this process that
# waits for a lock another holds: support/beside.py raises a set-up holding it at idle priority to the waiter's.
while_blocked = []


def folder(*parts):
    """A folder under the cache, made if missing."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    path = os.path.join(base, "lightorgan", *parts)
    os.makedirs(path, exist_ok=True)
    return path


@contextlib.contextmanager
def locked(name):
    """Holds the cache's lock `name` (a file beside the cached folders) for the `with` block. While another holds
    it, each hook of `while_blocked` is called about every half second. A thread that holds it already just goes
    on (a second flock of its own would wait for itself)."""
    if _holders.get(name) is threading.current_thread():
        yield
        return
    with open(os.path.join(folder(), f"{name}.lock"), "w") as lock:
        while True:
            try:
                fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                for hook in list(while_blocked):
                    hook(name, _holders.get(name))
                time.sleep(0.5)
        _holders[name] = threading.current_thread()
        try:
            yield
        finally:
            _holders.pop(name, None)
            fcntl.flock(lock, fcntl.LOCK_UN)


def missing_packages(packages):
    """The Debian packages of `packages` that are not installed."""
    missing = []
    for package in packages:
        status = subprocess.run(["dpkg-query", "-W", "-f=${Status}", package], capture_output=True, text=True)
        if "ok installed" not in status.stdout:
            missing.append(package)
    return missing


def install_packages(packages):
    """apt-get installs what is missing of `packages` (update first), under the cache's lock "apt" (the up-front
    fetches run at once, and apt-get update does not wait for the lists' lock), waiting for dpkg's lock."""
    if not missing_packages(packages):
        return
    with locked("apt"):
        missing = missing_packages(packages)
        if not missing:
            return
        environment = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
        apt = ["apt-get", "-o", "DPkg::Lock::Timeout=600", "-q"]
        subprocess.run([*apt, "update", "-qq"], env=environment, check=True, stdout=subprocess.DEVNULL)
        subprocess.run([*apt, "install", "-y", "-qq", "--no-install-recommends", *missing], env=environment,
                       check=True, stdout=subprocess.DEVNULL)
