"""What the suite keeps between runs (Debian roots, the music corpus, the kernel's gpio-sim module):
under `$XDG_CACHE_HOME/lightorgan` (`~/.cache/lightorgan`), filled under a lock so that two runs on
one machine never write the same folder at once, and installing Debian packages the same way."""
import contextlib
import fcntl
import os
import subprocess


def folder(*parts):
    """A folder under the cache, made if missing."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    path = os.path.join(base, "lightorgan", *parts)
    os.makedirs(path, exist_ok=True)
    return path


@contextlib.contextmanager
def locked(name):
    """Holds the cache's lock `name` (a file beside the cached folders) for the `with` block."""
    with open(os.path.join(folder(), f"{name}.lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
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
    """apt-get installs what is missing of `packages` (update first), waiting for dpkg's lock."""
    missing = missing_packages(packages)
    if not missing:
        return
    environment = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    apt = ["apt-get", "-o", "DPkg::Lock::Timeout=600", "-q"]
    subprocess.run([*apt, "update", "-qq"], env=environment, check=True, stdout=subprocess.DEVNULL)
    subprocess.run([*apt, "install", "-y", "-qq", "--no-install-recommends", *missing], env=environment,
                   check=True, stdout=subprocess.DEVNULL)
