"""A Snapcast house on one machine: Debian's `snapserver` with a pipe source (raw S16LE 44.1 kHz stereo written in
real time into its FIFO), its JSON-RPC control port, and Debian's stock `snapclient` as a room whose handed-over
sound is recorded with each read stamped on the receivers' clock (stamped.py).

- `SnapServer(folder, …)`: the server on free ports of the test's namespace, logging to its folder; `.url` is what
  `receiver.sound` takes; `.rpc(method, params)` one JSON-RPC call; `.status()` Server.GetStatus's server.
- `stock_client(spawn, server, folder, name)`: the stock room, recorded at 48 kHz (its `--sampleformat`);
  `heard_onsets(audio, reads)`: when each burst in that recording is due to be heard, on the receivers' clock:
  snapclient's file player hands a 50 ms block over 10 ms before it is heard (`--latency 0`), so a burst at place
  p is heard at the arrival of the read that brought its block's first sample + 10 ms + its place in the block.
"""
import json
import os
import socket
import sys

from support.processes import Process, free_port_pair, wait_for
from support.sound_timing import burst_places, read_arrivals

HERE = os.path.dirname(os.path.abspath(__file__))
STAMPED = os.path.join(HERE, "stamped.py")
BLOCK = 2400  # the file player's 50 ms at 48 kHz
HANDED_BEFORE_HEARD = 0.010


class SnapServer:
    def __init__(self, folder, host="127.0.0.1", codec="pcm", buffer_ms=1000, wrapper=(), port=None):
        """`port`: the stream's (Snapcast's own is 1704; default: a free one); `wrapper`: the command the server
        runs through (an AvahiHost's, to publish itself by DNS-SD)."""
        self.folder, self.host, self.wrapper = folder, host, list(wrapper)
        # The control port is the stream's + 1, as Snapcast's own 1704 and 1705 (the receiver looks there).
        self.port = port or free_port_pair(host)
        self.control_port = self.port + 1
        self.fifo = os.path.join(folder, "snapfifo")
        os.mkfifo(self.fifo)
        os.makedirs(os.path.join(folder, "snapserver-data"), exist_ok=True)
        self.conf = os.path.join(folder, "snapserver.conf")
        with open(self.conf, "w") as conf:
            conf.write(f"[server]\ndatadir = {folder}/snapserver-data\n[http]\nenabled = false\n"
                       f"[tcp]\nbind_to_address = {host}\nport = {self.control_port}\n"
                       f"[stream]\nbind_to_address = {host}\nport = {self.port}\n"
                       f"source = pipe://{self.fifo}?name=house&mode=read\nsampleformat = 44100:16:2\n"
                       f"codec = {codec}\nbuffer = {buffer_ms}\n")
        self.process, self.starts = None, 0
        self.start()

    @property
    def url(self):
        return f"snapcast://{self.host}:{self.port}"

    def start(self):
        """Starts the server (again, on the same ports) and waits until its control port answers."""
        self.starts += 1
        self.process = Process(self.folder, f"snapserver-{self.starts}", [*self.wrapper, "snapserver", "-c", self.conf])
        if not wait_for(lambda: self._answers() or not self.process.alive(), 10) or not self.process.alive():
            raise RuntimeError(f"snapserver did not start: {self.process.log()[-800:]}")

    def _answers(self):
        try:
            self.rpc("Server.GetRPCVersion")
            return True
        except OSError:
            return False

    def stop(self):
        if self.process is not None:
            self.process.stop(timeout=5)

    def rpc(self, method, params=None):
        """One JSON-RPC call on the control port: its result (raises OSError when the port does not answer)."""
        with socket.create_connection((self.host, self.control_port), timeout=2) as connection:
            request = {"id": 1, "jsonrpc": "2.0", "method": method, **({"params": params} if params else {})}
            connection.sendall(json.dumps(request).encode() + b"\r\n")
            pending = b""
            while True:  # the server's notifications (a client joined…) may come first
                *lines, pending = pending.split(b"\n")
                for line in lines:
                    message = json.loads(line) if line.strip() else {}
                    if message.get("id") == 1:
                        if "error" in message:
                            raise OSError(f"{method}: {message['error']}")
                        return message["result"]
                data = connection.recv(65536)
                if not data:
                    raise OSError(f"{method}: no answer")
                pending += data

    def clients(self):
        """{client id: client} of every client the server knows, connected or not."""
        found = {}
        for group in self.rpc("Server.GetStatus")["server"]["groups"]:
            for client in group["clients"]:
                found[client["id"]] = {**client, "group": group}
        return found


def stock_client(spawn, server, folder, name="stock"):
    """Debian's snapclient as a room of `server`, its handed-over sound recorded (48 kHz) with stamped reads:
    (process, audio path, reads path)."""
    audio, reads = os.path.join(folder, f"{name}.raw"), os.path.join(folder, f"{name}.txt")
    process = spawn.command(name, [*server.wrapper, sys.executable, STAMPED, "reads", audio, reads, "--", "snapclient",
                                   "--host", server.host, "--port", str(server.port), "--hostID", name,
                                   "--player", "file:filename=stdout", "--sampleformat", "48000:16:*",
                                   "--logsink", "stderr"])
    return process, audio, reads


def heard_onsets(audio, reads):
    """When each burst in a stock client's recording is due to be heard, on the receivers' clock."""
    arrivals = read_arrivals(reads)
    onsets = []
    for place in burst_places(audio):
        start = place - place % BLOCK
        arrived = next((t for end, t in arrivals if end > start), None)
        if arrived is not None:
            onsets.append(arrived + HANDED_BEFORE_HEARD + (place - start) / 48000)
    return onsets
