"""The release channel's set-up for its tests (test_release_repository.py, test_install_sh.py,
test_upgrade.py): scripts/release's signed apt repositories, a server for them, and Debian roots to install
into, without a Pi.

- The repositories (`repositories`, made once a session): scripts/release with the arm64 and amd64 packages
  makes a reprepro repository (suite stable, component main), signed with a test key given as
  LIGHTORGAN_SIGNING_KEY (the release workflow gives the project's key so): version N, and N+1 (the same
  packages repacked with a higher Version); a third one, with N+2, signed with a throwaway key ("another
  key"). `server` serves them by `python3 -m http.server` from a second network namespace
  (10.77.4.2:8080) under one folder where `current` is a symlink the tests flip, so the address in the
  installed .sources stays the same, as on GitHub Pages.
- The roots (`prepared_roots`, once a session): throw-away copies of plain Debian roots (bookworm and trixie
  arm64 through qemu-user, bookworm amd64 natively; no systemd running) with Debian's sources disabled and
  the package's Depends preinstalled from the cached .debs: the only repository apt sees is ours, and
  nothing comes from the network but our server (the roots are fetched by `fetch_up_front`, the .debs of the
  Depends beside the tests, before any test's namespace without a network).
- install.sh is fed on stdin, as `curl -fsSL URL/install.sh | sudo sh` does, to dash (`install_sh`), or
  chrooted in an overlay of a cached root whose upper folder shows what it wrote (`refused`).
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
from support.packages import package_path
from support.processes import wait_for

REPOSITORY = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
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


def _release_tests(request):
    """The selected tests of the modules that share this set-up (their `fetch_up_front` is this one)."""
    return [item for item in request.session.items
            if getattr(getattr(item, "module", None), "fetch_up_front", None) is fetch_up_front]


def _slow_tests_selected(request):
    """Whether a selected slow test is in a module that shares this set-up."""
    return any(item.get_closest_marker("slow") for item in _release_tests(request))


def fetch_up_front(request):
    """The roots (made once: minutes). The .debs of the package's Depends are fetched beside the tests, with the
    roots that install them (`PreparedRoots`): the package is not built yet when this runs beside the builds."""
    if not _slow_tests_selected(request):
        return
    for suite, arch in INSTALL_ROOTS:
        debian_roots.root(suite, arch)
    debian_roots.root("bookworm", "armhf", "essential")


def run(command, **arguments):
    return subprocess.run(command, capture_output=True, text=True, **arguments)


def tail(text, lines=15):
    return "\n".join(text.strip().splitlines()[-lines:])


# -- the repositories ----------------------------------------------------------------------------

def fingerprints(keyring):
    """The fingerprints of the primary keys in an exported keyring."""
    with tempfile.TemporaryDirectory() as home:
        output = run(["gpg", "--homedir", home, "--batch", "--with-colons", "--show-keys", keyring]).stdout
    lines = output.splitlines()
    return [line.split(":")[9] for previous, line in zip(lines, lines[1:])
            if previous.startswith("pub:") and line.startswith("fpr:")]


def gpgv(keyring, *files):
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
            raise RuntimeError(f"scripts/release ({name}) failed ({result.returncode}):\n{tail(result.stderr, 30)}")
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


@pytest.fixture(scope="session")
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
    """Per (suite, arch), once a session: a copy of the cached root with the package's Depends installed
    from the cached .debs (fetched first, when the cache lacks them), then Debian's sources, lists and .debs
    removed. Each is made beside the tests (support/beside.py) from the session's start when `start` was called,
    else when a test first takes a copy. Tests take copies of it."""

    def __init__(self, folder, config, beside):
        # The packages, asked for by each root beside the tests (support/packages.py: they may be being built).
        self.folder, self.config, self.beside = folder, config, beside

    def start(self):
        for suite, arch in INSTALL_ROOTS:
            self.beside.start(self._name(suite, arch), self._maker(suite, arch))

    def template(self, suite, arch):
        """The root itself (made beside the tests, or now), for a set-up that copies it with more: the package
        installed in it (support/raspberry_pi.py's `Installs`), Debian's shairport-sync (test_own_sound.py)."""
        return self.beside.result(self._name(suite, arch), self._maker(suite, arch))

    def copy(self, suite, arch, destination):
        subprocess.run(["cp", "-a", self.template(suite, arch), destination], check=True)
        return destination

    @staticmethod
    def _name(suite, arch):
        return f"the {suite} {arch} root with the package's Depends"

    def _maker(self, suite, arch):
        def make(wrapper):
            cached, deb = debian_roots.root(suite, arch), package_path(self.config, arch)
            debian_roots.fetch_depends(suite, cached, deb, arch, wrapper=wrapper)
            path = os.path.join(self.folder, f"{suite}-{arch}")
            debian_roots.copy_root(suite, cached, path, arch=arch)
            depends = run(["dpkg-deb", "-f", deb, "Depends"]).stdout.strip()
            script = f"""set -e
export DEBIAN_FRONTEND=noninteractive
apt-get satisfy -y -q --no-install-recommends {shlex.quote(depends)}
rm -f /etc/apt/sources.list /etc/apt/sources.list.d/*
apt-get clean
find /var/lib/apt/lists -maxdepth 1 -type f -delete"""
            result = debian_roots.in_root(path, ["sh", "-c", script], timeout=1200, wrapper=wrapper)
            if result.returncode != 0:
                raise RuntimeError(f"{suite} {arch}: preinstalling the Depends failed:\n{tail(result.stdout, 30)}")
            return path
        return make


@pytest.fixture(scope="session")
def prepared_roots(tmp_path_factory, request, beside):
    folder = tmp_path_factory.mktemp("release-roots")
    roots = PreparedRoots(str(folder), request.config, beside)
    yield roots
    # A few hundred MB each; what is still being made beside the tests is stopped with the session (its own
    # folder is left for pytest's own clean-up of old runs).
    for suite, arch in INSTALL_ROOTS:
        if beside.done(roots._name(suite, arch)):
            shutil.rmtree(os.path.join(folder, f"{suite}-{arch}"), ignore_errors=True)


def prepare_beside(request, beside):
    """The roots, made beside the tests from the session's start when a selected release test takes copies of them
    (the set-ups that copy one with more start theirs)."""
    if any("prepared_roots" in item.fixturenames for item in _release_tests(request)):
        request.getfixturevalue("prepared_roots").start()


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


def read_in_root(root, path, mode="rb"):
    """The file at `path` inside `root`, or None."""
    try:
        with open(os.path.join(root, path.lstrip("/")), mode) as file:
            return file.read()
    except OSError:
        return None


def snapshot(root, folders=("etc", "usr", "var/lib")):
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


def differences(before, after):
    changed = sorted(path for path in before.keys() | after.keys() if before.get(path) != after.get(path))
    return f"{len(changed)} changed: {', '.join(changed[:8])}" if changed else ""


def state_files(root):
    """The files of the receiver's state folder: name → SHA-256."""
    folder = os.path.join(root, STATE.lstrip("/"))
    if not os.path.isdir(folder):
        return {}
    return {name: hashlib.sha256(read_in_root(root, f"{STATE}/{name}")).hexdigest()
            for name in sorted(os.listdir(folder)) if os.path.isfile(os.path.join(folder, name))}


# -- install.sh in an overlay of a cached root ---------------------------------------------------

def upper_state(upper):
    """Every file and folder under an overlay's upper folder: its mode, size and mtime."""
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
    before = upper_state(upper)
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
    return result, differences(before, upper_state(upper))


def install_script():
    """scripts/packaging/install.sh with this repository's address, as scripts/release writes it."""
    with open(os.path.join(REPOSITORY, "scripts/packaging/install.sh")) as script:
        return script.read().replace("@REPO_URL@", URL)


def refused(lower, tmp_path, prepare=None, path=None):
    """install.sh (its text on dash's stdin) in an overlay of `lower`: (CompletedProcess, what it wrote);
    its .refusal is its refusal line, or None when it said anything else."""
    command = ["env", f"LIGHTORGAN_REPO={URL}", *([f"PATH={path}"] if path else []), "sh"]
    result, written = in_overlay(lower, str(tmp_path / "overlay"), command, input=install_script(), prepare=prepare)
    print(result.stdout)
    lines = result.stdout.strip().splitlines()
    result.refusal = lines[0] if len(lines) == 1 and lines[0].startswith("lightorgan install: ") else None
    return result, written
