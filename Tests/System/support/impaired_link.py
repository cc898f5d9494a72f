"""A room's link to the house as Wi-Fi makes it: every byte late by 20 ms ± 5 ms, and 0.5 % of the TCP segments
lost, in each direction. This machine's kernel has no queueing disciplines (`tc qdisc … netem` is refused), so the
link is a relay in the test's namespace that does to the bytes what netem under TCP would do to them:

- each read is held for a delay drawn from a normal distribution (20 ms, σ 5 ms, cut to 5…35 ms);
- a lost segment (each 1,448 bytes of a read lost with probability 0.5 %) comes again two round trips later
  (Linux's tail-loss probe, RFC 8985: 2 × the smoothed round trip; a stream that flows on is mended sooner, by
  fast retransmission), and everything after it waits behind it: TCP hands the bytes over in order;
- the bytes stay in order, as TCP keeps them; nothing is dropped for good.

`ImpairedLink(host, target_host, target_ports)`: listens on a pair of free ports (P, P + 1 for Snapcast's stream
and control ports) and relays each to the target's; `.port` is P, `.url` what `receiver.sound` takes; `.retransmissions` counts the reads held back
for a lost segment. `.stop()` closes everything. The draws are
seeded per link, so a run can be repeated.
"""
import math
import random
import socket
import threading
import time
from collections import deque

from support.processes import free_port_pair

DELAY_S, JITTER_S = 0.020, 0.005
SEGMENT_BYTES = 1448
LOSS = 0.005
RETRANSMISSION_S = 2 * (2 * DELAY_S)  # two round trips


class ImpairedLink:
    def __init__(self, host, target_host, target_ports, seed=1):
        self.host, self.target_host = host, target_host
        self.random = random.Random(seed)
        self.lock = threading.Lock()
        self.closing = False
        self.sockets, self.threads = [], []
        self.retransmissions = 0  # reads held back as if a segment of theirs was lost
        self.port = free_port_pair(host)
        for offset, target_port in enumerate(target_ports):
            listener = socket.socket()
            listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            listener.bind((host, self.port + offset))
            listener.listen(8)
            self.sockets.append(listener)
            self._start(self._accept, listener, target_port)

    @property
    def url(self):
        return f"snapcast://{self.host}:{self.port}"

    def _start(self, target, *args):
        thread = threading.Thread(target=target, args=args, daemon=True)
        thread.start()
        self.threads.append(thread)

    def _accept(self, listener, target_port):
        while not self.closing:
            try:
                near, _ = listener.accept()
            except OSError:
                return
            try:
                far = socket.create_connection((self.target_host, target_port), timeout=2)
            except OSError:
                near.close()
                continue
            for end in (near, far):
                end.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                end.settimeout(None)
            with self.lock:
                self.sockets += [near, far]
            self._direction(near, far)
            self._direction(far, near)

    def _direction(self, source, destination):
        """Relays source → destination through a queue of (release time, bytes), released in order."""
        queue, ready = deque(), threading.Condition()
        state = {"last_release": 0.0, "ended": False}

        def read():
            while True:
                try:
                    data = source.recv(65536)
                except OSError:
                    data = b""
                now = time.monotonic()
                with ready:
                    if not data:
                        state["ended"] = True
                    else:
                        release = max(now + self._delay(len(data)), state["last_release"])
                        state["last_release"] = release
                        queue.append((release, data))
                    ready.notify()
                if not data:
                    return

        def write():
            while True:
                with ready:
                    while not queue and not state["ended"]:
                        ready.wait()
                    if not queue:
                        break
                    release, data = queue.popleft()
                wait = release - time.monotonic()
                if wait > 0:
                    time.sleep(wait)
                try:
                    destination.sendall(data)
                except OSError:
                    break
            for end in (source, destination):
                try:
                    end.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
        self._start(read)
        self._start(write)

    def _delay(self, size):
        """How long `size` bytes read now take to arrive, s: the link's delay, and a retransmission if one of
        their segments is lost."""
        with self.lock:
            delay = min(max(self.random.gauss(DELAY_S, JITTER_S), 0.005), 0.035)
            if self.random.random() < 1 - (1 - LOSS) ** math.ceil(size / SEGMENT_BYTES):
                self.retransmissions += 1
                delay += RETRANSMISSION_S
            return delay

    def stop(self):
        self.closing = True
        with self.lock:
            ends = list(self.sockets)
        for end in ends:
            try:
                end.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            end.close()
