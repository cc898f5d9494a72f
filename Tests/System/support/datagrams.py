"""UDP datagrams as lighting devices receive them: a listener that keeps every datagram with its
arrival time (CLOCK_MONOTONIC, the clock of the senders' own timestamps), and readers of the
published packet layouts (E1.31, DDP), written from the specifications by the tests themselves."""
import socket
import threading
import time


class DatagramListener:
    """A UDP socket on `host` (a free port unless one is given) that keeps every datagram with its
    arrival time and source, read by a thread of its own; `close()` ends it."""

    def __init__(self, host="127.0.0.1", port=0):
        self.socket = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.socket.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.socket.bind((host, port))
        self.port = self.socket.getsockname()[1]
        self.packets = []
        self.closing = False
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self):
        while True:
            try:
                data, source = self.socket.recvfrom(2048)
            except OSError:
                return
            if self.closing:
                return
            self.packets.append((time.clock_gettime(time.CLOCK_MONOTONIC), data, source))

    def close(self):
        # shutdown wakes the thread's recv (with b""; a close alone would leave it blocked on the socket).
        self.closing = True
        try:
            self.socket.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self.socket.close()
        self.thread.join(2)

    def __enter__(self):
        return self

    def __exit__(self, *exception):
        self.close()


def decode_ddp(packet):
    """The published DDP header (10 bytes)."""
    return {"flags": packet[0], "sequence": packet[1] & 0x0f, "data_type": packet[2], "id": packet[3],
            "offset": int.from_bytes(packet[4:8], "big"), "length": int.from_bytes(packet[8:10], "big"),
            "data": packet[10:]}


def decode_e131(packet):
    """An E1.31-2018 packet: a data packet (root vector 4) or a synchronization packet (root vector 8,
    framing vector 1), its fields by name; None for anything else."""
    if len(packet) < 49 or packet[4:13] != b"ASC-E1.17":
        return None
    root = int.from_bytes(packet[18:22], "big")
    if root == 8 and int.from_bytes(packet[40:44], "big") == 1 and len(packet) == 49:
        return {"kind": "sync", "sequence": packet[44], "universe": int.from_bytes(packet[45:47], "big")}
    if root == 4 and len(packet) >= 126:
        return {"kind": "data", "priority": packet[108], "sync": int.from_bytes(packet[109:111], "big"),
                "sequence": packet[111], "terminated": bool(packet[112] & 0x40),
                "universe": int.from_bytes(packet[113:115], "big"), "channels": packet[126:]}
    return None
