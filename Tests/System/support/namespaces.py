"""Network namespaces of the tests' own: nothing a test does reaches the machine's network, and a
`lightorgan receive` service running on the machine (ports 8181, 8443) never meets the suite.

- `private_network()` moves the test process itself (its main thread, and every process and thread
  it starts from then on) into a new namespace with only `lo`, and back when the test ends: the
  `netns` fixture. Interface names and addresses inside are the test's alone, so fixed ones
  (10.77.0.1, "olaveth0") cannot collide with another test or another run.
- `Peer` is a second namespace joined to the current one by a veth pair: a daemon's "other host"
  (olad, the receiver behind the page, a second mDNS responder).
- `MountHost` is another "host" on the current network namespace (the same loopback) with mounts
  of its own: its own D-Bus system bus and avahi-daemon under private /run folders.

A namespace is held by a child `sleep infinity` with a parent-death signal; killing it removes the
namespace and its veth pair.
"""
import contextlib
import ctypes
import os
import subprocess
import time

CLONE_NEWNET = 0x40000000
_libc = ctypes.CDLL(None, use_errno=True)


def _setns(path):
    descriptor = os.open(path, os.O_RDONLY)
    try:
        if _libc.setns(descriptor, CLONE_NEWNET) != 0:
            error = ctypes.get_errno()
            raise OSError(error, f"setns({path}): {os.strerror(error)} (the system tests run as root)")
    finally:
        os.close(descriptor)


def run(*command):
    """Runs a command; its stderr in the exception when it fails."""
    result = subprocess.run(command, capture_output=True, text=True)
    if result.returncode != 0:
        raise RuntimeError(f"{' '.join(command)} failed ({result.returncode}): {result.stderr.strip()}")
    return result.stdout


def _holder(*unshare_options, setup="", namespace="net"):
    """A child `unshare --net … sleep infinity` (`namespace="mount"`: `unshare --mount …`) that holds
    a new namespace; returned once it exists."""
    kind = {"net": "net", "mount": "mnt"}[namespace]
    own = os.readlink(f"/proc/thread-self/ns/{kind}")
    script = f"{setup}\nexec setpriv --pdeathsig KILL sleep infinity" if setup else None
    command = ["unshare", f"--{namespace}", *unshare_options]
    command += ["sh", "-ec", script] if script else ["setpriv", "--pdeathsig", "KILL", "sleep", "infinity"]
    holder = subprocess.Popen(command, stdin=subprocess.DEVNULL)
    deadline = time.monotonic() + 5
    while True:
        try:
            if os.readlink(f"/proc/{holder.pid}/ns/{kind}") != own and (
                    not script or os.readlink(f"/proc/{holder.pid}/exe").endswith("/sleep")):
                return holder
        except (FileNotFoundError, PermissionError):
            pass
        if holder.poll() is not None or time.monotonic() > deadline:
            holder.kill()
            raise RuntimeError(f"{' '.join(command)} did not make a namespace (status {holder.poll()})")
        time.sleep(0.005)


@contextlib.contextmanager
def private_network():
    """The test process in a new network namespace with `lo` up, for the `with` block."""
    original = os.open("/proc/thread-self/ns/net", os.O_RDONLY)
    holder = _holder()
    try:
        _setns(f"/proc/{holder.pid}/ns/net")
        try:
            run("ip", "link", "set", "lo", "up")
            yield holder
        finally:
            if _libc.setns(original, CLONE_NEWNET) != 0:
                raise OSError(ctypes.get_errno(), "could not return to the original network namespace")
    finally:
        os.close(original)
        holder.kill()
        holder.wait()


class _Held:
    """A namespace held by `self.holder`; `close()` (or the end of a `with` block) ends the holder, and
    with it the namespace and its veth pairs. Processes inside keep running (and their mounts with
    them): stop them first."""

    holder = None

    def close(self):
        if self.holder is not None and self.holder.poll() is None:
            self.holder.kill()
            self.holder.wait()
        self.holder = None

    def __enter__(self):
        return self

    def __exit__(self, *exception):
        self.close()


class Peer(_Held):
    """A namespace joined to the current one by a veth pair: `test_address`/24 on `test_veth` here,
    `address`/24 on the other side, `lo` up on both. With `private_mounts`, it also has a mount
    namespace of its own where those folders are empty tmpfs (a host with its own /run/dbus and
    /run/avahi-daemon); `wrapper` then enters both."""

    def __init__(self, address, test_address, veth, private_mounts=()):
        self.address, self.test_address = address, test_address
        self.test_veth, self.veth = veth + "0", veth + "1"
        options = ("--mount", "--propagation", "private") if private_mounts else ()
        setup = "\n".join(f"mkdir -p {folder} && mount -t tmpfs tmpfs {folder}" for folder in private_mounts)
        self.holder = _holder(*options, setup=setup)
        self.mounts = bool(private_mounts)
        try:
            inside = self.wrapper
            run("ip", "link", "add", self.test_veth, "type", "veth", "peer", "name", self.veth,
                "netns", str(self.holder.pid))
            run("ip", "address", "add", f"{test_address}/24", "brd", "+", "dev", self.test_veth)
            run("ip", "link", "set", self.test_veth, "up")
            run(*inside, "ip", "link", "set", "lo", "up")
            run(*inside, "ip", "address", "add", f"{address}/24", "brd", "+", "dev", self.veth)
            run(*inside, "ip", "link", "set", self.veth, "up")
        except BaseException:
            self.close()
            raise

    @property
    def wrapper(self):
        """The command prefix that runs a command inside (network, and mounts when private)."""
        pid = self.holder.pid
        return ["nsenter", f"--net=/proc/{pid}/ns/net", *([f"--mount=/proc/{pid}/ns/mnt"] if self.mounts else [])]

    def popen(self, command, **popen_args):
        """subprocess.Popen of `command` inside, killed when the test process's main thread ends."""
        return subprocess.Popen([*self.wrapper, "setpriv", "--pdeathsig", "KILL", *command], **popen_args)


class MountHost(_Held):
    """A mount namespace of its own in the current network namespace: another "host" on the same
    loopback, where `private_mounts` are empty tmpfs folders (its own /run/dbus and /run/avahi-daemon,
    so its own system bus and mDNS responder). `wrapper` runs a command inside; `path(p)` is where
    the test process sees the host's file `p`."""

    def __init__(self, private_mounts):
        setup = "\n".join(f"mkdir -p {folder} && mount -t tmpfs tmpfs {folder}" for folder in private_mounts)
        self.holder = _holder("--propagation", "private", setup=setup or ":", namespace="mount")

    @property
    def wrapper(self):
        return ["nsenter", f"--mount=/proc/{self.holder.pid}/ns/mnt"]

    def path(self, path):
        return f"/proc/{self.holder.pid}/root{path}"

