"""Fixtures shared by the system tests.

- The built executable `lightorgan` (scripts/test's one build, as the amd64 package ships it: the Swift runtime and
  libgpiod 2 linked in, stripped), and `repository`. `lightorgan` is built when missing (a no-op after
  `scripts/test`, which builds everything first).
- `--quick`: the tests that boot no emulated machine, need no package and time nothing (QUICK_LEAVES_OUT), the
  loop before each commit; the full tier is everything.
- `spawn(name, *arguments)` runs the executable (or `spawn.command(name, [...])` anything else),
  its output in the test's folder; every process is stopped when the test ends, whatever happened.
- `check(name, ok, detail)`: a named check, one of pytest's subtests: a failed one is reported with its detail
  and does not stop the test, which fails at its end. `figure(text)` records a measured figure for the run's summary.
- `netns`: the test runs in a network namespace of its own (lo only): its ports, veth pairs and
  addresses are its alone.
- `page_host` (the receiver behind a veth), `browser(name, …)` (headless Chromium) and `engine(name, music)`
  (Chromium, WebKitGTK or Firefox ESR): the page's tests.
- Everything from the network is fetched before the first test: the Debian packages each selected
  marker needs, and whatever a selected module's `fetch_up_front()` fetches (the music corpus,
  Debian roots, the kernel's source). `--fetch-only` fetches that and runs no test: scripts/test runs it beside
  the builds, before the packages are built. What needs a package (the .debs of its Depends) is fetched beside
  the tests, by the set-ups that install it (support/beside.py).
"""
import concurrent.futures
import inspect
import os
import resource
import subprocess
import sys
import time

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from support import boot_counts, caches  # noqa: E402
from support.avahi import AvahiHost  # noqa: E402
from support.beside import Beside  # noqa: E402
from support.namespaces import private_network  # noqa: E402
from support.olad import Olad  # noqa: E402
from support.packages import package_path  # noqa: E402
from support.processes import Spawner, outside_test_timeout  # noqa: E402

# Fixtures from support/: a run that skipped or left out a test fails (green_means_tested); the emulated Raspberry Pis' (the package installed in Debian roots, the boot files), one
# instance each for the session, shared by test_raspberry_pi.py and test_strip_on_the_pi.py; the release channel's
# repositories and roots; the recording the page's tests play; the frames sender of the strip's page tests; the
# signals the own sound's and the rooms' tests play.
pytest_plugins = ["support.green_means_tested", "support.raspberry_pi", "support.apt_release", "support.page_music",
                  "support.pixel_row", "support.sound_signals"]

REPOSITORY = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))

# Debian packages by marker (and for every test): installed before the first test runs.
PACKAGES = {
    None: ["iproute2", "util-linux", "python3-numpy"],
    "sound": ["pulseaudio", "pulseaudio-utils", "pipewire", "pipewire-pulse", "wireplumber", "dbus", "sox"],
    "browser": ["chromium", "chromium-driver", "webkit2gtk-driver", "xvfb", "firefox-esr", "pulseaudio"],
    "lighting": ["ola", "ola-python"],
    "discovery": ["avahi-daemon", "avahi-utils", "dbus"],
    "mqtt": ["mosquitto", "mosquitto-clients", "openssl"],
    # (and a room's sound played into PulseAudio null sinks through ALSA's pulse plugin, recorded with parec)
    "snapcast": ["snapserver", "snapclient", "pulseaudio", "pulseaudio-utils", "libasound2-plugins"],
    # The receiver as an AirPlay speaker (test_own_sound.py): Debian's shairport-sync, its mDNS through Avahi,
    # and ALSA's pulse plugin to play into a PulseAudio sink.
    "airplay": ["shairport-sync", "avahi-daemon", "avahi-utils", "dbus", "libasound2-plugins", "pulseaudio",
                "pulseaudio-utils"],
    "vm": ["linux-image-amd64", "linux-headers-amd64", "build-essential", "qemu-system-x86", "busybox-static",
           "cpio", "kmod", "alsa-utils", "xz-utils"],
    "pi": ["qemu-system-arm", "qemu-user-static", "binfmt-support", "mmdebstrap", "arch-test", "cpio", "xz-utils",
           "binutils", "device-tree-compiler"],
    # (lintian, man-db, systemd-container, gcc and libc6-dev: test_package.py's lintian and manual pages,
    # test_package_sandbox.py's booted root and its static probe)
    "release": ["reprepro", "gnupg", "gpgv", "dpkg-dev", "qemu-user-static", "binfmt-support", "mmdebstrap",
                "arch-test", "lintian", "man-db", "systemd-container", "gcc", "libc6-dev"],
}


# The markers the quick tier (--quick, scripts/test --quick) leaves out: an emulated machine's boot (vm, pi), the
# built packages (package), anything over a minute (slow), and what measures time or CPU (timing: it wants the
# machine to itself, which a developer's machine between two edits is not). It selects from the same tests.
QUICK_LEAVES_OUT = ("vm", "pi", "package", "slow", "timing")
# The fixtures of the built packages, and those that take one beside the tests (support/packages.py): a test that
# uses one carries the marker `package` (checked at collection).
PACKAGE_FIXTURES = ("pi_package", "amd64_package", "installs", "boot_files", "prepared_roots", "trixie_speaker")


def pytest_addoption(parser):
    parser.addoption("--quick", action="store_true",
                     help=f"the quick tier: leave out the tests marked {', '.join(QUICK_LEAVES_OUT)}")
    parser.addoption("--fetch-only", action="store_true",
                     help="fetch what the selected tests need (their markers' packages, each module's fetch_up_front) "
                          "and run no test; what needs a package not given is left to the run that tests")
    parser.addoption("--pi-package", default=None,
                     help="the arm64 .deb to test (default: built by scripts/build-pi arm64 when needed)")
    parser.addoption("--amd64-package", default=None,
                     help="the amd64 .deb to test (default: built by scripts/build-pi amd64 when needed)")
    parser.addoption("--packages-building", default=None, metavar="FOLDER",
                     help="scripts/build-pi runs beside the tests and writes to FOLDER (support/packages.py): the "
                          "tests that need a package run last and wait for it")


# -- what a run needs from the network, first ----------------------------------------------------

def pytest_collection_modifyitems(session, config, items):
    unmarked = [item.nodeid for item in items if not item.get_closest_marker("package")
                and any(name in getattr(item, "fixturenames", ()) for name in PACKAGE_FIXTURES)]
    if unmarked:
        raise pytest.UsageError("these tests use a package without the marker `package` (the quick tier would run "
                                f"them): {', '.join(unmarked)}")
    if config.getoption("--quick"):
        left_out = [item for item in items if any(item.get_closest_marker(name) for name in QUICK_LEAVES_OUT)]
        if left_out:
            config.hook.pytest_deselected(items=left_out)
            items[:] = [item for item in items if item not in left_out]
    if config.getoption("--packages-building"):
        # The packages are built beside the tests: those that need one last, the others in their order.
        ranks = _package_ranks(items)
        items.sort(key=lambda item: (item.get_closest_marker("package") is not None, ranks[item]))
    config.stash[_selected] = list(items)


# Among the tests that need a package, the order that leaves the machine least idle (support/beside.py): first the
# modules of the arm64 package alone, installed in the roots and then the Pis' whole boots (timed in real time, about
# half of the machine: the amd64 package's build and the counted Pi boots, at idle priority, take the rest); then the
# other tests that need no amd64 package (the x86 guest of libgpiod 1, trixie's speaker, the arm64 package's
# lintian), while the amd64 package builds; then those that need it (the last package made: what runs after it is
# the run's tail, one test at a time); last the modules that judge the counted boots, which have run beside all of
# it. A test needs the amd64 package when its fixtures do (the release repository holds both packages), or when
# marked `amd64` (a fixture that asks for the package by name, as a parameter of the test does).
ARM64_FIRST_FIXTURES = ("installed_root", "raspberry_pi")
AMD64_FIXTURES = ("amd64_package",)


def _package_ranks(items):
    """{item: 0, 1, 2 or 3}: where each test goes among those that need a package (see above). The first and the
    last are whole modules (the Pis' module-wide boots); the other modules may part in two."""
    from support.raspberry_pi import COUNTED_FIXTURES  # (here: a plugin of pytest's, imported once registered)
    uses = {}
    for item in items:
        uses.setdefault(item.module, set()).update(getattr(item, "fixturenames", ()))

    def rank(item):
        names = uses[item.module]
        if names.intersection(COUNTED_FIXTURES):
            return 3
        if names.intersection(ARM64_FIRST_FIXTURES):
            return 0
        needs_amd64 = item.get_closest_marker("amd64") or set(getattr(item, "fixturenames", ())) & set(AMD64_FIXTURES)
        return 2 if needs_amd64 else 1
    return {item: rank(item) for item in items}


_selected = pytest.StashKey()


@pytest.fixture(scope="session", autouse=True)
def fetched_up_front(request):
    """Installs the Debian packages of every selected test's markers and runs each selected module's
    `fetch_up_front()`, before any test enters a namespace without a network."""
    # Out of the first test's own timeout: on a new machine the fetch takes longer than any test may (Debian roots
    # made from nothing). It has an hour of its own.
    started = time.monotonic()
    try:
        with outside_test_timeout(FETCH_TIMEOUT):
            _fetch_up_front(request)
    except Exception as error:
        if request.config.getoption("--fetch-only"):
            pytest.exit(f"the fetch failed after {time.monotonic() - started:.0f} s: {error}", returncode=1)
        raise
    finally:
        request.config.stash[_fetch_seconds] = time.monotonic() - started
    if request.config.getoption("--fetch-only"):
        pytest.exit(f"fetched up front in {time.monotonic() - started:.0f} s", returncode=0)


_beside_seconds = pytest.StashKey()
_session_started = pytest.StashKey()  # time.time() when the session started: the run's timeline begins there


def pytest_sessionstart(session):
    session.config.stash[_session_started] = time.time()


@pytest.fixture(scope="session")
def beside(request):
    """The session's set-ups made beside the tests (support/beside.py); what still runs at the end is stopped."""
    made = Beside()
    yield made
    made.close()
    since = request.config.stash[_session_started]
    request.config.stash[_beside_seconds] = {name: (seconds, made.timeline(name, since))
                                             for name, seconds in made.seconds.items()}


@pytest.fixture(scope="session", autouse=True)
def started_beside(fetched_up_front, beside, request):
    """Each selected module's `prepare_beside(request, beside)`, once, after the up-front fetch: the set-ups that
    then run beside the tests (the counted Pi boots, a Debian root with shairport-sync)."""
    seen = set()
    for item in request.config.stash.get(_selected, []):
        prepare = getattr(item.module, "prepare_beside", None)
        if prepare is not None and prepare not in seen:
            seen.add(prepare)
            prepare(request, beside)


FETCH_TIMEOUT = 3600  # seconds the up-front fetch may take (a new machine: packages, roots, corpus, kernel)
FETCH_WORKERS = 4  # the modules' fetches made at once
_fetch_seconds = pytest.StashKey()


def _fetch_up_front(request):
    items = request.config.stash.get(_selected, [])
    packages = list(PACKAGES[None])
    for item in items:
        for marker in item.iter_markers():
            packages += PACKAGES.get(marker.name, [])
    started = time.monotonic()
    caches.install_packages(dict.fromkeys(packages))  # under the cache's lock "apt"
    _say_fetched("the markers' Debian packages", started)
    fetches = []
    for item in items:
        fetch = getattr(item.module, "fetch_up_front", None)
        if fetch is not None and fetch not in fetches:  # once, when modules share one (support/raspberry_pi.py's)
            fetches.append(fetch)

    def fetched(fetch):
        started = time.monotonic()
        # fetch_up_front(request) may look at the selection; it asks for no package (--fetch-only runs before
        # they are built).
        fetch(request) if inspect.signature(fetch).parameters else fetch()
        _say_fetched(f"{fetch.__module__}.fetch_up_front", started)
    # The modules' fetches at once: each waits mostly on the network, or on one core (apt under qemu-user, pip), and
    # on a new machine one after the other they were the longest path before the first test (Home Assistant's
    # venv 258 s, then each arm64 root ~200 s). What two of them share (a root, apt's lock) is made under a cache
    # lock (support/caches.py), once. The first failure is raised, after the others have ended.
    with concurrent.futures.ThreadPoolExecutor(FETCH_WORKERS, thread_name_prefix="fetch") as pool:
        for future in [pool.submit(fetched, fetch) for fetch in fetches]:
            future.result()


def _say_fetched(what, started):
    """One line on stderr for what took a second or more: scripts/test shows these of the fetch beside the builds."""
    seconds = time.monotonic() - started
    if seconds >= 1:
        print(f"lightorgan: fetched {what} in {seconds:.0f} s", file=sys.stderr, flush=True)


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


# -- processes, checks, figures ------------------------------------------------------------------

@pytest.fixture
def spawn(lightorgan, tmp_path):
    spawner = Spawner(str(tmp_path), lightorgan)
    yield spawner
    spawner.stop_all()


class Checks:
    """Named checks of one test, each one of pytest's own subtests (the `subtests` fixture): printed as it is made,
    a failed one reported on its own (SUBFAILED name - detail), and the test goes on to its next check."""

    def __init__(self, subtests):
        self.subtests, self.results = subtests, []

    def __call__(self, name, ok, detail=""):
        ok = bool(ok)
        self.results.append((name, ok, detail))
        print(f"{'✔' if ok else '✘'} {name}" + (f" ({detail})" if detail else ""), flush=True)
        with self.subtests.test(msg=name):
            assert ok, detail or name
        return ok

    @property
    def failed(self):
        return [(name, detail) for name, ok, detail in self.results if not ok]


@pytest.fixture
def check(subtests):
    return Checks(subtests)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item):
    """Counts the named checks over the run, for its summary line."""
    checks = item.funcargs.get("check") if hasattr(item, "funcargs") else None
    try:
        return (yield)
    finally:
        if checks is not None:
            made = item.config.stash.setdefault(_checks_made, [0, 0])
            made[0] += len(checks.results)
            made[1] += len(checks.failed)


_figures = pytest.StashKey()
_checks_made = pytest.StashKey()  # [named checks made, of them failed], over the run


@pytest.fixture
def figure(request):
    """figure(text): a measured figure, printed now and again in the run's summary."""
    figures = request.config.stash.setdefault(_figures, [])

    def record(text):
        print(f"figure: {text}", flush=True)
        figures.append(f"{request.node.name}: {text}")
    return record


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    figures = config.stash.get(_figures, [])
    if figures:
        terminalreporter.section("figures")
        for line in figures:
            terminalreporter.write_line(line)
    made, failed = config.stash.get(_checks_made, [0, 0])
    if made:
        terminalreporter.write_line(f"named checks: {made} made, {failed} failed")
    _where_the_time_went(terminalreporter, config)


_cpu_by_module = pytest.StashKey()  # {module: CPU seconds}: pytest's own and its reaped children's


def _cpu_seconds():
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item, nextitem):
    """The CPU each test's set-up, call and teardown took (pytest's and the processes it reaped: daemons, guests,
    browsers), added up by module for the run's summary. Set-ups beside the tests count where they are reaped."""
    started = _cpu_seconds()
    try:
        return (yield)
    finally:
        spent = item.config.stash.setdefault(_cpu_by_module, {})
        module = item.nodeid.split("::")[0]
        spent[module] = spent.get(module, 0.0) + _cpu_seconds() - started


def _where_the_time_went(terminalreporter, config):
    """The seconds of each module (set-ups, tests and teardowns; its module fixtures' boots are in its first
    set-up), of the up-front fetch (inside the first set-up), and the emulated machines booted, by model."""
    seconds, starts = {}, {}
    for reports in terminalreporter.stats.values():
        for report in reports:
            if type(report) is pytest.TestReport:  # not a subtest's report: its time is its test's
                module = report.nodeid.split("::")[0]
                seconds[module] = seconds.get(module, 0.0) + report.duration
                starts[module] = min(starts.get(module, report.start), report.start)
    if not seconds:
        return
    terminalreporter.section("seconds by module")
    fetch = config.stash.get(_fetch_seconds, None)
    if fetch is not None:
        terminalreporter.write_line(f"{fetch:8.0f} s  the up-front fetch (in the first test's set-up: its module's too)")
    since = config.stash.get(_session_started, 0)
    for module, total in sorted(seconds.items(), key=lambda item: -item[1]):
        # Its tests' first start, from the session's start (a module whose package tests run last starts twice).
        cpu = config.stash.get(_cpu_by_module, {}).get(module)
        cpu_text = f" (CPU {cpu:.0f} s)" if cpu is not None else ""
        terminalreporter.write_line(f"{total:8.0f} s  {module}{cpu_text}, from {starts[module] - since:.0f} s")
    for name, (total, (start, end, raised)) in config.stash.get(_beside_seconds, {}).items():
        # When it ran (from the session's start) and from when at normal priority: what ran beside a timed test.
        normal = "" if raised is None else f", at normal priority from {raised:.0f} s"
        terminalreporter.write_line(f"{total:8.0f} s  beside the tests: {name}, {start:.0f} s to {end:.0f} s into the "
                                    f"session{normal} (its waits are in its module's)")
    booted = boot_counts.by_model()
    terminalreporter.write_line("emulated machines booted: " + (", ".join(
        f"{model} {count}" for model, count in sorted(booted.items())) or "none"))


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
