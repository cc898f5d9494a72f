"""Which tests a run holds, and in what order (a pytest plugin of conftest.py's): the options of scripts/test
(`--quick`, `--fetch-only`, the packages), the quick tier's selection (QUICK_LEAVES_OUT), the check that a test that
uses a package carries the marker `package`, and, while the packages are built beside the tests, the tests that need
one last (`_package_ranks`). SELECTED holds the run's tests for the other plugins."""
import pytest

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
    config.stash[SELECTED] = list(items)


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


SELECTED = pytest.StashKey()  # the run's tests, in their order (support/up_front.py fetches for them)
