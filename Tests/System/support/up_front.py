"""What a run needs before its tests (a pytest plugin of conftest.py's): the Debian packages of every selected
test's markers and each selected module's `fetch_up_front()` (the music corpus, the Debian roots, the kernel's
source), fetched before the first test enters a namespace without a network; `--fetch-only` fetches and runs no test
(scripts/test runs it beside the builds). Then each selected module's `prepare_beside(request, beside)`: the set-ups
that run beside the tests (support/beside.py)."""
import concurrent.futures
import inspect
import sys
import time

import pytest

from support import caches
from support.beside import Beside
from support.processes import outside_test_timeout
from support.selection import SELECTED

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
        request.config.stash[FETCH_SECONDS] = time.monotonic() - started
    if request.config.getoption("--fetch-only"):
        pytest.exit(f"fetched up front in {time.monotonic() - started:.0f} s", returncode=0)


BESIDE_SECONDS = pytest.StashKey()  # {set-up: (seconds, its timeline)}
SESSION_STARTED = pytest.StashKey()  # time.time() when the session started: the run's timeline begins there


def pytest_sessionstart(session):
    session.config.stash[SESSION_STARTED] = time.time()


@pytest.fixture(scope="session")
def beside(request):
    """The session's set-ups made beside the tests (support/beside.py); what still runs at the end is stopped."""
    made = Beside()
    yield made
    made.close()
    since = request.config.stash[SESSION_STARTED]
    request.config.stash[BESIDE_SECONDS] = {name: (seconds, made.timeline(name, since))
                                             for name, seconds in made.seconds.items()}


@pytest.fixture(scope="session", autouse=True)
def started_beside(fetched_up_front, beside, request):
    """Each selected module's `prepare_beside(request, beside)`, once, after the up-front fetch: the set-ups that
    then run beside the tests (the counted Pi boots, a Debian root with shairport-sync)."""
    seen = set()
    for item in request.config.stash.get(SELECTED, []):
        prepare = getattr(item.module, "prepare_beside", None)
        if prepare is not None and prepare not in seen:
            seen.add(prepare)
            prepare(request, beside)


FETCH_TIMEOUT = 3600  # seconds the up-front fetch may take (a new machine: packages, roots, corpus, kernel)
FETCH_WORKERS = 4  # the modules' fetches made at once
FETCH_SECONDS = pytest.StashKey()  # how long the up-front fetch took


def _fetch_up_front(request):
    items = request.config.stash.get(SELECTED, [])
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
