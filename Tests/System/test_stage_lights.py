"""Stage lights as a lighting technician expects them, against a real olad and the packets
themselves: stops that never wait on another target, the link multicast and broadcast leave by,
E1.31 keep-alives and synchronization, DDP's RGBW type, ArtPoll, the patch check, and settings that
would mean nothing refused in one line.

Senders run `--pattern counter` at 100 frames/s with gamma 1 (see test_lighting.py): every frame's
three dimmer channels carry its number. olad runs behind a veth (support/olad.py: 10.77.0.1 here,
10.77.0.2 there, the interface olaveth0); packet checks read the datagrams with support/datagrams.py.
"""
import signal
import socket
import subprocess
import time

import pytest

from support.datagrams import DatagramListener, decode_ddp, decode_e131
from support.namespaces import Peer, run
from support.processes import made, out_of_order, wait_for

pytestmark = [pytest.mark.lighting]


def send_counter(spawn, name, hosts, *extra, **options):
    return spawn(name, "send", "--pattern", "counter", "--fps", "100", "--stats-interval", "0", "--hosts", hosts,
                 *extra, **options)


def counters(recorder, universe, since=0.0):
    """The frame numbers olad showed on `universe` (lit frames only), in arrival order."""
    return [r.counter for r in recorder.records(universe) if r.counter and r.time >= since]


def delivery_facts(arrived, process, seconds):
    """The facts of "the frames arrived in order, none twice, about all the sender made in `seconds`", each
    (name, holds, detail)."""
    sent = set(made(process))
    return [(f"at least {80 * seconds:g} frames", len(arrived) >= 80 * seconds,
             f"{len(arrived)} frames; {process.log()[-300:]}"),
            ("in order", arrived == sorted(arrived),
             out_of_order(arrived)),
            ("none twice", len(set(arrived)) == len(arrived), f"{len(arrived) - len(set(arrived))} repeated"),
            ("each a frame the sender made", set(arrived) <= sent, f"not made: {sorted(set(arrived) - sent)[:10]}")]


# -- stops ------------------------------------------------------------------------------------------

@pytest.fixture
def hanging_dns(tmp_path):
    """A resolv.conf whose name server takes every query and never answers (a bound UDP socket on
    127.0.0.1:53 that nobody reads), and the wrapper that runs a command with it as /etc/resolv.conf
    (a private mount namespace)."""
    resolver = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    resolver.bind(("127.0.0.1", 53))
    conf = tmp_path / "resolv.conf"
    conf.write_text("nameserver 127.0.0.1\noptions timeout:5 attempts:3\n")
    try:
        yield ["unshare", "--mount", "--propagation", "private", "sh", "-c",
               'mount --bind "$0" /etc/resolv.conf && exec "$@"', str(conf)]
    finally:
        resolver.close()


@pytest.mark.timing
@pytest.mark.parametrize("stop_signal", [signal.SIGTERM, signal.SIGINT, signal.SIGTERM], ids=["SIGTERM", "Ctrl-C", "SIGTERM again"])
def test_a_stop_darkens_every_target_within_100_ms_while_a_name_hangs(olad, spawn, check, hanging_dns, stop_signal):
    """A target whose DNS server never answers, listed first, and a real fixture: on a stop the fixture is dark
    and its stream terminated within 100 ms, and the sender exits within 0.5 s."""
    recorder = olad.recorder("hang")
    process = send_counter(spawn, "hang", f"sacn://stage-left.lan,sacn://{olad.address}?rate=100&gamma=1",
                           wrapper=hanging_dns)
    lit = wait_for(lambda: len(counters(recorder, olad.ola_universe("sacn", 1))) > 50, 5)
    log = process.log()
    check("the fixture is lit while the name still hangs", lit, log[-300:])
    check("…the name is not resolved yet (no \"sending to stage-left.lan\")",
          "sending to stage-left.lan" not in log, log[-300:])
    check("…and no answer yet (no \"cannot resolve stage-left.lan\")", "cannot resolve stage-left.lan" not in log,
          log[-300:])
    terminations = olad.log().count("sent a termination for universe 1")
    stopped_at = time.monotonic()
    process.signal(stop_signal)
    terminated = wait_for(lambda: olad.log().count("sent a termination for universe 1") > terminations, 1)
    exited = wait_for(lambda: not process.alive(), 2)
    exit_after = time.monotonic() - stopped_at
    records = recorder.records(olad.ola_universe("sacn", 1))
    last = records[-1] if records else None
    dark_after = (last.time - stopped_at) * 1000 if last else float("inf")
    check("olad shows frames", last is not None, "no records")
    check("the last frame olad shows is all off", last is not None and tuple(last.values[:3]) == (0, 0, 0),
          f"{tuple(last.values[:3])}" if last else "no records")
    check("dark within 100 ms of the stop (that last frame comes that soon)", dark_after < 100,
          f"last frame {dark_after:.0f} ms after {signal.Signals(stop_signal).name}")
    check("…and the stream terminated (olad lets go of the source at once)", terminated, olad.log()[-300:])
    check("the sender exits", exited, f"{1000 * exit_after:.0f} ms")
    check("…within 0.5 s", exit_after < 0.5, f"{1000 * exit_after:.0f} ms")
    check("…with status 0", process.process.returncode == 0, f"exit {process.process.returncode}")


# -- the link -------------------------------------------------------------------------------------

@pytest.fixture
def wrong_link(olad):
    """A second link beside olad's, holding the default route: multicast and limited broadcast follow it
    unless told otherwise (olad's own routes for 239.255.0.0/16 and 255.255.255.255 are removed)."""
    run("ip", "route", "del", "239.255.0.0/16", "dev", olad.test_veth)
    run("ip", "route", "del", "255.255.255.255/32", "dev", olad.test_veth)
    with Peer("10.78.0.2", "10.78.0.1", "wifi") as peer:
        run("ip", "route", "add", "default", "via", peer.address)
        yield peer


@pytest.mark.timing
@pytest.mark.parametrize("olad", [(("sacn", 1), ("artnet", 1))], indirect=True, ids=["olad on sACN 1 and Art-Net 1"])
def test_interface_picks_the_link_for_multicast_and_broadcast(olad, wrong_link, spawn, check):
    """Two links, the default route on the wrong one: without interface= olad gets nothing; with it, every
    frame; the log names the link and the group or address used."""
    sacn, artnet = olad.ola_universe("sacn", 1), olad.ola_universe("artnet", 1)
    recorder = olad.recorder("links")
    stray = send_counter(spawn, "default-route", "sacn://multicast?rate=100&gamma=1")
    time.sleep(2)  # 2 s in which olad must get nothing
    stray.stop()
    check("without interface=: olad gets 0 frames", counters(recorder, sacn) == [],
          f"{len(counters(recorder, sacn))} frames")
    check("without interface=: the log says multicast follows the default route",
          "by the default route's link" in stray.log(), stray.log()[-300:])
    for label, hosts, env, universe in [
        ("sACN multicast ?interface=olaveth0", "sacn://multicast?rate=100&gamma=1&interface=olaveth0", None, sacn),
        ("sACN multicast with lighting.interface", "sacn://multicast?rate=100&gamma=1",
         {"LIGHTORGAN_LIGHTING_INTERFACE": olad.test_veth}, sacn),
        ("Art-Net broadcast ?interface=olaveth0", "artnet://broadcast?rate=100&gamma=1&universe=1&interface=olaveth0",
         None, artnet),
    ]:
        since = time.clock_gettime(time.CLOCK_MONOTONIC)
        process = send_counter(spawn, label.split()[0] + "-" + ("env" if env else "query") + str(universe), hosts, env=env)
        time.sleep(3)  # the frames counted
        process.stop()
        wait_for(lambda: recorder.dark(universe), 0.2)  # the stop's dark frame, after every other
        arrived = counters(recorder, universe, since)
        for fact, holds, detail in delivery_facts(arrived, process, 3):
            check(f"{label}: every frame reaches olad on the right link: {fact}", holds, detail)
        log = process.log()
        named = "239.255.0.1:5568 (the group of universe 1) on olaveth0" in log if "sacn" in hosts \
            else "10.77.0.255:6454 (broadcast) on olaveth0" in log
        check(f"{label}: the log names the interface and the real group or address", named,
              next((line for line in log.splitlines() if "sending to" in line), log[-200:]))
    missing = send_counter(spawn, "no-such-link", "sacn://multicast?interface=eth9&gamma=1")
    said = wait_for(lambda: "no network interface eth9" in missing.log(), 3)
    check("an interface this machine lacks: a warning naming it", said, missing.log()[-300:])
    check("…naming the ones it has", olad.test_veth in missing.log(), missing.log()[-300:])
    check("…the sender keeps running", missing.alive(), missing.log()[-300:])
    check("…and retries every second", "retrying every second" in missing.log(), missing.log()[-300:])


# -- protocols ------------------------------------------------------------------------------------

def test_ddp_rgbw_is_typed_rgbw(netns, spawn, check):
    """layout=rgbw on DDP: 4-byte pixels typed 0x1B (RGBW, 8 bits), as WLED checks; RGB stays 0x0B."""
    with DatagramListener() as rgbw, DatagramListener() as rgb:
        process = send_counter(spawn, "ddp-rgbw",
                               f"ddp://127.0.0.1:{rgbw.port}?layout=rgbw,ddp://127.0.0.1:{rgb.port}?layout=rgb")
        wait_for(lambda: len(rgbw.packets) > 20 and len(rgb.packets) > 20, 5)
        process.stop()
    four = [decode_ddp(data) for _, data, _ in rgbw.packets]
    three = [decode_ddp(data) for _, data, _ in rgb.packets]
    check("rgbw: packets arrived", four, f"{len(four)} packets")
    check("rgbw: data type 0x1B, 4 bytes a frame", all(p["data_type"] == 0x1b and p["length"] == 4 for p in four),
          f"{[(hex(p['data_type']), p['length']) for p in four[:3]]}")
    check("rgb: packets arrived", three, f"{len(three)} packets")
    check("rgb: data type 0x0B, 3 bytes", all(p["data_type"] == 0x0b and p["length"] == 3 for p in three),
          f"{[(hex(p['data_type']), p['length']) for p in three[:3]]}")


@pytest.mark.timing
def test_unchanged_data_goes_three_times_then_a_keep_alive_within_every_second(netns, spawn, check):
    """E1.31 §6.6.1: a source that stops changing sends the data three times, then keeps it alive at
    least once a second until it lets go. A receiver passes its lamps on; its sender stops after 1 s."""
    with DatagramListener() as device:
        lamps = spawn("keepalive-r", "receive", "--port", "0", "--output", "stdout", "--stats-interval", "0",
                      "--timeout", "0.3", "--forward", f"sacn://127.0.0.1:{device.port}?gamma=1",
                      env={"LIGHTORGAN_LIGHTING_RELEASE_AFTER": "4"})
        assert wait_for(lambda: "listening on" in lamps.log(), 5), lamps.log()
        port = lamps.log().split("listening on ")[1].split()[0].rsplit(":", 1)[1]
        feeder = spawn("keepalive-s", "send", "--pattern", "counter", "--fps", "100", "--stats-interval", "0",
                       "--host", "127.0.0.1", "--port", port)
        time.sleep(1)  # the sender's second of frames
        feeder.stop()
        wait_for(lambda: any(decode_e131(d)["terminated"] for _, d, _ in device.packets if decode_e131(d)), 7)
    packets = [(t, decode_e131(d)) for t, d, _ in device.packets]
    lit = max(i for i, (_, p) in enumerate(packets) if any(p["channels"][:3]))
    held = [(t, p) for t, p in packets[lit + 1:] if not p["terminated"]]
    gaps = [b[0] - a[0] for a, b in zip(held, held[1:])]
    first_slow = next((i for i, gap in enumerate(gaps) if gap > 0.3), len(gaps))
    terminated = [p for _, p in packets[lit + 1:] if p["terminated"]]
    check("after the last change at least three packets hold the data", len(held) >= 3, f"{len(held)} packets held")
    check("the first three go out before the source slows down (no gap over 0.3 s among them)", first_slow >= 2,
          f"gaps {[round(g, 3) for g in gaps[:6]]}")
    check("the data they hold is dark", all(not any(p["channels"][:3]) for _, p in held),
          f"{next((p['channels'][:3] for _, p in held if any(p['channels'][:3])), None)}")
    check("at least four keep-alive gaps measured", len(gaps) >= 4, f"{len(gaps)} gaps")
    check("then a keep-alive within every second (at most 0.9 s apart) until it lets go",
          max(gaps, default=0) <= 0.9, f"longest gap {max(gaps, default=0):.3f} s of {len(gaps)}")
    check("…and it lets go with three stream-terminated packets", len(terminated) == 3, f"{len(terminated)}")


def test_sync_universe_sends_a_synchronization_packet_after_each_frame(netns, spawn, check):
    """?sync=7 on a strip over two universes: each frame's data packets say universe 7, then one E1.31
    synchronization packet for universe 7, its sequence counting on its own."""
    with DatagramListener() as device:
        process = send_counter(spawn, "sync", f"sacn://127.0.0.1:{device.port}?sync=7&layout=segments&pixels=200&gamma=1&rate=50")
        wait_for(lambda: len(device.packets) > 90, 5)
        process.stop()
    packets = [decode_e131(d) for _, d, _ in device.packets]
    frames, problems, current = [], [], []
    for packet in packets:
        if packet is None:
            problems.append("not E1.31")
        elif packet["kind"] == "data":
            current.append(packet["universe"])
            if packet["sync"] != 7 and not packet["terminated"]:
                problems.append(f"data packet with sync {packet['sync']}")
        else:
            if packet["universe"] != 7:
                problems.append(f"sync for universe {packet['universe']}")
            frames.append((tuple(current), packet["sequence"]))
            current = []
    sequences = [sequence for _, sequence in frames]
    check("at least 25 frames (each ended by a synchronization packet)", len(frames) >= 25, f"{len(frames)} frames")
    check("every packet E1.31, the data saying sync 7, the synchronization for universe 7", not problems,
          f"{problems[:3]}")
    check("every frame: universes 1 and 2, then the synchronization packet",
          all(universes == (1, 2) for universes, _ in frames),
          f"{next((frame for frame in frames if frame[0] != (1, 2)), None)}")
    check("the synchronization packets count their own sequence",
          all((b - a) % 256 == 1 for a, b in zip(sequences, sequences[1:])), f"{sequences[:8]}")


# -- Art-Net nodes ----------------------------------------------------------------------------------

@pytest.mark.parametrize("olad", [(("artnet", 1), ("artnet", 2))], indirect=True, ids=["olad on Art-Net 1 and 2"])
def test_artpoll_finds_olad_and_artnet_auto_drives_it(olad, spawn, lightorgan, check):
    """discover lists olad as an Art-Net node (ArtPoll); artnet://auto sends to the nodes that answered."""
    result = subprocess.run([lightorgan, "discover", "--timeout", "4"], capture_output=True, text=True, timeout=30)
    rows = [line.split() for line in result.stdout.splitlines() if line.startswith("artnet")]
    check("discover lists the Art-Net node with its address and the universes it outputs",
          any(olad.address in row and "universes" in row and "1,2,0" in row for row in rows), result.stdout + result.stderr)
    recorder = olad.recorder("auto")
    process = send_counter(spawn, "artnet-auto", "artnet://auto?universe=1&rate=100&gamma=1")
    found = wait_for(lambda: "found the Art-Net node 10.77.0.2" in process.log(), 6)
    time.sleep(3)  # the frames counted: the last 3 s
    since = time.clock_gettime(time.CLOCK_MONOTONIC) - 3
    process.stop()
    arrived = counters(recorder, olad.ola_universe("artnet", 1), since)
    check("artnet://auto: the sender finds the node and says so", found, process.log()[-300:])
    for fact, holds, detail in delivery_facts(arrived, process, 2.5):
        check(f"…and sends it every frame: {fact}", holds, detail)
    check("…unicast (the log says sending to 10.77.0.2:6454)", "sending to 10.77.0.2:6454" in process.log(),
          process.log()[-300:])


# -- the patch check --------------------------------------------------------------------------------

@pytest.mark.timing
def test_patch_check_lights_each_fixture_in_turn_and_ends_dark(olad, spawn, check, tmp_path):
    """test-leds --hosts: each fixture (dimmers channel by channel) full then off, named, in order; dark at
    the end with the stream terminated."""
    config = tmp_path / "patch.yaml"
    config.write_text(f"fixtures:\n  wash:\n    target: sacn://{olad.address}\n"
                      f"  spot:\n    target: sacn://{olad.address}\n    address: 4\n    layout: rgb\n")
    recorder = olad.recorder("patch", channels=6)
    process = spawn("patch", "test-leds", "--hosts", f"sacn://{olad.address}", "--config", str(config),
                    "--step", "0.4")
    code = process.wait(20)
    lines = process.output().splitlines()
    expected = [f"wash bass: sACN universe 1, channel 1 at {olad.address}",
                f"wash mid: sACN universe 1, channel 2 at {olad.address}",
                f"wash treble: sACN universe 1, channel 3 at {olad.address}",
                f"spot: sACN universe 1, channels 4–6 at {olad.address}", "off"]
    # The fixtures by name: spot sorts before wash in the file, the steps follow the patch's order.
    check("test-leds exits 0", code == 0, f"exit {code}: {process.log()[-200:]}")
    check("each step is named: fixture, part, protocol, universe, channels and device",
          sorted(lines[:-1]) == sorted(expected[:-1]), f"{lines}")
    check("…then off", lines[-1:] == ["off"], f"{lines[-1:]}")
    shown = []
    for record in recorder.records(olad.ola_universe("sacn", 1)):
        state = tuple(record.values[:6])
        if not shown or shown[-1] != state:
            shown.append(state)
    lit = [state for state in shown if any(state)]
    wanted = {"wash bass": (255, 0, 0, 0, 0, 0), "wash mid": (0, 255, 0, 0, 0, 0), "wash treble": (0, 0, 255, 0, 0, 0),
              "spot": (0, 0, 0, 255, 255, 255)}
    order = [wanted[line.split(":")[0]] for line in lines[:-1] if line.split(":")[0] in wanted]
    check("olad sees each one alone at full, in the order named", lit == order, f"{shown}")
    check("…dark between them", all(not any(state) for state in shown[1::2]), f"{shown}")
    check("olad shows frames", shown, f"{shown}")
    check("…and dark at the end", bool(shown) and not any(shown[-1]), f"{shown[-1:]}")
    check("…the stream terminated", "sent a termination for universe 1" in olad.log(), olad.log()[-300:])


# -- bad settings ------------------------------------------------------------------------------------

@pytest.mark.parametrize("hosts, config, key, expected", [
    ("dmx://10.0.0.9", "", "sender.hosts", "unknown scheme dmx://"),
    ("sacn://10.0.0.9?universe=64000", "", "sender.hosts", "out of range 1…63999"),
    ("artnet://10.0.0.9?address=511&layout=rgbw", "", "sender.hosts", "past channel 512"),
    ("ddp://10.0.0.9?universe=2", "", "sender.hosts", "universe does not apply to DDP"),
    ("sacn://10.0.0.9?pixels=30", "", "sender.hosts", "pixels=30, which applies to the strip layouts"),
    ("ddp://10.0.0.9?address=2", "", "sender.hosts", "is not where a pixel starts"),
    ("artnet://10.0.0.9?sync=7", "", "sender.hosts", "unknown setting `sync` (sync is sACN's)"),
    ("sacn://10.0.0.9?interface=a/b", "", "sender.hosts", "is not a network interface's name"),
    ("sacn://10.0.0.9", "fixtures:\n  wash:\n    target: sacn://10.0.0.8\n", "fixtures.wash.target",
     "is in neither sender.hosts nor receiver.forward"),
    ("ddp://10.0.0.9", "fixtures:\n  strip:\n    target: ddp://10.0.0.9\n    universe: 3\n", "fixtures.strip.universe",
     "does not apply to DDP"),
    ("sacn://10.0.0.9", "lighting:\n  interface: eth 0\n", "lighting.interface", "is not allowed"),
], ids=["scheme", "universe", "address", "DDP universe", "pixels on dimmers", "DDP address inside a pixel", "sync on Art-Net", "interface name",
        "fixture of an unknown target", "fixture universe on DDP", "lighting.interface"])
def test_bad_lighting_settings_exit_2_with_one_line(netns, lightorgan, check, tmp_path, hosts, config, key, expected):
    """A bad value, a key that does not apply to its protocol or layout, or a fixture nothing drives: exit 2,
    one line naming the key, the value and what is allowed, and nothing sent."""
    path = tmp_path / "bad.yaml"
    path.write_text(config)
    with DatagramListener("0.0.0.0", 5568) as sacn:
        result = subprocess.run([lightorgan, "send", "--pattern", "counter", "--hosts", hosts, "--config", str(path)],
                                capture_output=True, text=True, timeout=10)
    lines = result.stderr.strip().splitlines()
    check(f"{key}: exit 2", result.returncode == 2, f"exit {result.returncode}")
    check(f"{key}: one line", len(lines) == 1, result.stderr.strip())
    check(f"{key}: the line names it", bool(lines) and key in lines[0], result.stderr.strip())
    check(f"{key}: the line says what is wrong and what is allowed", bool(lines) and expected in lines[0],
          result.stderr.strip())
    check(f"{key}: nothing sent", not sacn.packets, f"{len(sacn.packets)} packets")
