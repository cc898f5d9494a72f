"""Green means tested (a pytest plugin of conftest.py's): pytest passes a run whose tests were skipped, xfailed or
xpassed, or left out of the run; here such a run fails, and says which tests and why.

Left out on purpose: what `--quick` leaves out (its markers), and what `-k`, `-m` or `--deselect` asks to leave out.
Any other test collected and not run (a hook that drops it, a mark that skips it, a `pytest.skip` when a part is
missing) fails the run: a missing part is a failure to set up, not a pass.
"""
import pytest


def _intended_deselection(config):
    return bool(config.getoption("--quick") or config.getoption("keyword") or config.getoption("markexpr")
                or config.getoption("deselect"))


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session, exitstatus):
    if session.config.getoption("--fetch-only"):
        return
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    stats = reporter.stats if reporter is not None else {}
    untested = []
    for kind in ("skipped", "xfailed", "xpassed"):
        for report in stats.get(kind, []):
            reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else getattr(report, "wasxfail", "")
            untested.append(f"{kind}: {report.nodeid} ({reason})")
    if not _intended_deselection(session.config):
        untested += [f"deselected: {item.nodeid}" for item in stats.get("deselected", [])]
    if untested:
        session.config.stash[_untested] = untested
        if session.exitstatus == pytest.ExitCode.OK:
            session.exitstatus = pytest.ExitCode.TESTS_FAILED


_untested = pytest.StashKey()


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    untested = config.stash.get(_untested, [])
    if untested:
        terminalreporter.section("not tested: the run fails (support/green_means_tested.py)", red=True)
        for line in untested:
            terminalreporter.write_line(line)
