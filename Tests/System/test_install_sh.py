"""install.sh where a Pi owner meets it: in fresh Debian roots (bookworm and trixie arm64, bookworm amd64) from
the served repository, a second run that changes nothing, and its refusals of a 32-bit Raspberry Pi OS, an
ARMv6 Pi and a release it does not serve (in overlays of the cached roots: the upper folder shows what it
wrote). The set-up (repositories, server, roots): support/apt_release.py.
"""
import os
import re

from support import debian_roots
import pytest

from support.apt_release import (  # noqa: F401 (fetch_up_front, prepare_beside: conftest runs them)
    CONFFILE,
    INSTALL_ROOTS,
    KEYRING,
    SOURCES,
    URL,
    differences,
    fetch_up_front,
    install_sh,
    installed_version,
    prepare_beside,
    read_in_root,
    refused,
    release_version,
    sh_in_root,
    snapshot,
    tail,
)

pytestmark = [pytest.mark.release, pytest.mark.package, pytest.mark.timeout(1800)]


# -- install.sh in fresh roots ----------------------------------------------------------------

@pytest.mark.slow
@pytest.mark.parametrize("suite, arch", INSTALL_ROOTS, ids=[f"{suite}-{arch}" for suite, arch in INSTALL_ROOTS])
def test_install_sh_installs_the_package_and_a_second_run_changes_nothing(suite, arch, server, prepared_roots,
                                                                          root_folder, tmp_path, check, figure):
    name, version = f"{suite} {arch}", server.versions["N"]
    root = prepared_roots.copy(suite, arch, root_folder)
    server.flip("N")
    first, seconds = install_sh(root, tmp_path / "install-1.txt")
    print(tail(first.stdout, 12))
    installed = installed_version(root)
    check(f"{name}: `LIGHTORGAN_REPO={URL} sh` with install.sh on stdin exits 0", first.returncode == 0,
          f"status {first.returncode}: {tail(first.stdout, 6)}")
    check(f"{name}: lightorgan {version} is installed", installed == version, f"installed {installed}")
    check(f"{name}: install.sh says it installed lightorgan {version}",
          f"installed lightorgan {version}" in first.stdout, tail(first.stdout, 6))
    figure(f"{name}: install.sh installed the package in {seconds:.1f} s")
    shown = sh_in_root(root, "lightorgan --version", network=False)
    check(f"{name}: the installed lightorgan --version exits 0", shown.returncode == 0,
          f"exit {shown.returncode}: {shown.stdout.strip()[-200:]}")
    check(f"{name}: the installed lightorgan --version prints {release_version()} (LightOrganVersion.swift)",
          shown.stdout.strip() == release_version(), shown.stdout.strip()[-200:])
    helped = sh_in_root(root, "lightorgan --help", network=False)
    check(f"{name}: the installed lightorgan runs (--help exits 0)", helped.returncode == 0,
          f"exit {helped.returncode}: {helped.stdout.strip()[-200:]}")
    check(f"{name}: its --help starts with OVERVIEW: ", helped.stdout.startswith("OVERVIEW: "), helped.stdout[:200])
    check(f"{name}: the repository's key is in {KEYRING}",
          read_in_root(root, KEYRING) == read_in_root(server.path("N"), "lightorgan-archive-keyring.gpg"))
    expected = (f"Types: deb\nURIs: {URL}\nSuites: stable\nComponents: main\nArchitectures: {arch}\n"
                f"Signed-By: {KEYRING}\n")
    sources = read_in_root(root, SOURCES, "r")
    check(f"{name}: {SOURCES} names the repository, suite stable, main, {arch}, Signed-By the key",
          sources == expected, repr(sources))

    before = snapshot(root)
    files = {path: read_in_root(root, path) for path in (KEYRING, SOURCES, CONFFILE, "/var/lib/dpkg/status")}
    second, again = install_sh(root, tmp_path / "install-2.txt", repo=False)
    print(tail(second.stdout, 6))
    said = second.stdout
    check(f"{name}: a second run (the address written in install.sh) exits 0", second.returncode == 0,
          f"status {second.returncode}: {tail(said, 6)}")
    check(f"{name}: the second run says lightorgan {version} is installed",
          f"lightorgan {version} is installed" in said, tail(said, 6))
    check(f"{name}: the second run says it installs, adds and updates nothing",
          not re.search(r"installing lightorgan|installed the repository's key|added the apt source|apt-get update",
                        said), tail(said, 6))
    same = [path for path, content in files.items() if read_in_root(root, path) == content]
    difference = differences(before, snapshot(root))
    check(f"{name}: the second run leaves key, source, conffile and dpkg's status byte-identical",
          len(same) == len(files), f"changed: {sorted(set(files) - set(same))}")
    check(f"{name}: the second run touches no file under /etc, /usr, /var/lib", not difference, difference)
    figure(f"{name}: install.sh's second run (nothing to do) took {again:.1f} s")


# -- refusals ---------------------------------------------------------------------------------

@pytest.mark.slow
def test_install_sh_refuses_a_32_bit_raspberry_pi_os(tmp_path, check):
    result, written = refused(debian_roots.root("bookworm", "armhf", "essential"), tmp_path)
    check("armhf (a 32-bit Raspberry Pi OS): install.sh exits 1", result.returncode == 1, f"exit {result.returncode}")
    check("armhf: install.sh says (only) that lightorgan needs the 64-bit Raspberry Pi OS",
          "needs the 64-bit Raspberry Pi OS" in (result.refusal or ""), result.stdout.strip())
    check("armhf: install.sh changes nothing in the root", not written, written)


def _fake_uname(upper):
    """A `uname` that says armv6l (a Pi 1 or Zero's CPU), in /tmp/armv6 of the overlay."""
    folder = os.path.join(upper, "tmp", "armv6")
    os.makedirs(folder)
    with open(os.path.join(folder, "uname"), "w") as uname:
        uname.write("#!/bin/sh\necho armv6l\n")
    os.chmod(os.path.join(folder, "uname"), 0o755)


@pytest.mark.slow
def test_install_sh_refuses_an_armv6_pi(tmp_path, check):
    result, written = refused(debian_roots.root("bookworm", "armhf", "essential"), tmp_path, prepare=_fake_uname,
                               path="/tmp/armv6:/usr/sbin:/usr/bin:/sbin:/bin")
    check("armhf on an ARMv6 CPU (uname -m: armv6l): install.sh exits 1", result.returncode == 1,
          f"exit {result.returncode}")
    check("ARMv6: install.sh says (only) that ARMv6 is not supported",
          re.search(r"ARMv6 CPU .*: not supported", result.refusal or ""), result.stdout.strip())
    check("ARMv6: install.sh changes nothing in the root", not written, written)


BULLSEYE = """PRETTY_NAME="Debian GNU/Linux 11 (bullseye)"
NAME="Debian GNU/Linux"
VERSION_ID="11"
VERSION="11 (bullseye)"
VERSION_CODENAME=bullseye
ID=debian
"""


def _bullseye(upper):
    os.makedirs(os.path.join(upper, "etc"))
    with open(os.path.join(upper, "etc", "os-release"), "w") as release:
        release.write(BULLSEYE)


@pytest.mark.slow
def test_install_sh_refuses_a_release_it_does_not_serve(tmp_path, check):
    result, written = refused(debian_roots.root("bookworm", "amd64"), tmp_path, prepare=_bullseye)
    check("an os-release saying bullseye: install.sh exits 1", result.returncode == 1, f"exit {result.returncode}")
    check("bullseye: install.sh says (only) that the bullseye release is not served",
          "bullseye release is not served" in (result.refusal or ""), result.stdout.strip())
    check("bullseye: …that it serves bookworm and trixie", "bookworm (12) and trixie (13)" in (result.refusal or ""),
          result.stdout.strip())
    check("bullseye: install.sh changes nothing in the root", not written, written)
