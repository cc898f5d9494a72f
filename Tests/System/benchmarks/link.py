"""The link's figures (and the receivers' cost), release builds over loopback.

Usage: python Tests/System/benchmarks/link.py LIGHTORGAN [SECONDS]
       (scripts/bench-link builds and runs it; SECONDS per measurement, default 10)

Frame age at the receiver (p50/p99, and right after a 10 s stall), and CPU time per second and resident
memory of the sender and the receivers at 100 frames/s, to one and to five receivers. Resident memory is
given whole and as its private dirty part (what the process alone holds).
"""
import os
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from support.processes import bench_folder, cpu_seconds, free_port, memory_mib  # noqa: E402

lightorgan, seconds = sys.argv[1], float(sys.argv[2]) if len(sys.argv) > 2 else 10.0
work = bench_folder("link")


def start(name, *arguments, stdout=None):
    out = open(stdout or os.devnull, "w")
    return subprocess.Popen([lightorgan, *arguments, "--quiet"], stdout=out, stderr=open(f"{work}/{name}.err", "w"))


def lines(path):
    with open(path) as file:
        return [line.split() for line in file if line.endswith("\n")]


def ages(receiver_out, sender_out, since=0.0):
    sent = {int(f[1]): float(f[0]) for f in lines(sender_out) if len(f) == 2}
    result = []
    for f in lines(receiver_out):
        if len(f) == 4:
            n = int(f[1]) << 16 | int(f[2]) << 8 | int(f[3])
            if n in sent and float(f[0]) >= since:
                result.append((float(f[0]), (float(f[0]) - sent[n]) * 1000))
    return result


def percentile(values, share):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


def stop(*processes):
    for process in processes:
        process.send_signal(signal.SIGCONT)
        process.terminate()
    for process in processes:
        process.wait()


# 1. Frame age: counter pattern at 100 frames/s to one receiver with stdout output.
port = free_port()
receiver = start("age-r", "receive", "--bind", "127.0.0.1", "--port", str(port), "--output", "stdout", stdout=f"{work}/age-r.out")
time.sleep(0.5)
sender = start("age-s", "send", "--host", "127.0.0.1", "--port", str(port), "--pattern", "counter", stdout=f"{work}/age-s.out")
time.sleep(1 + seconds)
steady = [age for _, age in ages(f"{work}/age-r.out", f"{work}/age-s.out")][100:]
print(f"frame age at the receiver, 100 frames/s, {len(steady)} frames: p50 {percentile(steady, 0.5):.3f} ms, "
      f"p99 {percentile(steady, 0.99):.3f} ms, max {max(steady):.3f} ms")
# 2. A 10 s stall of the receiver (SIGSTOP), then the ages of the frames applied after it continues.
receiver.send_signal(signal.SIGSTOP)
time.sleep(10)
receiver.send_signal(signal.SIGCONT)
continued = time.monotonic()
time.sleep(1)
after = ages(f"{work}/age-r.out", f"{work}/age-s.out", since=continued)
print("after a 10 s stall, ages of the first five frames applied: "
      + ", ".join(f"{age:.3f}" for _, age in after[:5]) + " ms; "
      + f"then p99 {percentile([a for _, a in after[5:]], 0.99):.3f} ms")
stop(sender, receiver)

# 3. CPU and memory while the real sender analyses the demo groove at 100 frames/s.
for count in (1, 5):
    ports = [free_port() for _ in range(count)]
    receivers = [start(f"cost-r{i}", "receive", "--bind", "127.0.0.1", "--port", str(p), "--output", "stdout")
                 for i, p in enumerate(ports)]
    time.sleep(0.5)
    hosts = ",".join(f"127.0.0.1:{p}" for p in ports)
    sender = start("cost-s", "send", "--hosts", hosts, "--input", "demo")
    time.sleep(2)
    before = [cpu_seconds(p.pid) for p in [sender] + receivers]
    time.sleep(seconds)
    after = [cpu_seconds(p.pid) for p in [sender] + receivers]
    shares = [(b - a) / seconds * 100 for a, b in zip(before, after)]
    # Private dirty: what only this process holds and the kernel cannot drop (heap, stacks,
    # relocated data); the rest of the resident set is clean code and data mapped from files.
    rss, dirty = zip(*(memory_mib(p.pid) for p in [sender] + receivers))
    print(f"{count} receiver(s), {seconds:.0f} s at 100 frames/s: sender {shares[0]:.2f} % of a core, "
          f"resident {rss[0]:.1f} MiB (private dirty {dirty[0]:.1f}); "
          f"receivers {', '.join(f'{s:.2f} %' for s in shares[1:])} of a core, "
          f"resident {', '.join(f'{r:.1f}' for r in rss[1:])} MiB (private dirty {', '.join(f'{d:.1f}' for d in dirty[1:])})")
    stop(sender, *receivers)
