"""Fixtures shared by the system tests; the run's other concerns are plugins of their own, in support/:

- selection.py: scripts/test's options, the quick tier (`--quick`: the tests that boot no emulated machine, need no
  package and time nothing), and the order while the packages build beside the tests;
- up_front.py: everything from the network fetched before the first test (the markers' Debian packages, each
  module's `fetch_up_front()`; `--fetch-only`), then the set-ups beside the tests (support/beside.py);
- run_summary.py: `check(name, ok, detail)` (a named check, one of pytest's subtests: a failed one is reported with
  its detail and does not stop the test, which fails at its end), `figure(text)`, and where the time went;
- green_means_tested.py: a run that skipped or left out a test fails;
- raspberry_pi.py, apt_release.py, page_music.py, pixel_row.py, sound_signals.py: the fixtures of the emulated Pis,
  the release channel, the page's recording, the strip's frames sender, the own sound's and rooms' signals.

Here:
- The built executable `lightorgan` (scripts/test's one build, as the amd64 package ships it: the Swift runtime and
  libgpiod 2 linked in, stripped), the packages, and `repository`. `lightorgan` is built when missing (a no-op
  after `scripts/test`, which builds everything first).
- `spawn(name, *arguments)` runs the executable (or `spawn.command(name, [...])` anything else),
  its output in the test's folder; every process is stopped when the test ends, whatever happened.
- `netns`: the test runs in a network namespace of its own (lo only): its ports, veth pairs and
  addresses are its alone.
- `page_host` (the receiver behind a veth), `browser(name, …)` (headless Chromium) and `engine(name, music)`
  (Chromium, WebKitGTK or Firefox ESR): the page's tests.
"""
import os
import subprocess
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from support.avahi import AvahiHost  # noqa: E402
from support.namespaces import private_network  # noqa: E402
from support.olad import Olad  # noqa: E402
from support.packages import package_path  # noqa: E402
from support.processes import Spawner  # noqa: E402

pytest_plugins = ["support.selection", "support.up_front", "support.run_summary", "support.green_means_tested",
                  "support.raspberry_pi", "support.apt_release", "support.page_music", "support.pixel_row",
                  "support.sound_signals"]

REPOSITORY = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))


# -- the executables -----------------------------------------------------------------------------

def _built():
    """The executable as scripts/test builds it and the amd64 package holds it (scripts/lib/prepare.sh's
    `shipped_lightorgan`): as built, else built now."""
    path = os.path.join(REPOSITORY, ".build", "shipped", "lightorgan")
    if not os.path.exists(path):
        subprocess.run(["bash", "-c", "source scripts/lib/prepare.sh && shipped_lightorgan"], cwd=REPOSITORY,
                       check=True, capture_output=True, text=True)
    return path


@pytest.fixture(scope="session")
def repository():
    """The repository's root folder."""
    return REPOSITORY


@pytest.fixture(scope="session")
def lightorgan():
    """The executable, as the amd64 package ships it (the same file: scripts/build-pi amd64 packages this build)."""
    return _built()


@pytest.fixture(scope="session")
def pi_package(request):
    """The arm64 Debian package: --pi-package, the one being built beside the tests (--packages-building), else
    built by scripts/build-pi arm64 (minutes). A set-up beside the tests asks support/packages.py directly."""
    return package_path(request.config, "arm64")


@pytest.fixture(scope="session")
def amd64_package(request):
    """The amd64 Debian package: --amd64-package, the one being built beside the tests, else built by
    scripts/build-pi amd64 (minutes)."""
    return package_path(request.config, "amd64")


@pytest.fixture(scope="session")
def unpacked(tmp_path_factory, amd64_package):
    """The amd64 package's files (dpkg-deb -x)."""
    folder = str(tmp_path_factory.mktemp("unpacked"))
    subprocess.run(["dpkg-deb", "-x", amd64_package, folder], check=True)
    return folder


@pytest.fixture(scope="session")
def kernel_guest(lightorgan, tmp_path_factory, request):
    """Debian's kernel in QEMU with real kernel devices (support/kernel_vm.py), booted once a session for
    test_kernel_devices.py and test_bluetooth.py: its Guest. The Bluetooth part runs in the same boot when
    test_bluetooth.py is selected."""
    from support import kernel_vm
    bluetooth = any(item.module.__name__.endswith("test_bluetooth") for item in request.session.items)
    return kernel_vm.booted(lightorgan, str(tmp_path_factory.mktemp("vm")), bluetooth=bluetooth)


# -- processes, checks, figures ------------------------------------------------------------------

@pytest.fixture
def spawn(lightorgan, tmp_path):
    spawner = Spawner(str(tmp_path), lightorgan)
    yield spawner
    spawner.stop_all()


# -- namespaces ----------------------------------------------------------------------------------

@pytest.fixture
def netns():
    """The test in a network namespace of its own (lo only), and back in the machine's after it."""
    with private_network() as holder:
        yield holder


@pytest.fixture
def new_host(netns, spawn, tmp_path):
    """new_host(host_name, bus=True, avahi=True, publish_addresses=True): an AvahiHost in the test's
    network namespace, with its system bus and avahi-daemon running as asked. At the end of the test
    the test's processes are stopped first, then every host's daemons, then its namespace."""
    made = []

    def make(host_name="lightorgan-test", bus=True, avahi=True, publish_addresses=True):
        host = AvahiHost(str(tmp_path), host_name, publish_addresses)
        made.append(host)
        if bus:
            host.start_bus()
        if avahi:
            host.start_avahi()
        return host

    try:
        yield make
    finally:
        spawn.stop_all()
        for host in reversed(made):
            host.close()


@pytest.fixture
def olad(request, netns, tmp_path):
    """A real olad listening on sACN universes 1 and 2 and Art-Net port-addresses 1 and 2 (or the
    (protocol, universe) pairs of an indirect parameter), behind a veth pair in the test's network
    namespace (started in well under a second)."""
    server = Olad(str(tmp_path), **({"universes": request.param} if hasattr(request, "param") else {}))
    try:
        yield server
    finally:
        server.stop()


# -- the receiver's page (test_page_*.py) ---------------------------------------------------------

@pytest.fixture
def page_host(netns, spawn, tmp_path):
    """The receiver's host behind a veth (support.browser.PageHost), the test's alone; `page_host.receiver(name, …)`
    starts one. Its receivers are stopped and its namespace ended when the test ends, whatever happened."""
    from support.browser import PageHost  # selenium: only where a test opens the page
    host = PageHost(spawn, str(tmp_path))
    try:
        yield host
    finally:
        host.close()


@pytest.fixture
def browser(netns, tmp_path):
    """browser(name, fake_audio=None, args=()): a headless Chromium in the test's namespace, logging to
    tmp_path/browser-NAME; each is quit when the test ends (before it leaves the namespace), or sooner
    by its `.close()`."""
    from support.browser import Browser, quit_all
    opened = []

    def open_browser(name, **options):
        started = Browser(log_dir=str(tmp_path / f"browser-{name}"), **options)
        opened.append(started)
        return started
    yield open_browser
    quit_all(opened)


@pytest.fixture
def engine(netns, tmp_path):
    """engine(name, music): the page's browser in one of the three engines, quit when the test ends: `chromium`
    (support.browser.Browser, its fake microphone playing the recording), `webkit` (MiniBrowser under Xvfb,
    its mock microphone) or `firefox` (Firefox ESR over WebDriver BiDi, its fake microphone, its sound into a
    private PulseAudio server's null sink)."""
    from support import sound_servers
    from support.browser import Browser, quit_all
    from support.engines import Firefox, WebKit
    opened, servers = [], []

    def open_engine(name, music):
        log_dir = str(tmp_path / f"engine-{name}")
        if name == "chromium":
            started = Browser(log_dir=log_dir, fake_audio=music)
            started.name = name
        elif name == "webkit":
            started = WebKit(log_dir)
        else:
            pulse = sound_servers.pulseaudio(str(tmp_path / "pulse"), "module-null-sink sink_name=speakers")
            servers.append(pulse)
            started = Firefox(log_dir, pulse_server=sound_servers.socket_of(pulse))
        opened.append(started)
        return started
    yield open_engine
    quit_all(opened)
    for server in servers:
        server.stop()
