"""The goals of a benchmark run with --check (scripts/bench-music, scripts/bench-beats): one line a goal, then the
count, and the exit status."""


def report(benchmark, checks):
    """Prints each (name, ok, detail) of `checks` as "✔ BENCHMARK: name (detail)" or ✘, then "BENCHMARK: N passed,
    N failed"; returns 0 when every goal held, else 1."""
    for name, ok, detail in checks:
        print(f"{'✔' if ok else '✘'} {benchmark}: {name} ({detail})")
    failed = sum(not ok for _, ok, _ in checks)
    print(f"{benchmark}: {len(checks) - failed} passed, {failed} failed")
    return 0 if failed == 0 else 1
