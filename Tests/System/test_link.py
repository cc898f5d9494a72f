"""Faults and load on the link, with the real executables over loopback.

Each test runs `lightorgan receive --output stdout` and `lightorgan send --pattern counter` (see
support/processes.py: a frame's age is the receiver's time minus the sender's for the same counter),
or plain sockets for misbehaving clients, in a network namespace of its own.
"""
import random
import signal
import socket
import threading
import time

import pytest

from support.processes import ages_ms, applied, free_port, frozen, listening, percentile, wait_for

pytestmark = [pytest.mark.timing]


def receiver(spawn, name, port, *extra):
    return spawn(name, "receive", "--bind", "127.0.0.1", "--port", str(port), "--output", "stdout", *extra)


def counter_sender(spawn, name, port, *extra):
    return spawn(name, "send", "--host", "127.0.0.1", "--port", str(port), "--pattern", "counter", *extra)


def streaming(spawn, name, frames, *receiver_options):
    """A receiver (NAME-r, on a free port, listening) and a counter sender (NAME-s) streaming to it, once the
    receiver has applied `frames` frames: (port, receiver, sender)."""
    port = free_port()
    lamps = receiver(spawn, f"{name}-r", port, *receiver_options)
    wait_for(lambda: listening(port), 5)
    sender = counter_sender(spawn, f"{name}-s", port)
    wait_for(lambda: len(applied(lamps)) >= frames, 5)
    return port, lamps, sender


def test_receiver_restarted_while_the_sender_runs(spawn, check, netns):
    port, first, sender = streaming(spawn, "restart", 20)
    first.kill()
    # The sender has seen the receiver go and met the refused port, which it polls every 0.25 s, before it is back.
    wait_for(lambda: "lost" in sender.log() and "retrying until it answers" in sender.log(), 1.5)
    second = receiver(spawn, "restart-r2", port)
    restarted = time.monotonic()
    ok = wait_for(lambda: len(applied(second)) >= 1, 3)
    delay = applied(second)[0][0] - restarted if ok else float("inf")
    check("receiver killed and restarted: frames flow again within 1 s of the restart", delay <= 1.0,
          f"first frame {delay * 1000:.0f} ms after the restart")
    log = sender.log()
    check("the sender logged the loss once", log.count("lost") == 1, log[-400:])
    check("the sender logged the reconnect once (streaming to, twice in all)", log.count("streaming to") == 2,
          log[-400:])
    check("the sender runs on", sender.alive(), log[-400:])


def test_receiver_stopped_for_ten_seconds(spawn, check, netns):
    _, stopped, sender = streaming(spawn, "stall", 50)
    rss_before = sender.rss_kib()
    stopped.signal(signal.SIGSTOP)
    # kill(2) returns before the receiver has stopped, and a frame it was applying as it froze is shown only
    # after SIGCONT, 10 s old: a frame of before the stop, not of the backlog. The frames that count are those
    # made once every thread of it was stopped.
    wait_for(lambda: frozen(stopped.pid), 1)
    froze = time.monotonic()
    time.sleep(10)  # the stop itself
    rss_during = sender.rss_kib()
    stopped.signal(signal.SIGCONT)
    continued = time.monotonic()
    time.sleep(0.5)  # the window the frames after the stop are counted in
    after = ages_ms(stopped, sender, since=continued, made_since=froze)
    check("after a 10 s stop the receiver lives", stopped.alive(), stopped.log()[-300:])
    check("after a 10 s stop frames flow (at least 30 in 0.5 s)", len(after) >= 30, f"{len(after)} frames in 0.5 s")
    first_ages = ", ".join(f"{age:.2f}" for _, age in after[:3])
    check("at least three frames applied after the stop", len(after) >= 3, f"{len(after)} frames")
    check("the first frame applied after the stop is current (≤ 20 ms old, two frames)",
          bool(after) and after[0][1] <= 20, f"ages of the first three: {first_ages} ms")
    check("and so are the next (≤ 20 ms old)", max((age for _, age in after[1:]), default=0) <= 20,
          f"ages of the first three: {first_ages} ms")
    check("the sender's memory stays flat while the receiver is stopped", rss_during - rss_before <= 2048,
          f"RSS {rss_before} KiB before, {rss_during} KiB after 10 s")
    check("the sender logged one connection (streaming to)", sender.log().count("streaming to") == 1,
          sender.log()[-300:])
    check("the sender did not lose its connection", "lost" not in sender.log(), sender.log()[-300:])


def test_killed_senders_lamps_go_off_within_the_timeout(spawn, check, netns):
    _, lamps, sender = streaming(spawn, "kill", 20, "--timeout", "1")
    sender.signal(signal.SIGKILL)
    killed = time.monotonic()
    off = wait_for(lambda: lamps.lines() and lamps.lines()[-1][1:] == ["0", "0", "0"], 2)
    delay = float(lamps.lines()[-1][0]) - killed if off else float("inf")
    check("a killed sender's lamps go off", off, lamps.lines()[-3:])
    check("a killed sender's lamps are off within receiver.timeout (1 s)", delay <= 1.0,
          f"off {delay * 1000:.0f} ms after SIGKILL")


def test_idle_crowd_and_flood_beside_a_sender(spawn, check, figure, netns):
    port, lamps, sender = streaming(spawn, "crowd", 50)
    rss_before = lamps.rss_kib()
    began = time.monotonic()
    idle = [socket.create_connection(("127.0.0.1", port)) for _ in range(100)]
    flooded = [0]
    stop = threading.Event()

    def flood():
        chunk = random.randbytes(10 * 1024)
        while not stop.is_set():
            try:
                with socket.create_connection(("127.0.0.1", port)) as connection:
                    started = time.monotonic()
                    sent = 0
                    while not stop.is_set():
                        connection.sendall(chunk)  # 10 KiB every millisecond: 10 MB/s
                        sent += len(chunk)
                        flooded[0] += len(chunk)
                        ahead = sent / 10e6 - (time.monotonic() - started)
                        if ahead > 0:
                            time.sleep(ahead)
            except OSError:
                time.sleep(0.01)  # closed by the receiver: come back

    flooder = threading.Thread(target=flood)
    flooder.start()
    try:
        time.sleep(3)  # the 3 s window the frames' ages are measured in
    finally:
        stop.set()
        flooder.join()
        for connection in idle:
            connection.close()
    rss_peak = lamps.rss_kib()
    ages = [age for at, age in ages_ms(lamps, sender, since=began + 0.2) if at <= began + 3]
    check("with 100 idle connections and a flood, the active sender's frames still arrive (at least 250 in 3 s)",
          len(ages) >= 250, f"{len(ages)} frames in 3 s")
    check("with 100 idle connections and a flood, the active sender's frames are on time (p99 ≤ 10 ms)",
          percentile(ages, 0.99) <= 10,
          f"{len(ages)} frames in 3 s, age p50 {percentile(ages, 0.5):.2f} ms, p99 {percentile(ages, 0.99):.2f} ms")
    figure(f"the flooder, cut off after 64 KiB each time and reconnecting, got {flooded[0] / 3e6:.1f} MB/s through")
    check("no garbage reached the lamps (only the sender's counter frames)",
          all(n < 1_000_000 for _, n in applied(lamps)))
    check("the receiver lives", lamps.alive(), lamps.log()[-300:])
    check("the receiver's memory stays bounded", rss_peak - rss_before <= 16384,
          f"RSS {rss_before} KiB before, {rss_peak} KiB after")
    log = lamps.log()
    check("the flood was cut off, and said so", "flooding" in log, "" if "flooding" in log else log[-300:])


@pytest.mark.parametrize("count", [1, 2])
def test_stalled_client_is_closed_after_the_idle_timeout(spawn, check, netns, count):
    port = free_port()
    lamps = receiver(spawn, "stalled-r", port, "--idle-timeout", "1")
    wait_for(lambda: listening(port), 5)
    connecting = time.monotonic()  # before the receiver's accept, where its idle clock starts
    with socket.create_connection(("127.0.0.1", port)) as connection:
        connection.sendall(bytes([255] * count))
        connection.settimeout(3)
        try:
            closed = connection.recv(1) == b""
        except OSError:
            closed = True
        after = time.monotonic() - connecting
    check(f"a client that sends {count} byte(s) and stalls is closed", closed, f"after {after:.2f} s")
    check(f"a client that sends {count} byte(s) and stalls is closed after the idle timeout (1 s)",
          1.0 <= after <= 2.0, f"closed after {after:.2f} s")
    check("and the lamps never changed", lamps.lines() == [], f"{lamps.lines()[:3]}")
