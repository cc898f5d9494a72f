"""A "host" with its own D-Bus system bus and avahi-daemon, for DNS-SD through a real responder.

An `AvahiHost` is a mount namespace of its own (support.namespaces.MountHost) in the test's network
namespace (lo only: nothing leaves the machine, no other Avahi on the LAN can interfere), with
private tmpfs /run/dbus and /run/avahi-daemon. There it runs its own `dbus-daemon --system` and its
own avahi-daemon (loopback only); every process of that host (lightorgan, avahi-browse,
avahi-publish) is run through `host.wrapper`. Two such hosts are two machines' responders: they talk
real mDNS over multicast on the shared loopback.

A second host publishes no address records (`publish_addresses=False`): both responders share
127.0.0.1, whose reverse record would otherwise conflict forever. Its services still take part in
name conflicts.
"""
import os
import socket
import subprocess

from .namespaces import MountHost
from .processes import Process, wait_for

FOLDERS = ("/run/dbus", "/run/avahi-daemon")


class AvahiHost:
    """A mount namespace with its own system bus (`start_bus`) and avahi-daemon (`start_avahi`),
    host name `host_name`.local; their output is in `folder` (avahi-HOST.err, dbus-HOST.err)."""

    def __init__(self, folder, host_name, publish_addresses=True):
        self.folder, self.host_name = folder, host_name
        self.conf = os.path.join(folder, f"avahi-{host_name}.conf")
        with open(self.conf, "w") as conf:
            conf.write(f"[server]\nhost-name={host_name}\nuse-ipv4=yes\nuse-ipv6=no\nallow-interfaces=lo\n"
                       "ratelimit-interval-usec=0\n[publish]\n"
                       + ("" if publish_addresses else "publish-addresses=no\n")
                       + "publish-workstation=no\npublish-hinfo=no\n")
        self.bus = self.avahi = None
        self.starts = 0
        self.mounts = MountHost(FOLDERS)

    @property
    def wrapper(self):
        """The command prefix that runs a command on this host."""
        return self.mounts.wrapper

    def start_bus(self):
        """Its own `dbus-daemon --system`, returned once its socket accepts connections (the file exists from
        bind(), before listen(): avahi-daemon connecting in between was refused)."""
        self.bus = Process(self.folder, f"dbus-{self.host_name}",
                           ["dbus-daemon", "--system", "--nofork", "--nopidfile"], wrapper=self.wrapper)
        socket_path = self.mounts.path("/run/dbus/system_bus_socket")

        def accepting():
            with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as client:
                try:
                    client.connect(socket_path)
                    return True
                except OSError:
                    return False
        if not wait_for(lambda: accepting() or not self.bus.alive(), 5) or not self.bus.alive():
            raise RuntimeError(f"dbus-daemon did not start: {self.bus.log()[-300:]}")

    def start_avahi(self, wait=True):
        """Its avahi-daemon; with `wait`, returned once it has claimed its host name."""
        self.starts += 1
        self.avahi = Process(self.folder, f"avahi-{self.host_name}-{self.starts}",
                             ["avahi-daemon", "-f", self.conf, "--no-drop-root", "--no-chroot", "--no-rlimits"],
                             wrapper=self.wrapper)
        if wait and not wait_for(lambda: "Server startup complete" in self.avahi.log() or not self.avahi.alive(), 10):
            raise RuntimeError(f"avahi-daemon did not start: {self.avahi.log()[-300:]}")
        if not self.avahi.alive():
            raise RuntimeError(f"avahi-daemon exited: {self.avahi.log()[-300:]}")

    def stop_avahi(self):
        if self.avahi is not None:
            self.avahi.stop()
            self.avahi = None

    def run(self, command, timeout):
        """`command` on this host: (exit status, stdout, stderr)."""
        result = subprocess.run([*self.wrapper, *command], capture_output=True, text=True, timeout=timeout,
                                stdin=subprocess.DEVNULL)
        return result.returncode, result.stdout, result.stderr

    def close(self):
        """Stops its daemons and ends its mount namespace (stop its other processes first)."""
        try:
            self.stop_avahi()
            if self.bus is not None:
                self.bus.stop()
                self.bus = None
        finally:
            self.mounts.close()

    def __enter__(self):
        return self

    def __exit__(self, *exception):
        self.close()

