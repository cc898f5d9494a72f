"""Every room in step on Snapcast (receiver.sound: snapcast): a real Debian `snapserver` with a pipe source written
in real time (support/snapcast.py), receivers joined to it through Debian's `snapclient` as their child, and the
stock `snapclient` as a room whose handed-over sound is the reference: when its file player hands a block over,
the block is due to be heard 10 ms later, in every room.

Each test runs in a network namespace of its own (lo only), its server on free ports there.
"""
import os
import statistics
import subprocess
import sys
import time

import pytest

from support import sound_servers
from support.browser import open_page, page_status
from support.impaired_link import ImpairedLink
from support.processes import wait_for
from support.snapcast import STAMPED, SnapServer, heard_onsets, stock_client
from support.sound_servers import DESKTOP_NICE
from support.sound_timing import nearest, reference_onsets, rises

pytestmark = pytest.mark.snapcast

HERE = os.path.dirname(os.path.abspath(__file__))
WRITER = os.path.join(HERE, "support", "paced_writer.py")
LEVEL = {"LIGHTORGAN_ANALYSIS_RESPONSE": "level", "LIGHTORGAN_PAGE_ENABLED": "false"}


@pytest.fixture
def server(netns, tmp_path):
    started = SnapServer(str(tmp_path))
    try:
        yield started
    finally:
        started.stop()


def room(spawn, name, server, *extra, env=None, link=None):
    """A receiver that is the room `name` of `server`'s house (through `link`, an ImpairedLink to it, if given),
    showing its frames on stdout."""
    return spawn(f"room-{name.lower()}", "receive", "--bind", "127.0.0.1", "--port", "0", "--output", "stdout",
                 "--stats-interval", "0", "--sound", (link or server).url, "--name", name, *extra,
                 env={**LEVEL, **(env or {})})


def write(spawn, server, audio, log):
    """Writes `audio` into the server's pipe in real time (as librespot or shairport-sync would)."""
    return spawn.command("writer", [sys.executable, WRITER, audio, server.fifo, log])


def percentile(values, fraction):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


@pytest.mark.timing
def test_two_rooms_light_together_and_with_the_stock_client(server, spawn, check, figure, signals, tmp_path):
    """The check anyone can repeat: two receivers `--play none` and a stock snapclient on one server playing
    bursts: each room's lamp rises with the stock client's sound, and the two rooms' lamps together."""
    kitchen = room(spawn, "Kitchen", server, "--play", "none")
    hall = room(spawn, "Hall", server, "--play", "none")
    stock, audio, reads = stock_client(spawn, server, str(tmp_path))
    joined = wait_for(lambda: {"kitchen", "hall", "stock"} <= {
        id for id, client in server.clients().items() if client["connected"]}, 15)
    check("the server lists both rooms by their names' ids, and the stock client", joined, server.clients().keys())
    writer = write(spawn, server, signals["bursts.raw"], str(tmp_path / "writer.log"))
    check("the writer wrote the 16 s in real time", writer.wait(timeout=40) == 0, writer.log()[-300:])
    time.sleep(2.5)  # the server's buffer, and the last bursts' frames
    stock.stop()  # stamped.py writes its files out as it ends
    heard = heard_onsets(audio, reads)
    check(f"the stock client handed over the bursts ({len(heard)})", len(heard) >= 16, stock.log()[-500:])
    kitchen_rises, hall_rises = rises(kitchen.out_path), rises(hall.out_path)
    against_stock = {}
    for name, times in (("Kitchen", kitchen_rises), ("Hall", hall_rises)):
        offsets = [(rise - at) * 1000 for at in heard if (rise := nearest(times, at)) is not None]
        against_stock[name] = offsets
        median = statistics.median(offsets) if offsets else float("nan")
        figure(f"{name}'s lamp against the stock client's sound: p50 {median:+.1f} ms over {len(offsets)} bursts")
        check(f"{name}: its lamp rose with {len(offsets)} of {len(heard)} bursts", len(offsets) >= len(heard) - 1)
        p95 = percentile([abs(o) for o in offsets], 0.95) if offsets else float("nan")
        check(f"{name}: offsets to the stock client's sound were measured", bool(offsets), f"{len(heard)} heard")
        check(f"{name}: p50 within 25 ms of the stock client's sound ({median:+.1f} ms)", abs(median) <= 25,
              " ".join(f"{offset:+.0f}" for offset in offsets))
        check(f"{name}: p95 |offset| to the stock client's sound within 35 ms ({p95:.1f} ms)", p95 <= 35,
              " ".join(f"{offset:+.0f}" for offset in offsets))
    apart = [abs(k - h) * 1000 for at in heard
             if (k := nearest(kitchen_rises, at)) is not None and (h := nearest(hall_rises, at)) is not None]
    p95 = percentile(apart, 0.95) if apart else float("nan")
    figure(f"the two rooms' lamps apart: p50 {statistics.median(apart) if apart else float('nan'):.1f} ms, "
           f"p95 {p95:.1f} ms over {len(apart)} bursts")
    check("the two rooms' lamps were compared on some bursts", bool(apart), f"{len(heard)} heard")
    check(f"the two rooms' lamps within one frame of each other (p95 {p95:.1f} ms ≤ 12)", p95 <= 12,
          " ".join(f"{distance:.0f}" for distance in apart))
    for process in (kitchen, hall):
        log = process.log()
        check(f"{process.name}: the log says whom it joined", "Snapcast: joining the server at" in log, log[-1200:])
        check(f"{process.name}: the log says that it played", "Snapcast: playing" in log, log[-1200:])
        check(f"{process.name}: the log says it connected to the Snapcast server",
              "connected to the Snapcast server" in log, log[-1200:])
    names = {id: client["config"]["name"] for id, client in server.clients().items()}
    check("Snapcast's apps show the kitchen by the receiver's name", names.get("kitchen") == "Kitchen", names)
    check("Snapcast's apps show the hall by the receiver's name", names.get("hall") == "Hall", names)


def test_without_a_server_a_room_says_so_once_stays_dark_and_joins_when_it_comes(server, spawn, check, signals,
                                                                                 tmp_path):
    server.stop()
    kitchen = room(spawn, "Kitchen", server, "--play", "none")
    check("one line: the server cannot be reached, retried", wait_for(
        lambda: "cannot reach the Snapcast server" in kitchen.log(), 10), kitchen.log()[-800:])
    time.sleep(3)
    check("once, whatever the retries", kitchen.log().count("cannot reach the Snapcast server") == 1,
          kitchen.log()[-1500:])
    check("no lamp lit", not any(max(levels) for levels in frames(kitchen)))
    server.start()
    check("the server comes: joined", wait_for(lambda: "connected to the Snapcast server" in kitchen.log(), 15),
          kitchen.log()[-800:])
    writer = write(spawn, server, signals["steady.raw"], str(tmp_path / "writer.log"))
    check("the writer wrote", writer.wait(timeout=20) == 0, writer.log()[-300:])
    check("the lamps follow its sound", wait_for(lambda: any(levels[1] >= 128 for levels in frames(kitchen)), 5))
    time.sleep(2.5)
    check("frames were shown", bool(frames(kitchen)), kitchen.log()[-800:])
    check("and go dark when it ends", frames(kitchen)[-1:] == [(0, 0, 0)], frames(kitchen)[-3:])


def test_a_server_that_restarts_mid_song_costs_a_line_no_lamp_stays_on_and_the_room_joins_again(
        server, spawn, check, signals, tmp_path):
    kitchen = room(spawn, "Kitchen", server, "--play", "none")
    check("joined", wait_for(lambda: "connected to the Snapcast server" in kitchen.log(), 15), kitchen.log()[-800:])
    writer = write(spawn, server, signals["steady.raw"], str(tmp_path / "writer.log"))
    check("the lamps follow the song", wait_for(lambda: any(levels[1] >= 128 for levels in frames(kitchen)), 5))
    writer.stop()
    server.stop()
    stopped = time.clock_gettime(time.CLOCK_MONOTONIC)
    time.sleep(3)
    after = [levels for t, levels in stamped_frames(kitchen) if t > stopped + 1.0]
    check("the server gone: the lamps dark within a second", not any(map(max, after)), after[-3:])
    check("the server gone: none stuck on (the last frame dark)", frames(kitchen)[-1:] == [(0, 0, 0)],
          frames(kitchen)[-3:])
    server.start()
    check("the server back: joined again by itself", wait_for(
        lambda: kitchen.log().count("connected to the Snapcast server") >= 2, 15), kitchen.log()[-1500:])
    lines = kitchen.log().splitlines()
    joins = [index for index, line in enumerate(lines) if "connected to the Snapcast server" in line]
    outage = [line for line in lines[joins[0] + 1:joins[1]] if "snapclient:" in line
              and not any(word in line for word in ("ServerSettings", "Codec"))]
    check("one line said the server went away, whatever snapclient's retries", len(outage) == 1,
          "\n".join(outage))
    again = time.clock_gettime(time.CLOCK_MONOTONIC)
    writer = write(spawn, server, signals["steady.raw"], str(tmp_path / "writer-2.log"))
    check("and the lamps follow the next song", wait_for(
        lambda: any(levels[1] >= 128 for t, levels in stamped_frames(kitchen) if t > again), 8))
    check("the receiver ran on", kitchen.alive())


@pytest.mark.discovery
def test_with_sound_snapcast_alone_the_room_joins_the_server_dns_sd_announces(new_host, spawn, check, tmp_path):
    """`receiver.sound: snapcast`: snapclient finds the server that avahi-daemon announces (_snapcast._tcp, on
    Snapcast's own ports in the test's namespace), and the room is named there like the receiver."""
    host = new_host("house")
    server = SnapServer(str(tmp_path), port=1704, wrapper=host.wrapper)
    try:
        kitchen = spawn("room-kitchen", "receive", "--port", "0", "--output", "stdout", "--stats-interval", "0",
                        "--sound", "snapcast", "--name", "Kitchen", "--play", "none", wrapper=host.wrapper, env=LEVEL)
        check("the log says it looks for the server DNS-SD finds", wait_for(
            lambda: "the server DNS-SD finds" in kitchen.log(), 10), kitchen.log()[-800:])
        check("found and joined", wait_for(
            lambda: server.clients().get("kitchen", {}).get("connected"), 30), kitchen.log()[-1500:])
        check("named in Snapcast like the receiver", wait_for(
            lambda: server.clients()["kitchen"]["config"]["name"] == "Kitchen", 10), server.clients().get("kitchen"))
    finally:
        spawn.stop_all()
        server.stop()


def test_a_port_that_speaks_another_protocol_gets_one_line_that_says_what_to_check(server, spawn, check):
    """The owner gave the server's control port (JSON-RPC, the stream's + 1) for its stream port: snapclient
    connects, gets no Snapcast there, and retries each second; the log says so once, the lamps stay dark."""
    kitchen = spawn("room-kitchen", "receive", "--bind", "127.0.0.1", "--port", "0", "--output", "stdout",
                    "--stats-interval", "0", "--name", "Kitchen", "--play", "none",
                    "--sound", f"snapcast://{server.host}:{server.control_port}", env=LEVEL)
    said = "does not speak the Snapcast protocol"
    check("one line says what answers there speaks another protocol",
          wait_for(lambda: said in kitchen.log(), 15), kitchen.log()[-1200:])
    check("the line says which port to give (the stream port, 1704)", "stream port (1704" in kitchen.log(),
          kitchen.log()[-1200:])
    time.sleep(4)  # snapclient's retries, each second
    check("once, whatever the retries", kitchen.log().count(said) == 1, kitchen.log()[-1500:])
    check("no 'connected' for each of the retries", kitchen.log().count("connected to the Snapcast server") <= 1,
          kitchen.log()[-1500:])
    check("no lamp lit", not any(max(levels) for levels in frames(kitchen)))
    check("the receiver runs on", kitchen.alive(), kitchen.log()[-800:])


def test_without_snapclient_the_receiver_says_how_to_install_it(server, spawn, check):
    bare = room(spawn, "Kitchen", server, "--play", "none", env={"PATH": "/nonexistent"})
    check("one line says to install snapclient",
          wait_for(lambda: "sudo apt install snapclient" in bare.log(), 10), bare.log()[-600:])
    check("the receiver runs on", bare.alive(), bare.log()[-600:])


@pytest.mark.timing
def test_rooms_play_in_step_with_each_other_and_the_stock_client_and_light_with_their_sound(
        server, spawn, check, figure, signals, tmp_path):
    """Two receivers, each over a link of 20 ms ± 5 ms and 0.5 % loss (support/impaired_link.py), and Debian's
    stock snapclient over a clean one play their rooms' share into PulseAudio null sinks of their own (all through
    ALSA's pulse plugin), whose monitors are recorded with each read stamped: there each room's sound is heard.
    The rooms' sound against each other and against the stock client's, and each room's lamp against its own
    sound, from 2 s into the stream."""
    pulse = sound_servers.pulseaudio(str(tmp_path / "pulse"), "module-null-sink sink_name=kitchen")
    links = {name: ImpairedLink(server.host, server.host, (server.port, server.control_port), seed=seed)
             for seed, name in enumerate(("Kitchen", "Hall"), 1)}
    try:
        pulse.load_module("module-null-sink", "sink_name=hall")
        sound_servers.wait_for_sink(pulse, "hall")
        pulse.load_module("module-null-sink", "sink_name=stock")
        sound_servers.wait_for_sink(pulse, "stock")
        rooms, recordings = {}, {}
        for name in ("Kitchen", "Hall", "Stock"):
            sink = name.lower()
            if name == "Stock":  # Debian's snapclient playing the third room through the same ALSA plugin
                rooms[name] = spawn.command("room-stock", [
                    *DESKTOP_NICE, "snapclient", "--host", server.host, "--port", str(server.port), "--hostID", "stock",
                    "--player", "alsa", "--soundcard", "pulse", "--logsink", "stderr"],
                    env={**pulse.env, "PULSE_SINK": sink})
            else:
                rooms[name] = room(spawn, name, server, "--play", "pulse", env={**pulse.env, "PULSE_SINK": sink},
                                   link=links[name])
            recordings[name] = (str(tmp_path / f"{sink}.raw"), str(tmp_path / f"{sink}.txt"))
            spawn.command(f"record-{sink}", [*DESKTOP_NICE, sys.executable, STAMPED, "reads", *recordings[name], "--",
                                             "parec", f"--device={sink}.monitor", "--raw", "--format=s16le",
                                             "--rate=48000", "--channels=2", "--latency-msec=10"], env=pulse.env)
        stock = rooms.pop("Stock")
        joined = wait_for(lambda: {"kitchen", "hall", "stock"} <= {
            id for id, client in server.clients().items() if client["connected"]}, 15)
        check("both rooms and the stock client joined", joined, server.clients().keys())
        thrice = tmp_path / "bursts-thrice.raw"  # 48 s: 16 bursts and more after the first 12 s
        thrice.write_bytes(open(signals["bursts.raw"], "rb").read() * 3)
        writer = write(spawn, server, str(thrice), str(tmp_path / "writer.log"))
        check("the writer wrote the 48 s in real time", writer.wait(timeout=80) == 0, writer.log()[-300:])
        time.sleep(2.5)
        for process in spawn.processes:
            if process.name.startswith("record-"):
                process.stop()  # stamped.py writes its files out as it ends
        heard = {name: reference_onsets(*recordings[name]) for name in recordings}
        # The stream's first 2 s are left out of the figures (and shown apart): a PulseAudio null sink that a
        # player starts on renders the long block it began first, and says so only later (sound_servers' notes).
        settled = (min(heard["Stock"]) + 2.0) if heard["Stock"] else 0
        # The rooms' sound against each other is held to the goal from 12 s into the stream, and to 10 ms before:
        # on a busy machine (2 of 4 full runs of 2026-12-06) a room's sound started up to 8 ms off the others' and
        # came into step over the next 6 to 9 s, a millisecond or less a second (on a quiet machine and beside two
        # CPU hogs alone: within 3.5 ms from the start). Whether the PulseAudio sinks' timing or the room's
        # correction of a frame a block makes that start is not told apart yet.
        steady = settled + 10.0
        first = {name: [t for t in times if t < settled] for name, times in heard.items()}
        heard = {name: [t for t in times if t >= settled] for name, times in heard.items()}
        stock_heard = heard.pop("Stock")
        check(f"the stock client played the bursts after the first 2 s ({len(stock_heard)}, at least 16)",
              len(stock_heard) >= 16, stock.log()[-800:])
        check(f"each room played all but one of the stock client's {len(stock_heard)} bursts after the first 2 s "
              f"({ {name: len(times) for name, times in heard.items()} })",
              all(len(times) >= len(stock_heard) - 1 for times in heard.values()), rooms["Kitchen"].log()[-800:])
        for name in rooms:
            early = [f"{(t - at) * 1000:+.0f}" for at in first["Stock"] if (t := nearest(first[name], at, 0.1, 0.1))]
            figure(f"{name}'s sound against the stock client's in the stream's first 2 s: {' '.join(early)} ms")

        def against(times, references):
            return [(t - at) * 1000 for at in references if (t := nearest(times, at, 0.1, 0.1)) is not None]
        # Each pair is judged over every burst of the second one but one: a room silent for part of the song fails.
        for label, pair, partner in (("the Hall's sound against the Kitchen's", heard["Hall"], heard["Kitchen"]),
                                     ("the Kitchen's sound against the stock client's", heard["Kitchen"], stock_heard),
                                     ("the Hall's sound against the stock client's", heard["Hall"], stock_heard)):
            starting = against(pair, [t for t in partner if t < steady])
            figure(f"{label} in the 10 s from the stream's first 2 s: {' '.join(f'{o:+.1f}' for o in starting)} ms")
            check(f"{label}: within 10 ms in the 10 s from the stream's first 2 s",
                  all(abs(o) <= 10 for o in starting), " ".join(f"{o:+.1f}" for o in starting))
            references = [t for t in partner if t >= steady]
            offsets = against(pair, references)
            median = statistics.median(offsets) if offsets else float("nan")
            p95 = percentile([abs(o) for o in offsets], 0.95) if offsets else float("nan")
            figure(f"{label}: p50 {median:+.1f} ms, p95 |{p95:.1f}| ms over {len(offsets)} bursts")
            check(f"{label}: paired over {len(offsets)} of {len(references)} bursts (all but one at least)",
                  len(offsets) >= len(references) - 1)
            check(f"{label}: offsets were measured", bool(offsets), f"{len(references)} bursts")
            check(f"{label}: |p50| ≤ 2 ms", abs(median) <= 2, " ".join(f"{o:+.1f}" for o in offsets))
            check(f"{label}: p95 ≤ 5 ms", p95 <= 5, " ".join(f"{o:+.1f}" for o in offsets))
        for name, process in rooms.items():
            offsets = against([t for t in rises(process.out_path) if t >= settled], heard[name])
            median = statistics.median(offsets) if offsets else float("nan")
            figure(f"{name}'s lamp against its own sound: p50 {median:+.1f} ms over {len(offsets)} bursts")
            check(f"{name}'s lamp rose with {len(offsets)} of the {len(heard[name])} bursts it played (all but one at "
                  "least)", len(offsets) >= len(heard[name]) - 1)
            check(f"{name}'s lamp against its own sound was measured", bool(offsets), f"{len(heard[name])} bursts")
            check(f"{name}'s lamp with its sound: |p50| ≤ 15 ms", abs(median) <= 15,
                  " ".join(f"{o:+.0f}" for o in offsets))
        figure("the links: " + ", ".join(f"{name} {link.retransmissions} reads held back as retransmitted"
                                         for name, link in links.items()))
    finally:
        spawn.stop_all()
        pulse.stop()
        for link in links.values():
            link.stop()


@pytest.mark.timing
def test_a_link_that_stalls_for_half_a_second_changes_nothing_and_after_three_seconds_the_room_is_back_in_step(
        page_host, spawn, check, figure, signals, tmp_path):
    """A room behind a veth (page_host's peer namespace) whose link goes down for 0.5 s, then for 3 s, while the
    server (on this side) plays bursts to it and to the stock client here. The server's buffer (1 s) rides out
    the short stall: every burst lit in time. The long one: no lamp on while the room has nothing, and in step
    again within 5 s of the link's return. (This kernel has no netem: the stall is the link down.)"""
    folder = tmp_path / "house"
    folder.mkdir()
    server = SnapServer(str(folder), host=page_host.peer.test_address)
    try:
        kitchen, _ = page_host.receiver("kitchen", "--name", "Kitchen", "--sound", server.url, "--play", "none",
                                        env={"LIGHTORGAN_ANALYSIS_RESPONSE": "level"})
        stock, audio, reads = stock_client(spawn, server, str(tmp_path))
        check("joined", wait_for(lambda: {"kitchen", "stock"} <= {
            id for id, client in server.clients().items() if client["connected"]}, 15), server.clients().keys())
        twice = tmp_path / "bursts-twice.raw"
        twice.write_bytes(open(signals["bursts.raw"], "rb").read() * 2)
        writer = write(spawn, server, str(twice), str(tmp_path / "writer.log"))
        veth = page_host.peer.test_veth

        def stall(seconds):
            subprocess.run(["ip", "link", "set", veth, "down"], check=True)
            down = time.clock_gettime(time.CLOCK_MONOTONIC)
            time.sleep(seconds)
            subprocess.run(["ip", "link", "set", veth, "up"], check=True)
            return down, time.clock_gettime(time.CLOCK_MONOTONIC)
        time.sleep(8)
        short = stall(0.5)
        time.sleep(8)
        long = stall(3.0)
        check("the writer wrote the 32 s in real time", writer.wait(timeout=60) == 0, writer.log()[-300:])
        time.sleep(2.5)
        stock.stop()
        heard = heard_onsets(audio, reads)
        lamps = rises(kitchen.out_path)

        def offsets(since, until):
            return [(rise - at) * 1000 for at in heard if since <= at < until
                    and (rise := nearest(lamps, at)) is not None], sum(1 for at in heard if since <= at < until)
        around_short, bursts_short = offsets(short[0], short[1] + 3)
        figure(f"around the 0.5 s stall: {' '.join(f'{o:+.0f}' for o in around_short)} ms "
               f"({len(around_short)} of {bursts_short} bursts)")
        check("the 0.5 s stall: at least 3 bursts around it", bursts_short >= 3, f"{bursts_short} bursts")
        check("the 0.5 s stall changes nothing seen: every burst around it lit", len(around_short) == bursts_short,
              f"{len(around_short)} of {bursts_short} lit")
        check("the 0.5 s stall changes nothing seen: each within 25 ms of the stock client's",
              all(abs(o) <= 25 for o in around_short), " ".join(f"{o:+.0f}" for o in around_short))
        lit_during = [t for t, levels in stamped_frames(kitchen) if long[0] + 1.2 < t < long[1] and max(levels)]
        missed = [at for at in heard if long[0] + 1.2 < at < long[1]]
        check(f"the 3 s stall: the stock client here played {len(missed)} bursts during it (at least 2)",
              len(missed) >= 2, f"{len(missed)} bursts")
        check("the 3 s stall: no lamp on once the room has nothing left", not lit_during, lit_during[:5])
        back, bursts_back = offsets(long[1] + 5, float("inf"))
        figure(f"from 5 s after the 3 s stall: {' '.join(f'{o:+.0f}' for o in back)} ms ({len(back)} of {bursts_back})")
        check("from 5 s after the link's return: at least 3 bursts", bursts_back >= 3, f"{bursts_back} bursts")
        check("from 5 s after the link's return: all bursts but one lit", len(back) >= bursts_back - 1,
              f"{len(back)} of {bursts_back} lit")
        check("in step again within 5 s of the link's return (|p50| ≤ 25 ms)",
              bool(back) and abs(statistics.median(back)) <= 25, back)
    finally:
        server.stop()


def test_a_name_another_machine_took_in_the_house_is_said_once(page_host, spawn, check, tmp_path):
    """Two receivers called "Kitchen" on two machines (this namespace, and page_host's behind a veth): Snapcast
    knows one room by one id, so they take turns as it; each says so once, naming receiver.name."""
    folder = tmp_path / "house"
    folder.mkdir()
    server = SnapServer(str(folder), host=page_host.peer.test_address)
    try:
        there, _ = page_host.receiver("kitchen-there", "--name", "Kitchen", "--sound", server.url, "--play", "none")
        check("the first Kitchen joined", wait_for(
            lambda: server.clients().get("kitchen", {}).get("connected"), 15), there.log()[-800:])
        here = room(spawn, "Kitchen", server, "--play", "none")
        said = "joined the server as \"kitchen\" too"
        check("one of them says another machine took the name", wait_for(
            lambda: said in here.log() + there.log(), 20), (here.log() + there.log())[-1500:])
        check("and what to change (receiver.name)", "receiver.name" in here.log() + there.log(),
              (here.log() + there.log())[-1500:])
        time.sleep(7)
        check("once here", here.log().count(said) <= 1, here.log().count(said))
        check("once there", there.log().count(said) <= 1, there.log().count(said))
        check("here runs on", here.alive(), here.log()[-800:])
        check("there runs on", there.alive(), there.log()[-800:])
    finally:
        server.stop()


@pytest.mark.browser
def test_the_page_picks_the_server_and_names_it_the_group_the_stream_and_the_clock(page_host, browser, spawn, check,
                                                                                  signals, tmp_path):
    """The owner picks the house's server on the page (receiver.sound), and the page's status names what the room
    joined: the server, its group, the stream and whether it plays, the offset to the server's clock. A phone-sized
    screenshot: tmp_path/phone-snapcast.png."""
    folder = tmp_path / "house"
    folder.mkdir()
    server = SnapServer(str(folder), host=page_host.peer.test_address)
    try:
        process, key = page_host.receiver("kitchen", "--name", "Kitchen", "--play", "none")
        page_status(page_host.address, key, send=[{"type": "set", "id": 1, "key": "receiver.sound",
                                                   "value": server.url}])
        check("set on the page: the receiver joins the server", wait_for(
            lambda: "kitchen" in server.clients() and server.clients()["kitchen"]["connected"], 15),
            process.log()[-800:])
        writer = spawn.command("writer", [sys.executable, WRITER, signals["steady.raw"], server.fifo,
                                          str(tmp_path / "writer.log")])
        page = browser("phone")
        open_page(page, page_host.base, key)
        shown = "document.querySelector('#st-sound').textContent"
        playing = shows(page, f"{shown}.includes('Snapcast: playing') && {shown}.includes('stream house: playing')"
                              f" && {shown}.includes('its clock')", 15)
        text = page.js(f"return {shown}")
        check("the page names the stream playing and the offset to the server's clock", playing, text)
        check("the page names the server", f"server {server.host}" in text, text)
        page.js("document.querySelector('#st-sound').scrollIntoView()")
        page.screenshot(str(tmp_path / "phone-snapcast.png"))
        check("the writer wrote", writer.wait(timeout=20) == 0, writer.log()[-300:])
        check("idle when the music stops", shows(page, f"{shown}.includes('Snapcast: idle')", 10),
              page.js(f"return {shown}"))
    finally:
        server.stop()


def shows(page, predicate, timeout):
    """Whether the page's JavaScript `predicate` comes true within `timeout` s."""
    try:
        return bool(page.wait_for(predicate, timeout))
    except TimeoutError:
        return False


def frames(process):
    """The levels a receiver showed: [(bass, mid, treble)]."""
    return [levels for _, levels in stamped_frames(process)]


def stamped_frames(process):
    """[(CLOCK_MONOTONIC s, (bass, mid, treble))] of a receiver's `--output stdout` lines."""
    return [(float(fields[0]), tuple(map(int, fields[1:4]))) for fields in process.lines() if len(fields) == 4]
