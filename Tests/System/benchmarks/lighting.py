"""The lighting figures (CPU with and without lighting targets, frame to olad), against a real olad (support/olad.py) in network namespaces.

Usage: python Tests/System/benchmarks/lighting.py LIGHTORGAN SECONDS ROUNDS
       (scripts/bench-lighting runs it with a release build and the suite's venv)

The sender's CPU (scheduler time, % of a core) at 100 frames/s to one TCP receiver alone and beside
one sACN target (the goal: at most 1.2 × TCP alone), and the time from a frame being made to olad's
DMX callback for it (p50/p99). It enters a private network namespace of its own first; the processes'
output and olad's log stay in the folder it prints.
"""
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from support.namespaces import private_network  # noqa: E402
from support.olad import Olad  # noqa: E402
from support.processes import bench_folder, Spawner, made, memory_mib, percentile, run_seconds, wait_for  # noqa: E402


def delivered_latencies(recorder, universe, process):
    """Latencies ms, made → olad's callback, of the frames that arrived on `universe`."""
    sent = made(process)
    return [(r.time - sent[r.counter]) * 1000 for r in recorder.records(universe) if r.counter in sent]


def bench(start, olad, seconds, rounds):
    """Sender CPU at 100 frames/s: TCP alone, and TCP beside one sACN target; made → OLA callback."""

    def sender(name, hosts):
        return start(name, "send", "--pattern", "counter", "--fps", "100", "--stats-interval", "0", "--hosts", hosts,
                     "--quiet")

    lamps = start("bench-r", "receive", "--port", "0", "--output", "stdout", "--stats-interval", "0", "--quiet")
    wait_for(lambda: "listening on" in lamps.log() or os.path.getsize(lamps.out_path) > 0, 3)
    time.sleep(0.5)
    port = None
    for line in open(f"/proc/{lamps.pid}/net/tcp").read().splitlines()[1:]:
        fields = line.split()
        if fields[3] == "0A":  # listening
            port = int(fields[1].split(":")[1], 16)
    tcp = f"127.0.0.1:{port}"
    figures = {"tcp": [], "sacn": []}
    latencies = []
    for round_ in range(rounds):
        for kind, hosts in (("tcp", tcp), ("sacn", f"{tcp},sacn://{olad.address}?gamma=1")):
            recorder = olad.recorder(f"bench-{kind}-{round_}") if kind == "sacn" else None
            process = sender(f"bench-{kind}-{round_}", hosts)
            time.sleep(2)  # past the start
            before = run_seconds(process.pid)
            time.sleep(seconds)
            used = run_seconds(process.pid) - before
            rss, dirty = memory_mib(process.pid)
            process.stop()
            figures[kind].append((100 * used / seconds, rss, dirty))
            if recorder:
                time.sleep(0.3)
                latencies += delivered_latencies(recorder, olad.ola_universe("sacn", 1), process)
                recorder.stop()
    lamps.stop()
    for kind, label in (("tcp", "TCP receiver alone"), ("sacn", "TCP receiver + sACN (44 packets/s)")):
        cpu = sorted(f[0] for f in figures[kind])
        print(f"{label:38s} CPU {' / '.join(f'{c:.2f}' for c in cpu)} % of a core (median {cpu[len(cpu) // 2]:.2f}); "
              f"RSS {figures[kind][-1][1]:.1f} MiB, private dirty {figures[kind][-1][2]:.1f} MiB")
    ratio = sorted(f[0] for f in figures["sacn"])[rounds // 2] / sorted(f[0] for f in figures["tcp"])[rounds // 2]
    # Each round measures both one after the other: its own ratio is less moved by the machine's load drifting.
    paired = sorted(s[0] / t[0] for s, t in zip(figures["sacn"], figures["tcp"]))
    print(f"ratio sACN+TCP / TCP: {ratio:.2f} of the medians; per round {' / '.join(f'{r:.2f}' for r in paired)}, "
          f"median {paired[len(paired) // 2]:.2f} (goal ≤ 1.2)")
    print(f"frame made → olad's DMX callback: p50 {percentile(latencies, 0.5):.1f} ms, "
          f"p99 {percentile(latencies, 0.99):.1f} ms ({len(latencies)} frames at 44 packets/s)")


def main():
    if len(sys.argv) != 4:
        sys.exit(f"usage: {sys.argv[0]} LIGHTORGAN SECONDS ROUNDS")
    lightorgan, seconds, rounds = os.path.abspath(sys.argv[1]), float(sys.argv[2]), int(sys.argv[3])
    work = bench_folder("lighting")
    with private_network(), Olad(work) as olad, Spawner(work, lightorgan) as start:
        bench(start, olad, seconds, rounds)


if __name__ == "__main__":
    main()
