"""Strangers on the LAN who hold the receiver's page: `Strangers(target, addresses, pages, idle)`
keeps `pages` view-only /live sockets (TLS, upgrade, hello without a key, then reading everything)
and `idle` plain TCP connections that never send a byte open to the page's port at `target`, spread
over the source `addresses` (each must be an address of this namespace), and opens a new one each
time the receiver closes one, as a determined stranger would. `.start()`, `.stop()`;
`.held()` → (pages, idle) open now; `.samples` the counts every 0.2 s; `.opened` how many it opened.
"""
import socket
import ssl
import threading
import time

from support.browser import PAGE_PORT, VIEW_ONLY_HELLO, send_frame


class Strangers:
    def __init__(self, target, addresses, pages=64, idle=64):
        self.target, self.addresses = target, list(addresses)
        self.pages_wanted, self.idle_wanted = pages, idle
        self.stopping = threading.Event()
        self.lock = threading.Lock()
        self.pages, self.idle = set(), set()
        self.opened = {"pages": 0, "idle": 0}
        self.samples = []
        self.threads = []

    def _source(self, index):
        return self.addresses[index % len(self.addresses)]

    def _page(self, index):
        """One view-only page, reopened whenever it is closed, until stop()."""
        context = ssl.create_default_context()
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
        while not self.stopping.is_set():
            connection = None
            try:
                raw = socket.create_connection((self.target, PAGE_PORT), timeout=5,
                                               source_address=(self._source(index), 0))
                connection = context.wrap_socket(raw, server_hostname=self.target)
                connection.sendall((f"GET /live HTTP/1.1\r\nHost: {self.target}:{PAGE_PORT}\r\nUpgrade: websocket\r\n"
                                    "Connection: Upgrade\r\nSec-WebSocket-Key: c3RyYW5nZXItc3RyYW5nZXI=\r\n"
                                    f"Sec-WebSocket-Version: 13\r\nOrigin: https://{self.target}:{PAGE_PORT}\r\n\r\n").encode())
                head = b""
                while b"\r\n\r\n" not in head:
                    chunk = connection.recv(4096)
                    if not chunk:
                        raise ConnectionError("closed during the upgrade")
                    head += chunk
                if b" 101 " not in head.split(b"\r\n", 1)[0]:
                    raise ConnectionError(head[:40])
                send_frame(connection, 1, VIEW_ONLY_HELLO)
                with self.lock:
                    self.pages.add(index)
                    self.opened["pages"] += 1
                connection.settimeout(0.5)
                while not self.stopping.is_set():
                    try:
                        if not connection.recv(65536):
                            break
                    except (socket.timeout, ssl.SSLWantReadError):
                        continue
            except (OSError, ConnectionError, ssl.SSLError):
                pass
            finally:
                with self.lock:
                    self.pages.discard(index)
                if connection is not None:
                    try:
                        connection.close()
                    except OSError:
                        pass
            self.stopping.wait(0.2)  # then again: a stranger who is closed comes back

    def _idlers(self):
        """The idle connections: all in one thread, each checked for being closed every 0.1 s."""
        held = {}
        try:
            while not self.stopping.is_set():
                for index in range(self.idle_wanted):
                    if index not in held:
                        try:
                            connection = socket.create_connection((self.target, PAGE_PORT), timeout=2,
                                                                  source_address=(self._source(index + 7), 0))
                            connection.setblocking(False)
                            held[index] = connection
                            with self.lock:
                                self.opened["idle"] += 1
                        except OSError:
                            pass
                for index, connection in list(held.items()):
                    try:
                        if connection.recv(1) == b"":
                            raise ConnectionError
                    except BlockingIOError:
                        continue
                    except OSError:
                        pass
                    connection.close()
                    del held[index]
                with self.lock:
                    self.idle = set(held)
                time.sleep(0.1)
        finally:
            for connection in held.values():
                connection.close()

    def _sample(self):
        while not self.stopping.wait(0.2):
            self.samples.append(self.held())

    def held(self):
        with self.lock:
            return len(self.pages), len(self.idle)

    def start(self):
        self.threads = [threading.Thread(target=self._page, args=(i,), daemon=True) for i in range(self.pages_wanted)]
        self.threads += [threading.Thread(target=self._idlers, daemon=True), threading.Thread(target=self._sample, daemon=True)]
        for thread in self.threads:
            thread.start()
        return self

    def stop(self):
        self.stopping.set()
        for thread in self.threads:
            thread.join(3)
