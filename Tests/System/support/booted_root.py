"""A bookworm amd64 root with systemd (support.debian_roots.systemd_root), the amd64 package installed with dpkg
(postinst without a running systemd, as in a chroot), booted by systemd-nspawn: this machine's PID 1 is not systemd.

`BootedRoot(folder, deb, probe)` copies the root, installs the package and the static probe
(guests/sandbox-probe.c, built by the test), adds a drop-in that changes only the packaged unit's ExecStart (to add
`--output stdout`: the sandbox is the package's) and a private network of its own: lo and a veth pair, ADDRESS on
lt0. It waits up to 2 minutes for its systemd to say running (`.state`); `.run(command)` runs a command inside,
`.write(path, text)` writes a file in it, `.net(command)` one of this machine's in its network namespace only,
`.stop()` powers it off and removes the copy.
"""
import os
import shutil
import subprocess

from support import debian_roots
from support.apt_release import run
from support.processes import wait_for

ADDRESS = "10.77.9.2"


class BootedRoot:
    """A copy of the systemd root with the package installed, booted by systemd-nspawn (its log in `folder`).
    `run(command)` runs a command inside (all its namespaces); `net(command)` runs this machine's command in
    its network namespace only."""

    def __init__(self, folder, deb, probe):
        self.folder, self.root = folder, os.path.join(folder, "root")
        subprocess.run(["cp", "-a", debian_roots.systemd_root(), self.root], check=True)
        shutil.copy(deb, os.path.join(self.root, "tmp", "lightorgan.deb"))
        shutil.copy(probe, os.path.join(self.root, "usr/local/bin/sandbox-probe"))
        self.write("etc/systemd/system/lightorgan-receiver.service.d/test-output.conf",
                   "[Service]\nExecStart=\nExecStart=/usr/bin/lightorgan receive --config "
                   "/etc/lightorgan/lightorgan.yaml --output stdout\n")
        # A LAN of its own before anything starts: a veth pair (lt0 10.77.9.2/24, lt1 up), multicast on lo too.
        self.write("etc/systemd/system/test-network.service",
                   "[Unit]\nDefaultDependencies=no\nBefore=network-online.target avahi-daemon.service\n"
                   f"[Service]\nType=oneshot\nRemainAfterExit=yes\nExecStart=/bin/sh -c 'ip link set lo up multicast on; "
                   f"ip link add lt0 type veth peer name lt1; ip addr add {ADDRESS}/24 dev lt0; ip link set lt1 up; "
                   "ip link set lt0 up'\n[Install]\nWantedBy=network-online.target\n")
        os.makedirs(os.path.join(self.root, "etc/systemd/system/network-online.target.wants"), exist_ok=True)
        os.symlink("/etc/systemd/system/test-network.service",
                   os.path.join(self.root, "etc/systemd/system/network-online.target.wants/test-network.service"))
        self.write("etc/avahi/avahi-daemon.conf", "[server]\nuse-ipv4=yes\nuse-ipv6=no\nallow-interfaces=lt0\n"
                   "[publish]\npublish-workstation=no\npublish-hinfo=no\n")
        self.installed = debian_roots.in_root(self.root, ["dpkg", "-i", "/tmp/lightorgan.deb"], timeout=300)
        self._write_log("dpkg-i.txt", self.installed.stdout)
        self.log = open(os.path.join(folder, "nspawn.txt"), "w")
        self.nspawn = subprocess.Popen(["systemd-nspawn", "-D", self.root, "--boot", "--private-network",
                                        "--register=no", "--keep-unit", "--console=passive", "--quiet",
                                        "--machine=lightorgan-test"], stdout=self.log, stderr=subprocess.STDOUT)
        self.pid, self.state = None, ""

        def settled():
            if self._init_pid() is None:
                return self.nspawn.poll() is not None
            self.state = self.run(["systemctl", "is-system-running"]).stdout.strip()
            return self.state in ("running", "degraded")
        wait_for(settled, 120)

    def write(self, path, text):
        """Writes `text` to the file at `path` in the root (its folders made), seen inside at once."""
        full = os.path.join(self.root, path)
        os.makedirs(os.path.dirname(full), exist_ok=True)
        with open(full, "w") as file:
            file.write(text)

    def _write_log(self, name, text):
        with open(os.path.join(self.folder, name), "w") as file:
            file.write(text)

    def _init_pid(self):
        """The container's PID 1 (systemd), seen from here: the nspawn process's child named systemd."""
        try:
            with open(f"/proc/{self.nspawn.pid}/task/{self.nspawn.pid}/children") as children:
                found = children.read().split()
            self.pid = next((int(pid) for pid in found if open(f"/proc/{pid}/comm").read().strip() == "systemd"),
                            None)
        except OSError:
            self.pid = None
        return self.pid

    def run(self, command, timeout=60, **arguments):
        return run(["nsenter", "-t", str(self.pid), "-a", "--", *command], timeout=timeout, **arguments)

    def net(self, command, timeout=60):
        return run(["nsenter", "-t", str(self.pid), "-n", "--", *command], timeout=timeout)

    def stop(self):
        """Powers the container off (SIGTERM to nspawn: a clean shutdown), then removes the root."""
        if self.nspawn.poll() is None:
            self.nspawn.terminate()
            try:
                self.nspawn.wait(60)
            except subprocess.TimeoutExpired:
                self.nspawn.kill()
                self.nspawn.wait()
        self.log.close()
        shutil.rmtree(self.root, ignore_errors=True)
