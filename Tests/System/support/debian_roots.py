"""Debian roots for the package's tests (arm64 ones through qemu-user), and commands run in them.

The roots themselves are made once with mmdebstrap and cached in ~/.cache/lightorgan by
scripts/lib/debian-roots.sh (scripts/build-pi makes its build roots with the same library); this module
calls its functions, under the cache's lock:
  bookworm-arm64, trixie-arm64   plain Debian arm64 roots (minbase, made through qemu-user) where the
                                 package is installed with apt, as on Raspberry Pi OS bookworm and trixie
  bookworm-amd64, bookworm-armhf the same for a laptop, and a 32-bit Raspberry Pi OS's userland (essential
                                 variant, through qemu-arm) that install.sh must refuse (test_install_sh.py)
  sid-arm64-sysroot              sid's arm64 libraries, unpacked without emulation: the cross build links
                                 against it; the Pi's kernel, device trees and busybox come from it too
  bookworm-amd64-systemd         bookworm amd64 with systemd, D-Bus, avahi-daemon and the amd64 package's
                                 Depends: booted with systemd-nspawn, it runs the packaged unit for real
                                 (test_package_sandbox.py)
Each suite's apt package lists and downloaded .debs are kept beside them (apt/SUITE/lists, archives; for
amd64 apt/SUITE-amd64/…), fetched by the set-up that installs the package, beside the tests (`fetch_depends`):
the package is then installed in a root without a network.
"""
import hashlib
import json
import os
import shlex
import shutil
import subprocess
import tempfile

from support import caches

REPOSITORY = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
SUITES = ("bookworm", "trixie")


def _library(call):
    """Runs `call` (bash) with scripts/lib/debian-roots.sh sourced (it takes each root's lock); its last line."""
    script = f"source scripts/lib/prepare.sh; source scripts/lib/debian-roots.sh; {call}"
    result = subprocess.run(["bash", "-c", script], cwd=REPOSITORY, stdout=subprocess.PIPE, text=True)
    if result.returncode != 0:
        raise RuntimeError(f"scripts/lib/debian-roots.sh: `{call}` failed (status {result.returncode})")
    return result.stdout.strip().splitlines()[-1]


def arm64_root(suite):
    """The cached plain Debian arm64 root of `suite` (made when missing: minutes), qemu-user enabled."""
    return _library(f'ensure_arm64_root {shlex.quote(suite)}; ensure_arm64_binfmt; echo "$cache_root/{suite}-arm64"')


def root(suite, arch, variant="minbase"):
    """The cached plain Debian root of `suite` for `arch` (amd64 natively; arm64, armhf through qemu-user,
    enabled here) with mmdebstrap's `variant`, made when missing (minutes)."""
    return _library(f"ensure_root {shlex.quote(suite)} {shlex.quote(arch)} {shlex.quote(variant)}")


# What the booted root holds besides minbase: systemd as PID 1, the system bus and avahi-daemon (the receiver
# publishes through them), iproute2 (its test network), the package's Depends, so that `dpkg -i` installs it
# there without a network, and snapserver and snapclient (a room of a Snapcast house from inside the sandbox).
SYSTEMD_ROOT_PACKAGES = ("systemd-sysv,dbus,avahi-daemon,avahi-utils,openssl,adduser,libasound2,libavahi-client3,"
                         "libyaml-0-2,libmosquitto1,iproute2,snapserver,snapclient,shairport-sync")


def systemd_root():
    """The cached bookworm amd64 root with systemd (see SYSTEMD_ROOT_PACKAGES), made when missing (minutes)."""
    return _library('make_root "$cache_root/bookworm-amd64-systemd" --variant=minbase --architectures=amd64 '
                    f'--include={SYSTEMD_ROOT_PACKAGES} bookworm; echo "$cache_root/bookworm-amd64-systemd"')


# The Bluetooth guest's userland (test_bluetooth.py): trixie's BlueZ 5.82 and BlueALSA 4.3 (bookworm's BlueZ 5.66
# answers a phone's first A2DP set-up with the wrong transaction label, ../shared/guides/bluetooth.md), btvirt,
# the system bus, ALSA's tools, the libraries the receiver loads, and python3-dbus for the phone. The guest takes
# only the files it needs (support/bluetooth_guest.py).
BLUETOOTH_ROOT_PACKAGES = ("bluez,bluez-alsa-utils,libasound2-plugin-bluez,bluez-test-tools,alsa-utils,dbus,"
                           "libasound2t64,libavahi-client3,libyaml-0-2,libmosquitto1,libssl3t64,python3-dbus")


def bluetooth_root():
    """The cached trixie amd64 root with BlueZ and BlueALSA (see BLUETOOTH_ROOT_PACKAGES), made when missing
    (minutes)."""
    return _library('make_root "$cache_root/trixie-amd64-bluetooth" --variant=minbase --architectures=amd64 '
                    f'--include={BLUETOOTH_ROOT_PACKAGES} trixie; echo "$cache_root/trixie-amd64-bluetooth"')


def arm64_sysroot():
    """sid's arm64 sysroot (made by scripts/build-pi; made here when missing)."""
    return _library('ensure_arm64_sysroot; echo "$arm64_sysroot"')


def in_root(root, command, network=False, timeout=None, input=None, wrapper=()):
    """Runs `command` (a list) chrooted in `root`, with /proc and /dev, in a private mount namespace (the
    mounts vanish when it ends, even when it fails) and, unless `network`, a network namespace with only lo;
    `input` (text) on its stdin; through `wrapper` (support/beside.py's `chrt --idle 0`). Returns the
    CompletedProcess, stdout and stderr together as text."""
    setup = f"mount -t proc proc {shlex.quote(root)}/proc; mount --rbind /dev {shlex.quote(root)}/dev;"
    if not network:
        setup += " ip link set lo up;"
    inside = " ".join(shlex.quote(part) for part in command)
    chroot = (f"exec chroot {shlex.quote(root)} /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root "
              f"LANG=C.UTF-8 {inside}")
    unshare = ["unshare", "--mount", "--propagation", "private", *([] if network else ["--net"])]
    return subprocess.run([*wrapper, *unshare, "--", "bash", "-c", f"set -e; {setup} {chroot}"], stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True, timeout=timeout,
                          input=input)


def _apt_folder(suite, arch, *parts):
    """The suite's apt cache for `arch` (arm64: by the suite's name alone), or `parts` under it."""
    return caches.folder("apt", suite if arch == "arm64" else f"{suite}-{arch}", *parts)


def _apt_cache(suite, arch):
    return _apt_folder(suite, arch, "lists"), _apt_folder(suite, arch, "archives")


def _source_cache(suite, arch):
    """Where apt's own cache of the suite's lists (srcpkgcache.bin) is kept: made once by `fetch_depends`, copied
    with the lists into each copy of a root. apt checks it against the lists' sizes and times (cp -a keeps both)
    and makes it anew when they differ; where it holds, apt under qemu-user skips parsing the lists again, about
    40 of the 60 CPU seconds of each `apt-get install` or `satisfy` in an arm64 root."""
    return os.path.join(_apt_folder(suite, arch), "srcpkgcache.bin")


def copy_root(suite, root, destination, deb=None, arch="arm64", sources_from=None):
    """A throw-away copy of the cached `root` at `destination`, with the suite's cached apt lists and .debs
    for `arch` (and `deb` in its /tmp), and the apt sources of the root `sources_from` when given (a root whose
    own were removed, so that apt reads those lists again)."""
    with caches.locked(f"apt-{suite}-{arch}"):
        _copy_root(suite, root, destination, deb, arch)
    if sources_from:
        for name in ("sources.list", "sources.list.d"):
            if os.path.exists(os.path.join(sources_from, "etc", "apt", name)):
                subprocess.run(["cp", "-a", "-T", os.path.join(sources_from, "etc", "apt", name),
                                os.path.join(destination, "etc", "apt", name)], check=True)


def _copy_root(suite, root, destination, deb, arch):
    subprocess.run(["cp", "-a", root, destination], check=True)
    lists, archives = _apt_cache(suite, arch)
    subprocess.run(["cp", "-a", f"{lists}/.", f"{destination}/var/lib/apt/lists/"], check=True)
    subprocess.run(["cp", "-a", f"{archives}/.", f"{destination}/var/cache/apt/archives/"], check=True)
    source_cache = _source_cache(suite, arch)
    if os.path.exists(source_cache):
        subprocess.run(["cp", "-a", source_cache, f"{destination}/var/cache/apt/"], check=True)
    if deb:
        shutil.copy(deb, os.path.join(destination, "tmp"))


def fetch_depends(suite, root, deb, arch="arm64", extra=(), wrapper=()):
    """The package lists and the .debs that `apt install ./DEB` (and the Debian packages `extra`) needs in
    `suite`'s root for `arch`, into the cache: the lists from the last run first; when a dependency's version has
    left the archive since, anew. Done once per set of wants: a fetch that found them all leaves a note of what
    the cache held (`_FetchNote`), and while the lists are the same and those .debs are still cached, a run, or
    a later call in this one, that wants the same (the same Depends, whatever the package's version) skips the
    copy of the root and apt under qemu-user (tens of seconds each). apt runs through `wrapper` (support/beside.py's
    `chrt --idle 0`)."""
    lists, archives = _apt_cache(suite, arch)
    note = _FetchNote(suite, arch, deb, extra)
    with caches.locked(f"apt-{suite}-{arch}"):
        if note.still_holds(lists, archives):
            return
        _fetch_into_cache(suite, root, deb, arch, extra, lists, archives, wrapper)
        note.write(lists, archives)


def _fetch_into_cache(suite, root, deb, arch, extra, lists, archives, wrapper):
    with tempfile.TemporaryDirectory(prefix=f"pi-fetch-{suite}-") as work:
        copy = os.path.join(work, "root")
        _copy_root(suite, root, copy, deb, arch)
        shutil.copy("/etc/resolv.conf", os.path.join(copy, "etc", "resolv.conf"))
        name = f"/tmp/{os.path.basename(deb)}"
        wanted = " ".join(shlex.quote(part) for part in (name, *extra))
        download = f"apt-get install -y -q --download-only --no-install-recommends {wanted}"
        result = in_root(copy, ["bash", "-c", f"{download} || {{ apt-get update -q && {download}; }}"],
                         network=True, timeout=1200, wrapper=wrapper)
        if result.returncode != 0:
            raise RuntimeError(f"{suite}: fetching the package's Depends failed:\n{result.stdout[-2000:]}")
        subprocess.run(["cp", "-a", f"{copy}/var/lib/apt/lists/.", f"{lists}/"], check=True)
        subprocess.run(["cp", "-a", f"{copy}/var/cache/apt/archives/.", f"{archives}/"], check=True)
        made = os.path.join(copy, "var", "cache", "apt", "srcpkgcache.bin")
        if os.path.exists(made):
            kept = _source_cache(suite, arch)
            subprocess.run(["cp", "-a", made, kept + ".new"], check=True)
            os.replace(kept + ".new", kept)


class _FetchNote:
    """What a finished `fetch_depends` found in the cache, under a name made of what it wanted: the suite, the
    architecture, the package's Depends and Pre-Depends fields and the `extra` packages. It holds the lists' names,
    sizes and times (apt's lock file aside: each apt run touches it) and the cached .debs' names; it still holds
    while the lists are those and every one of those .debs is still there (the cache only grows, so what apt took
    then is there now)."""

    def __init__(self, suite, arch, deb, extra):
        fields = subprocess.run(["dpkg-deb", "-f", deb, "Depends", "Pre-Depends"], capture_output=True, text=True,
                                check=True).stdout
        self.suite, self.arch = suite, arch
        wanted = "\n".join([suite, arch, fields.strip(), *sorted(extra)])
        self.path = os.path.join(caches.folder("apt", "fetched"),
                                 f"{suite}-{arch}-{hashlib.sha256(wanted.encode()).hexdigest()[:16]}")

    @staticmethod
    def _lists(lists):
        return sorted(f"{entry.name} {entry.stat().st_size} {entry.stat().st_mtime_ns}"
                      for entry in os.scandir(lists) if entry.is_file() and entry.name != "lock")

    def still_holds(self, lists, archives):
        try:
            with open(self.path) as note:
                kept = json.load(note)
        except (OSError, ValueError):
            return False
        return (kept.get("lists") == self._lists(lists)
                and all(os.path.exists(os.path.join(archives, name)) for name in kept.get("debs", []))
                and os.path.exists(_source_cache(self.suite, self.arch)))

    def write(self, lists, archives):
        debs = sorted(name for name in os.listdir(archives) if name.endswith(".deb"))
        with open(self.path + ".new", "w") as note:
            json.dump({"lists": self._lists(lists), "debs": debs}, note)
        os.replace(self.path + ".new", self.path)
