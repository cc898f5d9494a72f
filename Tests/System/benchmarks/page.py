"""The receiver page's figures, over a veth from a network namespace of its own.

Usage: python Tests/System/benchmarks/page.py LIGHTORGAN [SECONDS]
       (scripts/bench-page runs it with a release build and the suite's venv; SECONDS per measurement,
       default 10)

- the receiver's CPU (% of a core) and private dirty memory at 100 frames/s with 0, 1 and 10 pages
  open (sockets reading /live, as pages do), the frame age (p50/p99) with them, and the bytes a page
  gets each second;
- the page's lamp updates per second in Chromium with a sender at 100 frames/s;
- browser source → lamp latency: the fake microphone plays a 40 ms burst of noise every 0.5 s; from
  the page's first loud sound message to the receiver's first frame ≥ 128.

The receiver runs behind a veth (support.browser.PageHost), the browser and senders here; the
processes' output and the browsers' logs stay in the folder it prints.
"""
import os
import random
import struct
import sys
import time
import wave

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from support.browser import Browser, PageHost, counter_sender, open_page, reading_pages, shown  # noqa: E402
from support.namespaces import private_network  # noqa: E402
from support.processes import bench_folder, Spawner, ages_ms, cpu_seconds, memory_mib, percentile  # noqa: E402


def click_train(path, seconds=30, rate=48000):
    """Silence with a 40 ms burst of noise every 0.5 s: each burst's first loud message and the lamp's rise."""
    generator = random.Random(7)
    frames = bytearray()
    for i in range(int(seconds * rate)):
        loud = (i % (rate // 2)) < rate * 0.04
        frames += struct.pack("<h", int(generator.uniform(-0.8, 0.8) * 32767) if loud else 0)
    with wave.open(path, "wb") as out:
        out.setnchannels(1)
        out.setsampwidth(2)
        out.setframerate(rate)
        out.writeframes(bytes(frames))
    return path


def bench(host, start, work, seconds):
    process, key = host.receiver("bench")
    sender = counter_sender(start, "bench-sender", host)
    time.sleep(2)
    rows = []
    for pages in (0, 1, 10):
        close = reading_pages(host.address, pages) if pages else (lambda: [])
        try:
            time.sleep(1)
            since = time.monotonic()
            cpu = cpu_seconds(process.pid)
            time.sleep(seconds)
            used = (cpu_seconds(process.pid) - cpu) / seconds * 100
            dirty = memory_mib(process.pid)[1]
            ages = [age for _, age in ages_ms(process, sender, since)]
        finally:
            received = close()
        rows.append((pages, used, dirty, percentile(ages, 0.5), percentile(ages, 0.99),
                     sum(received) / seconds / max(pages, 1)))
    sender.stop()
    print("receiver at 100 frames/s with pages open (reading /live: lamps up to 40/s, status 2/s):")
    print("  pages  CPU % of a core  private dirty MiB  frame age p50 / p99 ms  bytes/s per page")
    for pages, used, dirty, p50, p99, rate in rows:
        print(f"  {pages:5d}  {used:15.2f}  {dirty:17.1f}  {p50:10.2f} / {p99:.2f}  {rate:16.0f}")
    with Browser(log_dir=os.path.join(work, "browser-bench")) as browser:
        open_page(browser, host.base, key)
        sender = counter_sender(start, "bench-sender2", host)
        time.sleep(1)
        first = browser.js("return window.__recorded.lamps.length")
        time.sleep(seconds)
        updates = (browser.js("return window.__recorded.lamps.length") - first) / seconds
        sender.stop()
    print(f"page lamp updates per second (Chromium, a sender at 100 frames/s): {updates:.1f}")
    process.stop()
    wav = click_train(os.path.join(work, "clicks.wav"))
    process, key = host.receiver("bench-latency")
    with Browser(log_dir=os.path.join(work, "browser-latency"), fake_audio=wav) as browser:
        open_page(browser, host.base, key)
        browser.click("#mic")
        browser.wait_for("window.__recorded.sent.length > 10", 20)
        time.sleep(seconds)
        sent = browser.js("return window.__recorded.sent")
        browser.click("#stop-audio")
    frames = shown(process)
    latencies = []
    previous_loud = False
    for at_ms, _, peak in sent:
        loud = peak > 0.3
        if loud and not previous_loud:
            at = at_ms / 1000
            rise = next((f_at for f_at, levels in frames if f_at >= at - 0.005 and max(levels) >= 128), None)
            if rise is not None and rise - at < 0.5:
                latencies.append((rise - at) * 1000)
        previous_loud = loud
    process.stop()
    print(f"browser source → lamp latency (a loud message sent by the page → the receiver's first frame ≥ 128), "
          f"{len(latencies)} bursts: p50 {percentile(latencies, 0.5):.1f} ms, p95 {percentile(latencies, 0.95):.1f} ms")


def main():
    if len(sys.argv) not in (2, 3):
        sys.exit(f"usage: {sys.argv[0]} LIGHTORGAN [SECONDS]")
    lightorgan = os.path.abspath(sys.argv[1])
    seconds = float(sys.argv[2]) if len(sys.argv) == 3 else 10.0
    work = bench_folder("page")
    with private_network(), Spawner(work, lightorgan) as start, PageHost(start, work) as host:
        bench(host, start, work, seconds)


if __name__ == "__main__":
    main()
