"""QEMU 10 from bookworm-backports in a private prefix, for its `raspi4b` machine (BCM2711), which bookworm's
QEMU 7.2 lacks (raspi4b came in QEMU 9.0).

Beside the system's QEMU, never instead of it: a private apt configuration with
only `bookworm-backports` (on the mirror this machine already uses), `apt-get download` of the three QEMU
packages, `dpkg -x` into ~/.cache/lightorgan/qemu-bookworm-backports, the system's QEMU 7.2 untouched:
  qemu-system-arm     qemu-system-aarch64 itself; its Depends are all bookworm libraries, the same set as
                      bookworm's qemu-system-arm 7.2 (installed for the `pi` marker), so it runs as unpacked
  qemu-system-common  its loadable modules: QEMU loads modules only from its own build, so QEMU_MODULE_DIR
                      points at these first (it still probes its built-in folder too, and prints that 7.2's
                      ui-opengl.so there is refused: "Only modules from the same build can be loaded"; harmless)
  qemu-system-data    its firmware and data files (`-L`); a raspi booted with -kernel needs none of them, but
                      then nothing of 7.2's /usr/share/qemu is ever read by 10 either
"""
import glob
import os
import re
import shutil
import subprocess

from support import caches

PACKAGES = ("qemu-system-arm", "qemu-system-common", "qemu-system-data")
NAME = "qemu-bookworm-backports"


class Qemu:
    """The unpacked QEMU: `command(*arguments)` runs qemu-system-aarch64, with `env` for its modules."""

    def __init__(self, prefix):
        self.prefix = prefix
        self.binary = os.path.join(prefix, "usr/bin/qemu-system-aarch64")
        self.env = {"QEMU_MODULE_DIR": os.path.join(prefix, "usr/lib/x86_64-linux-gnu/qemu")}
        with open(os.path.join(prefix, "version")) as file:
            self.version = file.read().strip()

    def command(self, *arguments):
        return [self.binary, "-L", os.path.join(self.prefix, "usr/share/qemu"), *arguments]


def _mirror():
    """The Debian mirror this machine uses for bookworm (not the security one), from its apt sources."""
    sources = ""
    for path in [*glob.glob("/etc/apt/sources.list.d/*.sources"), *glob.glob("/etc/apt/sources.list.d/*.list"),
                 "/etc/apt/sources.list"]:
        if os.path.exists(path):
            with open(path) as file:
                sources += file.read() + "\n"
    for line in sources.splitlines():
        found = re.match(r"\s*(?:URIs:\s*|deb\s+(?:\[[^]]*\]\s+)?)(\S+)", line)
        if found and "security" not in found[1]:
            return found[1]
    return "http://deb.debian.org/debian"


def qemu():
    """The cached QEMU 10 (downloaded and unpacked when missing: needs the network, seconds)."""
    prefix = caches.folder(NAME)
    with caches.locked(NAME):
        if not os.path.exists(os.path.join(prefix, "version")):
            _unpack(prefix)
    return Qemu(prefix)


def _unpack(prefix):
    for entry in os.listdir(prefix):  # what a broken earlier attempt left
        shutil.rmtree(os.path.join(prefix, entry), ignore_errors=True)
    apt = os.path.join(prefix, "apt")
    debs = os.path.join(prefix, "debs")
    for folder in (f"{apt}/lists/partial", f"{apt}/archives/partial", debs):
        os.makedirs(folder)
    with open(f"{apt}/sources.list", "w") as file:
        file.write(f"deb {_mirror()} bookworm-backports main\n")
    options = ["-o", f"Dir::Etc::SourceList={apt}/sources.list", "-o", "Dir::Etc::SourceParts=-",
               "-o", f"Dir::State::Lists={apt}/lists", "-o", f"Dir::Cache::Archives={apt}/archives",
               "-o", "APT::Get::List-Cleanup=0", "-o", "APT::Sandbox::User=root"]
    subprocess.run(["apt-get", *options, "update", "-qq"], check=True, stdout=subprocess.DEVNULL)
    subprocess.run(["apt-get", *options, "download", *(f"{name}/bookworm-backports" for name in PACKAGES)],
                   cwd=debs, check=True, stdout=subprocess.DEVNULL)
    for deb in sorted(glob.glob(f"{debs}/*.deb")):
        subprocess.run(["dpkg-deb", "-x", deb, prefix], check=True)
    binary = os.path.join(prefix, "usr/bin/qemu-system-aarch64")
    missing = [line.strip() for line in subprocess.run(["ldd", binary], capture_output=True, text=True).stdout
               .splitlines() if "not found" in line]
    if missing:
        raise RuntimeError(f"QEMU from bookworm-backports needs libraries this machine lacks: {missing}")
    version = subprocess.run([binary, "--version"], capture_output=True, text=True, check=True).stdout
    shutil.rmtree(debs)
    shutil.rmtree(apt)
    with open(os.path.join(prefix, "version"), "w") as file:  # written last: the prefix is complete
        file.write(version.splitlines()[0] + "\n")
