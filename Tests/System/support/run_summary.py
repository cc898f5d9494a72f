"""What a run says of itself (a pytest plugin of conftest.py's): `check(name, ok, detail)`, a named check (one of
pytest's subtests), and `figure(text)`, a measured figure; at the end the figures, the checks made and failed, and
where the time went: each module's seconds and CPU, the set-ups beside the tests, the emulated machines booted."""
import resource

import pytest

from support import boot_counts
from support.up_front import BESIDE_SECONDS, FETCH_SECONDS, SESSION_STARTED

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
    fetch = config.stash.get(FETCH_SECONDS, None)
    if fetch is not None:
        terminalreporter.write_line(f"{fetch:8.0f} s  the up-front fetch (in the first test's set-up: its module's too)")
    since = config.stash.get(SESSION_STARTED, 0)
    for module, total in sorted(seconds.items(), key=lambda item: -item[1]):
        # Its tests' first start, from the session's start (a module whose package tests run last starts twice).
        cpu = config.stash.get(_cpu_by_module, {}).get(module)
        cpu_text = f" (CPU {cpu:.0f} s)" if cpu is not None else ""
        terminalreporter.write_line(f"{total:8.0f} s  {module}{cpu_text}, from {starts[module] - since:.0f} s")
    for name, (total, (start, end, raised)) in config.stash.get(BESIDE_SECONDS, {}).items():
        # When it ran (from the session's start) and from when at normal priority: what ran beside a timed test.
        normal = "" if raised is None else f", at normal priority from {raised:.0f} s"
        terminalreporter.write_line(f"{total:8.0f} s  beside the tests: {name}, {start:.0f} s to {end:.0f} s into the "
                                    f"session{normal} (its waits are in its module's)")
    booted = boot_counts.by_model()
    terminalreporter.write_line("emulated machines booted: " + (", ".join(
        f"{model} {count}" for model, count in sorted(booted.items())) or "none"))
