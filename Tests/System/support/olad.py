"""A real OLA daemon (olad 0.10.9, Debian `ola`, `ola-python`) receiving sACN and Art-Net in tests.

Usage, from a test already in a private network namespace with only `lo` (the `netns` fixture, or
`support.namespaces.private_network()`); the `olad` fixture of conftest.py does this:

    olad = Olad(work_dir)                      # sACN 1 and 2, Art-Net port-addresses 1 and 2
    recorder = olad.recorder(channels=3)       # registered with olad when this returns
    ... send to olad.address (10.77.0.2), or sACN multicast 239.255.0.U, or Art-Net broadcast ...
    for record in recorder.records(olad.ola_universe("sacn", 1)):
        record.time, record.universe, record.values, record.counter
    olad.stop()                                # stops the recorders, olad and its namespace

API
  Olad(work_dir, universes=(("sacn", 1), ("sacn", 2), ("artnet", 1), ("artnet", 2)),
       test_address="10.77.0.1", address="10.77.0.2", veth="olaveth", ready_timeout=15)
      refuses (RuntimeError) a namespace with interfaces besides lo: one Olad at a time there
    .address / .test_address       olad's side / the test's side of the veth pair (/24)
    .test_veth                     the test side's interface ("olaveth0")
    .ola_universe(protocol, universe) -> int   OLA universe a record carries for that input
    .recorder(name="recorder", channels=3, universes=None, ready_timeout=10) -> Recorder
    .wrapper                       ["nsenter", "--net=/proc/PID/ns/net"]: run a command beside olad
    .log() -> str, .log_path, .alive() -> bool, .stop(); a context manager too
  Recorder: .path, .wait_ready(timeout), .records(universe=None) -> [Record], .dark(universe=None) -> bool,
    .stop()
  read_records(path, universe=None) -> [Record]
  Record(time, universe, values): CLOCK_MONOTONIC seconds (one clock for every namespace), OLA
    universe, first channel values (channel 1 first); .counter = channels 1-3 as a 24-bit number.

How it is built
  - olad's network namespace is a support.namespaces.Peer: a veth pair, test side olaveth0
    10.77.0.1/24, olad side olaveth1 10.77.0.2/24, lo up in both; olad and the recorder join it
    with nsenter. The test side gets routes 239.255.0.0/16 (sACN multicast from a socket bound
    to 0.0.0.0) and 255.255.255.255/32 (Art-Net limited broadcast; without it: ENETUNREACH) via
    olaveth0; 10.77.0.255 (directed broadcast) needs none.
  - olad runs as the olad user (it refuses root), `-l 3 --no-http --no-register-with-dns-sd`, its
    stderr in WORK/olad.log. Its config is a folder of its own under /tmp (owned by olad, written
    afresh: olad rewrites ola-port.conf and ola-universe.conf on exit; pytest's folders are 0700
    root, which the olad user cannot enter), copied to WORK/olad-config when it stops.
    Every other plugin's ola-NAME.conf says `enabled = false` (a missing one starts enabled);
    readiness = the log says only E1.31 and/or ArtNet started and `ola_uni_info` lists every
    patched universe (0.1-0.5 s here).
  - The recorder is this module run by /usr/bin/python3 (`-m support.olad record …`; ola-python
    is Debian's, installed for Debian's python) inside olad's namespace: OLA's Python client
    (ClientWrapper, RegisterUniverse) writes `TIME UNIVERSE V1 … VN` per DMX callback to
    WORK/NAME.records, line-buffered, and touches NAME.records.ready once olad acknowledged every
    registration. Registering sends no callback of its own: the first line is the first frame.
  - Children get a parent-death signal (setpriv --pdeathsig), so a test that dies leaves no olad
    or namespace behind. It is the *thread* that made the Olad whose end counts.

Facts measured with olad 0.10.9 (raw E1.31 and ArtDmx packets from a test sender)
  Plugin ids: ArtNet 2 (device "2-1"), E1.31 11 (device "11-1"); ola-port.conf keys
  "2-1-I-<port>" and "11-1-I-<port>" patch input ports ("I" = OLA receives from the network).
  E1.31: an input port patched to OLA universe N listens on sACN universe N (the same number; OLA
    refuses universe 0 and > 63999), joins 239.255.hi.lo on its interface and its socket is bound
    to 0.0.0.0:5568: unicast to 10.77.0.2 and multicast to 239.255.0.N both arrive (1000 of 1000
    frames each). Packets from an unpatched universe are ignored.
  Art-Net: OLA's node has 4 input ports; a port listens on port-address
    (net << 8) | (subnet << 4) | (OLA universe % 16), net and subnet from ola-artnet.conf
    (default 0/0). So input port 0 patched to OLA universe 2 (the plain `2-1-I-0 = 2`) listens on
    Art-Net 0:0:2 = port-address 2, and an unpatched port on nothing. To hear port-addresses 1 and
    2, patch two ports to OLA universes ≡ 1 and 2 mod 16 that do not clash with the sACN ones:
    this fixture uses OLA universe 100000 + port-address (`2-1-I-0 = 100001`, `2-1-I-1 =
    100002`; ola_dev_info shows "IN ArtNet Universe 0:0:1"). All Art-Net universes of one olad share
    net and sub-net (ola-artnet.conf `net =`, `subnet =`), hence at most 4 within one 16-block.
    Unicast, directed broadcast (10.77.0.255) and limited broadcast all arrive.
  sACN stream terminated (options bit 0x40, three packets): from the only source of a universe
    there is no callback at all (OLA clears its port buffer without a DMX update; the universe
    keeps the last values; watched 3 s; the same when the terminate packets carry non-zero data).
    With a second source still sending, a callback comes at once (< 1 ms) carrying that source's
    data alone. A new source right after a terminate is taken at once, unmerged.
  sACN source that just stops: OLA keeps it 2.5 s and HTP-merges it with a new source (a new CID):
    measured 244 merged callbacks, the last 2.43 s after the new source began. A source reusing
    its CID while tracked loses packets whose sequence number is 0-19 behind its last one.
  sACN priority (framing-layer byte) is honoured per universe with this config as is (no port
    setting: it is OLA's E1.31 inflator, not the port's priority_mode): while a source is tracked,
    packets of a lower-priority source are dropped (no callback, no merge). So "terminated" and
    "just stopped" differ: A (priority 200, or 100) sends, then zeros (+ 3 terminate packets or
    not); B (new CID, priority 100, or 1) begins 0.2 s later at 50 fps. Terminated: B's first
    value 0.5-0.8 ms after B's first packet (200.7-201.0 ms after A's last); just stopped: 2300.7-
    2301.4 ms after B began = 2500.9-2501.7 ms after A's last (expiry 2.5 s, checked only when
    a packet arrives), 115 of 200 B frames lost (4 runs each). The level-3 log says "CID … sent a
    termination for universe U" vs "source … has expired" (at the first packet after 2.5 s).
  Art-Net source that just stops: no callback ever (watched 12 s); the universe keeps the last
    values. A new sender from the same IP (any port) is the same source: taken at once. One from
    another IP is HTP-merged with the silent one for 10 s (measured 9.93 s, "Entered merge mode").
  Delivery: 1000 frames at 100 fps with a counter in channels 1-3 arrived complete, in order and
    once each on sACN universes 1 and 2 unicast and multicast and on Art-Net 1 and 2 unicast (5
    runs each), directed broadcast (4) and limited broadcast (1); send to callback p50 0.4-1.2 ms,
    p99 0.7-6 ms, max 15 ms (the higher figures while other jobs ran on the machine). A recorder of
    all 512 channels beside a 3-channel one saw the same 11769 callbacks.
"""
import collections
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

from support.namespaces import Peer
from support.processes import stop_popen

SUPPORT = os.path.dirname(os.path.abspath(__file__))
OLAD_USER = "olad"
OLAD_GROUP = "nogroup"
# The recorder imports ola-python, which Debian installs for its own interpreter only (a pyenv
# python, or a venv without system site packages, cannot import it).
SYSTEM_PYTHON = "/usr/bin/python3"

# olad 0.10.9's plugins by config file (ola-NAME.conf); a plugin with no config file starts enabled.
OTHER_PLUGINS = ("dummy", "espnet", "ftdidmx", "gpio", "karate", "kinet", "milinst", "opendmx",
                 "openpixelcontrol", "osc", "pathport", "renard", "sandnet", "shownet", "spi",
                 "stageprofi", "uartdmx", "usbdmx", "usbserial")
E131_DEVICE = "11-1"    # plugin id 11 (E1.31), device 1: ola-port.conf keys "11-1-I-<port>"
ARTNET_DEVICE = "2-1"   # plugin id 2 (ArtNet), device 1
ARTNET_PORTS = 4        # Art-Net input ports of OLA's node (fixed)
ARTNET_BASE = 100000    # OLA universe of Art-Net port-address A: ARTNET_BASE + A (≡ A mod 16)


class Record(collections.namedtuple("Record", "time universe values")):
    """One DMX callback: `time` CLOCK_MONOTONIC seconds, `universe` the OLA universe, `values` the
    first channels (channel 1 first)."""

    @property
    def counter(self):
        """Channels 1-3 as one 24-bit number (a `--pattern counter` style frame number)."""
        a, b, c = (tuple(self.values) + (0, 0, 0))[:3]
        return a << 16 | b << 8 | c


def read_records(path, universe=None):
    """[Record] of a recorder's file, in callback order; only `universe`'s when given. A line
    still being written (no newline yet) is left out."""
    records = []
    with open(path) as file:
        for line in file:
            if not line.endswith("\n") or line.startswith("#"):
                continue
            fields = line.split()
            record = Record(float(fields[0]), int(fields[1]), tuple(map(int, fields[2:])))
            if universe is None or record.universe == universe:
                records.append(record)
    return records


def _interfaces():
    """The network interfaces of this thread's namespace (/proc/thread-self/net/dev is per
    namespace, and the `netns` fixture moves the test's thread; /sys/class/net is not unless sysfs
    was mounted again)."""
    with open("/proc/thread-self/net/dev") as dev:
        return [line.split(":")[0].strip() for line in dev.readlines()[2:]]


def _run(*command):
    subprocess.run(command, check=True, capture_output=True, text=True)


class Olad:
    """olad in a network namespace of its own behind a veth pair, E1.31 and Art-Net inputs patched.

    `universes`: (protocol, universe) pairs olad listens on, protocol "sacn" (universe 1…63999)
    or "artnet" (15-bit port-address 0…32767; at most 4, all with the same net and sub-net).
    """

    def __init__(self, work_dir, universes=(("sacn", 1), ("sacn", 2), ("artnet", 1), ("artnet", 2)),
                 test_address="10.77.0.1", address="10.77.0.2", veth="olaveth", ready_timeout=15):
        """Starts olad and returns once it listens; RuntimeError (with the log's path) if not."""
        foreign = [name for name in _interfaces() if name != "lo"]
        if foreign:
            raise RuntimeError(f"Olad adds a veth pair and a multicast route: run it in a private network "
                               f"namespace (the netns fixture) with only lo, not beside {foreign}")
        self.work_dir = work_dir
        self.test_address = test_address
        self.address = address
        self.veth, self.test_veth = veth, veth + "0"
        self.universes = {}
        sacn = [u for p, u in universes if p == "sacn"]
        artnet = [u for p, u in universes if p == "artnet"]
        if any(p not in ("sacn", "artnet") for p, _ in universes):
            raise ValueError(f"unknown protocol in {universes}")
        if any(not 1 <= u <= 63999 for u in sacn) or any(not 0 <= u <= 32767 for u in artnet):
            raise ValueError(f"universe out of range in {universes}")
        if len(artnet) > ARTNET_PORTS or len({u >> 4 for u in artnet}) > 1:
            raise ValueError("OLA's Art-Net node has 4 input ports sharing one net and sub-net")
        for u in sacn:
            self.universes[("sacn", u)] = u
        for u in artnet:
            self.universes[("artnet", u)] = ARTNET_BASE + u
        self._peer = self._olad = None
        # pytest's folders are root's alone (0700): olad's config lives in a folder the olad user owns.
        self.config_dir = tempfile.mkdtemp(prefix="lightorgan-olad-")
        self.log_path = os.path.join(work_dir, "olad.log")
        self._recorders = []
        try:
            self._make_namespace()
            self._write_config(sacn, artnet)
            self._start(ready_timeout)
        except BaseException:
            self.stop()
            raise

    # -- setup ------------------------------------------------------------------------------

    def _make_namespace(self):
        # A child holds the new network namespace; olad and the recorder join it with nsenter.
        self._peer = Peer(self.address, self.test_address, self.veth)
        _run("ip", "route", "add", "239.255.0.0/16", "dev", self.test_veth)
        _run("ip", "route", "add", "255.255.255.255/32", "dev", self.test_veth)

    @property
    def wrapper(self):
        """Command prefix that runs a command inside olad's network namespace."""
        return self._peer.wrapper

    def _write_config(self, sacn, artnet):
        # olad runs as the olad user: it must own its config folder.
        files = {f"ola-{name}.conf": "enabled = false\n" for name in OTHER_PLUGINS}
        files["ola-e131.conf"] = (f"enabled = {'true' if sacn else 'false'}\nip = {self.address}\n"
                                  f"input_ports = {max(len(sacn), 1)}\noutput_ports = 0\n"
                                  "ignore_preview = true\ndraft_discovery = false\nrevision = 0.46\n"
                                  "prepend_hostname = false\ndscp = 0\n")
        net, subnet = (artnet[0] >> 8, artnet[0] >> 4 & 15) if artnet else (0, 0)
        files["ola-artnet.conf"] = (f"enabled = {'true' if artnet else 'false'}\nip = {self.address}\n"
                                    f"net = {net}\nsubnet = {subnet}\noutput_ports = 0\n"
                                    "always_broadcast = false\nuse_limited_broadcast = false\n"
                                    "use_loopback = false\nshort_name = lightorgan-test\n"
                                    "long_name = lightorgan test receiver\n")
        ports = [f"{E131_DEVICE}-I-{i} = {u}" for i, u in enumerate(sacn)]
        ports += [f"{ARTNET_DEVICE}-I-{i} = {ARTNET_BASE + u}" for i, u in enumerate(artnet)]
        files["ola-port.conf"] = "\n".join(ports) + "\n"
        files["ola-server.conf"] = "instance-name = lightorgan-test\n"
        for name, text in files.items():
            with open(os.path.join(self.config_dir, name), "w") as file:
                file.write(text)
        for root, folders, names in os.walk(self.config_dir):
            for name in [root, *(os.path.join(root, n) for n in folders + names)]:
                shutil.chown(name, OLAD_USER, OLAD_GROUP)

    def _start(self, timeout):
        with open(self.log_path, "w") as log:
            self._olad = subprocess.Popen(
                [*self.wrapper, "setpriv", "--pdeathsig", "TERM", f"--reuid={OLAD_USER}",
                 f"--regid={OLAD_GROUP}", "--clear-groups",
                 "olad", "-l", "3", "-c", self.config_dir, "--no-register-with-dns-sd", "--no-http"],
                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=log)
        deadline = time.monotonic() + timeout
        while not self._ready():
            if self._olad.poll() is not None:
                raise RuntimeError(f"olad exited with {self._olad.returncode}: see {self.log_path}")
            if time.monotonic() > deadline:
                raise RuntimeError(f"olad not ready after {timeout} s: see {self.log_path}")
            time.sleep(0.05)

    def _ready(self):
        started = {line.split("Started ", 1)[1].strip() for line in self.log().splitlines()
                   if "PluginManager" in line and ": Started " in line}
        wanted = {"E1.31 (sACN)" for p, _ in self.universes if p == "sacn"}
        wanted |= {"ArtNet" for p, _ in self.universes if p == "artnet"}
        if started - wanted:
            raise RuntimeError(f"olad started plugins {sorted(started - wanted)} too: is OTHER_PLUGINS "
                               f"complete for this OLA version? See {self.log_path}")
        if not wanted <= started:
            return False
        info = subprocess.run([*self.wrapper, "ola_uni_info"], capture_output=True, text=True)
        listed = {int(line.split()[0]) for line in info.stdout.splitlines() if line.split()[:1] != []
                  and line.split()[0].isdigit()}
        return info.returncode == 0 and set(self.universes.values()) <= listed

    # -- use ----------------------------------------------------------------------------------

    def ola_universe(self, protocol, universe):
        """The OLA universe that olad's input for `protocol` ("sacn" or "artnet") `universe` is
        patched to (what the recorder's records carry)."""
        return self.universes[(protocol, universe)]

    def log(self):
        """olad's log so far (level 3: plugins started, ports patched, E1.31 sources added, ended)."""
        with open(self.log_path, errors="replace") as file:
            return file.read()

    def recorder(self, name="recorder", channels=3, universes=None, ready_timeout=10):
        """Starts a Recorder for `universes` (OLA universes, default all of them) and waits until
        it is registered."""
        recorder = Recorder(self, os.path.join(self.work_dir, f"{name}.records"), channels,
                            universes or sorted(self.universes.values()))
        self._recorders.append(recorder)
        recorder.wait_ready(ready_timeout)
        return recorder

    def alive(self):
        return self._olad is not None and self._olad.poll() is None

    def stop(self):
        """Stops the recorders and olad and removes the namespace (veth pair and routes go with it);
        olad's config, as olad left it, goes to WORK/olad-config. Safe to call twice."""
        for recorder in self._recorders:
            recorder.stop()
        self._recorders = []
        if self._olad is not None:
            stop_popen(self._olad)
        self._olad = None
        if self._peer is not None:
            self._peer.close()
            self._peer = None
            # The namespace goes away in the background: its veth pair at once.
            subprocess.run(["ip", "link", "delete", self.test_veth], capture_output=True)
        if self.config_dir is not None and os.path.isdir(self.config_dir):
            shutil.copytree(self.config_dir, os.path.join(self.work_dir, "olad-config"), dirs_exist_ok=True)
            shutil.rmtree(self.config_dir, ignore_errors=True)
        self.config_dir = None

    def __enter__(self):
        return self

    def __exit__(self, *exception):
        self.stop()


class Recorder:
    """A process inside olad's namespace that writes one line per DMX callback:
    `MONOTONIC_SECONDS OLA_UNIVERSE V1 V2 … VN` (N = `channels`, all when None)."""

    def __init__(self, olad, path, channels, universes):
        self.path = path
        self.universes = list(universes)
        self._ready_path = path + ".ready"
        for stale in (path, self._ready_path):
            if os.path.exists(stale):
                os.remove(stale)
        self.err_path = path + ".err"
        with open(self.err_path, "w") as err:
            self.process = subprocess.Popen(
                [*olad.wrapper, "setpriv", "--pdeathsig", "TERM", SYSTEM_PYTHON, "-m", "support.olad",
                 "record", path, str(channels or 0), *map(str, self.universes)],
                cwd=os.path.dirname(SUPPORT), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=err)

    def wait_ready(self, timeout=10):
        """Waits until the recorder has registered for every universe with olad."""
        deadline = time.monotonic() + timeout
        while not os.path.exists(self._ready_path):
            if self.process.poll() is not None:
                raise RuntimeError(f"recorder exited with {self.process.returncode}: see {self.err_path}")
            if time.monotonic() > deadline:
                raise RuntimeError(f"recorder not ready after {timeout} s: see {self.err_path}")
            time.sleep(0.01)

    def records(self, universe=None):
        """[Record] so far (all universes, or the OLA universe `universe`)."""
        return read_records(self.path, universe)

    def dark(self, universe=None):
        """Whether the last record so far (of the OLA universe `universe`) is all off: a stopped sender's
        last frame, after every lit one (a stream-terminated packet gets no callback of its own)."""
        records = self.records(universe)
        return bool(records) and not any(records[-1].values)

    def stop(self):
        stop_popen(self.process)


def _record(path, channels, universes):
    """The recorder process (runs under SYSTEM_PYTHON inside olad's namespace)."""
    from ola.ClientWrapper import ClientWrapper
    from ola.OlaClient import OlaClient

    out = open(path, "w", buffering=1)
    wrapper = ClientWrapper()
    client = wrapper.Client()
    clock = time.clock_gettime
    monotonic = time.CLOCK_MONOTONIC
    limit = channels or None
    pending = set(universes)

    def on_data(universe):
        def callback(data):
            out.write(f"{clock(monotonic):.6f} {universe} {' '.join(map(str, data[:limit]))}\n")
        return callback

    def registered(universe):
        def callback(status):
            if not status.Succeeded():
                sys.exit(f"registering for universe {universe} failed: {status.message}")
            pending.discard(universe)
            if not pending:
                open(path + ".ready", "w").close()
        return callback

    for universe in universes:
        client.RegisterUniverse(universe, OlaClient.REGISTER, on_data(universe), registered(universe))
    # Lines are written whole (line buffering), so TERM can end the process at once; the client
    # loop itself would only notice Stop() within its 1 s select.
    signal.signal(signal.SIGTERM, lambda *_: os._exit(0))
    wrapper.Run()


if __name__ == "__main__" and len(sys.argv) >= 4 and sys.argv[1] == "record":
    _record(sys.argv[2], int(sys.argv[3]), [int(u) for u in sys.argv[4:]])
