"""Stage lights and LED strips on the network: sACN and Art-Net against a real OLA daemon,
DDP against two independent decoders (the test's own, from the published format, and python-led-ddp).

olad runs in a namespace of its own behind a veth (support/olad.py: 10.77.0.1 on the test's side,
10.77.0.2 on olad's), one olad per test, in the test's own network namespace. Senders run
`--pattern counter` at 100 frames/s with gamma 1, so the three dimmer channels of every frame carry
its number: every check sees which frames arrived, in which order, and when (CLOCK_MONOTONIC, one
clock in both namespaces). The figures of benchmarks/lighting.py (scripts/bench-lighting) use the
same fixture.
"""
import signal
import time

import pytest

from support import ddp_reference
from support.datagrams import DatagramListener, decode_ddp
from support.processes import applied, made, out_of_order, percentile, wait_for

pytestmark = [pytest.mark.lighting]


def sender(spawn, name, hosts, *extra):
    return spawn(name, "send", "--pattern", "counter", "--fps", "100", "--stats-interval", "0", "--hosts", hosts,
                 *extra)


def delivered(recorder, universe, process, since=0.0):
    """(made counters in order, arrived counters in order, latencies ms) for one universe."""
    sent = made(process)
    arrived = [r for r in recorder.records(universe) if r.counter and r.time >= since]
    latencies = [(r.time - sent[r.counter]) * 1000 for r in arrived if r.counter in sent]
    return sorted(sent, key=sent.get), [r.counter for r in arrived], latencies


def every_frame_arrived(recorder, universe, process, seconds):
    """Runs the sender for `seconds`, stops it: (the facts of "every frame it made arrived once and in order",
    each (name, holds, detail); the detail of them all; latencies ms)."""
    time.sleep(seconds)  # the frames counted
    process.stop()
    wait_for(lambda: recorder.dark(universe), 0.3)  # the stop's dark frame, after every other
    sent, arrived, latencies = delivered(recorder, universe, process)
    inside = [n for n in sent if arrived and arrived[0] <= n <= arrived[-1]]
    missing = sorted(set(inside) - set(arrived))[:10]
    timing = f"send → OLA callback p50 {percentile(latencies, 0.5):.1f} ms, p99 {percentile(latencies, 0.99):.1f} ms"
    # The frame made as the sender was stopped may never reach the transmitter: the last one is not asked for.
    facts = [(f"at least {90 * seconds} frames arrived", len(arrived) >= 90 * seconds,
              f"{len(arrived)} of {len(sent)} frames; {timing}" if len(arrived) >= 90 * seconds
              else f"{len(arrived)} arrived of {len(sent)} made; {process.log()[-300:]}"),
             ("in order", arrived == sorted(arrived),
              out_of_order(arrived)),
             ("none twice", len(set(arrived)) == len(arrived), f"{len(arrived) - len(set(arrived))} repeated"),
             ("none lost between the first and the last that arrived", arrived == inside,
              f"{len(arrived)} arrived of the {len(inside)} made from the first to the last; missing {missing}"),
             ("the sender made at least 3 frames", len(sent) >= 3, f"{len(sent)} made"),
             ("the last frames arrived too (all but the last two made)",
              len(sent) >= 3 and bool(arrived) and arrived[-1] >= sent[-3],
              f"the last arrived {arrived[-1:]}, the last made {sent[-3:]}")]
    failed = [fact for fact, holds, _ in facts if not holds]
    detail = f"{len(arrived)} of {len(sent)} frames, in order, none lost; {timing}"
    if failed:
        detail = (f"{len(arrived)} arrived of {len(sent)} made; not so: {', '.join(failed)}; missing {missing}; "
                  f"{process.log()[-300:]}")
    return facts, detail, latencies


def every_frame(check, label, recorder, universe, process, seconds):
    """Checks that every frame the sender made arrived once, in order, on `universe`; the latencies."""
    facts, _, latencies = every_frame_arrived(recorder, universe, process, seconds)
    for fact, holds, detail in facts:
        check(f"{label}: {fact}", holds, detail)
    return latencies


@pytest.mark.timing
def test_sacn_unicast_delivers_every_frame_in_order(olad, spawn, check):
    recorder = olad.recorder("unicast")
    process = sender(spawn, "unicast", f"sacn://{olad.address}?rate=100&gamma=1")
    every_frame(check, "sACN unicast, 100 frames/s for 10 s", recorder, olad.ola_universe("sacn", 1), process, 10)


@pytest.mark.timing
# Universe 2 alone: olad then joins 239.255.0.2 only, so a packet sent to another universe's group
# never reaches it (a socket bound to 0.0.0.0 gets every group any socket joined on the interface).
@pytest.mark.parametrize("olad", [(("sacn", 2),)], indirect=True, ids=["olad on universe 2 alone"])
def test_sacn_multicast_delivers_every_frame_in_order(olad, spawn, check):
    recorder = olad.recorder("multicast")
    process = sender(spawn, "multicast", "sacn://multicast?rate=100&gamma=1&universe=2")
    every_frame(check, "sACN multicast (239.255.0.2), 100 frames/s for 5 s", recorder, olad.ola_universe("sacn", 2),
                process, 5)


@pytest.mark.timing
def test_two_fixtures_on_two_universes_get_the_same_frames(olad, spawn, check, tmp_path):
    """Two fixtures on two universes of one device, laid out in the settings file."""
    config = tmp_path / "two-universes.yaml"
    ola = olad.address
    config.write_text(f"sender:\n  hosts: [sacn://{ola}?rate=100]\nfixtures:\n"
                      f"  front:\n    target: sacn://{ola}\n    gamma: 1\n"
                      f"  back:\n    target: sacn://{ola}\n    universe: 2\n    address: 10\n    gamma: 1\n")
    recorder = olad.recorder("two", channels=12)
    process = spawn("two", "send", "--pattern", "counter", "--fps", "100", "--stats-interval", "0",
                    "--config", str(config))
    time.sleep(5)  # the frames counted
    process.stop()
    wait_for(lambda: recorder.dark(olad.ola_universe("sacn", 1)) and recorder.dark(olad.ola_universe("sacn", 2)),
             0.3)  # the stop's dark frame on both universes, after every other
    sent = set(made(process))
    first = [r.counter for r in recorder.records(olad.ola_universe("sacn", 1)) if r.counter]
    back = [r.values[9] << 16 | r.values[10] << 8 | r.values[11]
            for r in recorder.records(olad.ola_universe("sacn", 2))]
    back = [n for n in back if n]
    both = "two fixtures, universe 1 address 1 and universe 2 address 10"
    check(f"{both}: at least 450 frames on universe 1", len(first) >= 450,
          f"{len(first)} frames" if len(first) >= 450 else f"{len(first)} frames; {process.log()[-300:]}")
    check(f"{both}: the same frames on both", first == back,
          f"{len(first)} and {len(back)} frames" if first == back
          else f"{len(first)} vs {len(back)}; {process.log()[-300:]}")
    check(f"{both}: each a frame the sender made", set(first) <= sent, f"not made: {sorted(set(first) - sent)[:10]}")
    check(f"{both}: in order", first == sorted(first),
          out_of_order(first))


@pytest.mark.timing
@pytest.mark.parametrize("label, broadcast, universe", [("unicast", False, 1),
                                                        ("broadcast to 10.77.0.255", True, 2)],
                         ids=["unicast", "directed broadcast"])
def test_art_net_delivers_every_frame_in_order(olad, spawn, check, label, broadcast, universe):
    host = "10.77.0.255" if broadcast else olad.address
    recorder = olad.recorder(f"artnet-{universe}")
    process = sender(spawn, f"artnet-{universe}", f"artnet://{host}?rate=100&gamma=1&universe={universe}")
    every_frame(check, f"Art-Net {label}, universe {universe}, 100 frames/s for 5 s", recorder,
                olad.ola_universe("artnet", universe), process, 5)


@pytest.mark.timing
def test_default_rate_sends_at_most_44_packets_a_second_of_the_newest_frames(olad, spawn, check):
    recorder = olad.recorder("rate")
    process = sender(spawn, "rate", f"sacn://{olad.address}?gamma=1")
    time.sleep(5)  # the 5 s the rate is measured over
    process.stop()
    wait_for(lambda: recorder.dark(olad.ola_universe("sacn", 1)), 0.3)  # the stop's dark frame, after every other
    _, arrived, latencies = delivered(recorder, olad.ola_universe("sacn", 1), process)
    rate = len(arrived) / 5
    check("the default rate: 44 packets/s (35…46 counted over the 5 s)", 35 <= rate <= 46, f"{rate:.1f} packets/s")
    check("…of the newest frames, in order", arrived == sorted(arrived),
          out_of_order(arrived))
    check("…none more than a slot old (p95 age under 40 ms)", percentile(latencies, 0.95) < 40,
          f"p95 age {percentile(latencies, 0.95):.1f} ms")


@pytest.mark.timing
def test_stop_darkens_the_lamps_and_terminates_the_stream(olad, spawn, check):
    """On stop the lamps go dark at once and the stream is terminated, so OLA lets go at once."""
    recorder = olad.recorder("stop")
    process = sender(spawn, "stop", f"sacn://{olad.address}?rate=100&gamma=1")
    wait_for(lambda: len(recorder.records()) > 50, 5)
    terminations = olad.log().count("sent a termination for universe 1")
    stopped_at = time.monotonic()
    process.signal(signal.SIGTERM)
    process.wait(5)
    wait_for(lambda: recorder.dark(olad.ola_universe("sacn", 1)), 0.3)
    records = recorder.records(olad.ola_universe("sacn", 1))
    last = records[-1] if records else None
    check("OLA sees frames", last is not None, f"{len(records)} frames")
    check("on stop the lamps go dark (the last frame OLA sees is all off)",
          last is not None and tuple(last.values[:3]) == (0, 0, 0), f"last {last}")
    check("…at once (that last frame within 250 ms of SIGTERM)", last is not None and last.time - stopped_at < 0.25,
          f"{1000 * (last.time - stopped_at) if last is not None else 0:.0f} ms after SIGTERM")
    check("the sender exits 0 on SIGTERM", process.process.returncode == 0, f"exit {process.process.returncode}")
    # olad logs (at -l 3) "CID … sent a termination" for E1.31 stream-terminated packets; a source that
    # just stops is only dropped 2.5 s later ("source … has expired"), merged with the next meanwhile.
    ok = wait_for(lambda: olad.log().count("sent a termination for universe 1") > terminations, 1)
    check("…and the stream is terminated: olad lets go of the source at once", ok, "" if ok else olad.log()[-300:])


@pytest.mark.timing
@pytest.mark.parametrize("label, extra", [("", ()), (" with receiver.delay 150 ms", ("--delay", "150"))],
                         ids=["undelayed", "delayed"])
def test_receiver_forwards_its_lamps_to_sacn(olad, spawn, check, label, extra):
    """The receiver passes its lamps on to sACN beside its own output; the lamps go dark on the timeout."""
    suffix = "-delayed" * bool(extra)
    recorder = olad.recorder("forward" + suffix)
    lamps = spawn("forward-r" + suffix, "receive", "--port", "0", "--output", "stdout", "--stats-interval", "0",
                  "--timeout", "0.5", "--forward", f"sacn://{olad.address}?rate=250&gamma=1", *extra)
    ok = wait_for(lambda: "listening on" in lamps.log(), 5)
    port = int(lamps.log().split("listening on ")[1].split()[0].rsplit(":", 1)[1]) if ok else 0
    process = spawn("forward-s" + suffix, "send", "--pattern", "counter", "--fps", "100", "--stats-interval", "0",
                    "--host", "127.0.0.1", "--port", str(port))
    time.sleep(5)  # the frames compared
    process.stop()
    stopped = time.monotonic()

    def after_the_last_lit(records):
        lit = max((i for i, r in enumerate(records) if r.counter), default=0)
        return lit, records[lit + 1:]

    def held_dark():
        _, after = after_the_last_lit(recorder.records(olad.ola_universe("sacn", 1)))
        return len(after) >= 2 and after[-1].time > stopped + 0.5
    wait_for(held_dark, 1.5)
    shown = [n for _, n in applied(lamps)]
    records = recorder.records(olad.ola_universe("sacn", 1))
    forwarded = [r.counter for r in records if r.counter]
    lit, after = after_the_last_lit(records)
    # Dark at once when the sender leaves, then held dark (repeated each second) until released.
    # The lines show every frame. sACN goes at 250 packets/s here, newest wins: only two frames released
    # within 4 ms of each other (a stalled machine) share a packet, so the forwarded frames are the shown ones
    # in order, at most 1 in 100 merged into its successor; the last shown can give way to the dark frame.
    merged = len(shown) - len(forwarded)
    forward = f"receive --forward{label}"
    check(f"{forward}: at least 450 frames shown on the lines", len(shown) >= 450,
          f"{len(shown)} shown; {lamps.log()[-300:]}")
    check(f"{forward}: the frames shown go to sACN in the receiver's order", _is_subsequence(forwarded, shown),
          f"{len(forwarded)} forwarded of {len(shown)} shown")
    check(f"{forward}: frames reach sACN", bool(forwarded), f"{len(forwarded)} forwarded")
    check(f"{forward}: the last shown (or the one before it) goes to sACN too",
          bool(forwarded) and forwarded[-1] in shown[-2:],
          f"the last forwarded {forwarded[-1:]}, the last shown {shown[-2:]}")
    check(f"{forward}: at most 1 in 100 frames merged into a packet", merged <= len(shown) // 100,
          f"{merged} merged of {len(shown)} shown")
    check(f"{forward}: two or more packets after the last lit one", len(after) >= 2, f"{len(after)}: {after[:3]}")
    check(f"{forward}: those packets are dark, every channel 0", all(not any(r.values) for r in after),
          f"{next((r for r in after if any(r.values)), None)}")
    check(f"{forward}: dark at once when the sender leaves (within 200 ms of the last lit packet)",
          bool(after) and after[0].time - records[lit].time < 0.2,
          f"{1000 * (after[0].time - records[lit].time):.0f} ms" if after else "no packet after the last lit one")
    check(f"{forward}: held dark by a packet a second (one more than 0.5 s after the sender left)",
          bool(after) and after[-1].time > stopped + 0.5,
          f"the last {after[-1].time - stopped:.2f} s after" if after else "no packet after the last lit one")


def _is_subsequence(part, whole):
    """Whether `part` is `whole` with some items left out, the rest in the same order."""
    items = iter(whole)
    return all(any(item == wanted for item in items) for wanted in part)


@pytest.mark.timing
def test_unreachable_targets_slow_neither_the_others_nor_the_frames(olad, spawn, check, figure):
    """A device that does not answer and a name that does not resolve slow neither the others nor the frames:
    first 5 s to the device alone (the yardstick), then 5 s beside the two."""
    universe = olad.ola_universe("sacn", 1)
    recorder = olad.recorder("alone")
    alone = sender(spawn, "alone", f"sacn://{olad.address}?rate=100&gamma=1")
    _, detail, latencies_alone = every_frame_arrived(recorder, universe, alone, 5)
    figure(f"the device alone: {detail}")
    recorder.stop()
    recorder = olad.recorder("unreachable")
    process = sender(spawn, "unreachable",
                     f"sacn://10.77.0.99?rate=100,ddp://no-such-wled.invalid,sacn://{olad.address}?rate=100&gamma=1")
    latencies = every_frame(check, "beside an unreachable device and an unknown name, every frame still arrives in order",
                            recorder, universe, process, 5)
    log = process.log()
    check("the unknown name is named in a warning", "no-such-wled.invalid" in log, log[-300:])
    check("…that says it is retried", "retrying every second" in log, log[-300:])
    check("…once (one \"cannot resolve no-such-wled.invalid\")",
          log.count("cannot resolve no-such-wled.invalid") == 1,
          f"{log.count('cannot resolve no-such-wled.invalid')} times: {log[-300:]}")
    check("…and the frames are no later than with the device alone (median within 3 ms)",
          percentile(latencies, 0.5) <= percentile(latencies_alone, 0.5) + 3,
          f"p50 {percentile(latencies, 0.5):.1f} ms (alone {percentile(latencies_alone, 0.5):.1f}), "
          f"p99 {percentile(latencies, 0.99):.1f} ms")


@pytest.mark.timing
def test_ddp_strip_gets_every_frame_in_order_by_two_decoders(netns, spawn, check):
    """DDP: a 600-pixel strip in segments, two packets a frame, read by two decoders: every frame, in order."""
    listener = DatagramListener()
    try:
        process = sender(spawn, "ddp", f"ddp://127.0.0.1:{listener.port}?rate=250&layout=segments&pixels=600&gamma=1")
        time.sleep(5)  # the frames counted
        process.stop()
        # The stop's dark frame (two all-zero packets, the push on the last), after every other.
        wait_for(lambda: len(listener.packets) >= 2 and decode_ddp(listener.packets[-1][1])["flags"] & 1
                 and not any(listener.packets[-1][1][10:]) and not any(listener.packets[-2][1][10:]), 0.2)
    finally:
        listener.close()
    ours = [decode_ddp(data) for _, data, _ in listener.packets]
    theirs = [ddp_reference.parse(data) for _, data, _ in listener.packets]
    frames, problems, current = [], [], bytearray(1800)
    previous_sequence = None
    for mine, reference in zip(ours, theirs):
        if (mine["offset"], mine["length"], mine["sequence"], bool(mine["flags"] & 1)) != \
                (reference["offset"], reference["length"], reference["sequence"], reference["push"]):
            problems.append(f"decoders disagree: {mine['offset']} vs {reference['offset']}")
        if mine["flags"] & 0xc0 != 0x40 or mine["data_type"] != 0x0b or mine["id"] != 1 \
                or len(mine["data"]) != mine["length"]:
            problems.append(f"header {mine['flags']:#x} {mine['data_type']:#x} {mine['id']}")
        if previous_sequence is not None and mine["sequence"] != previous_sequence % 15 + 1:
            problems.append(f"sequence {previous_sequence} → {mine['sequence']}")
        previous_sequence = mine["sequence"]
        current[mine["offset"]:mine["offset"] + mine["length"]] = mine["data"]
        if mine["flags"] & 1:  # push: a whole frame
            if mine["offset"] + mine["length"] != 1800:
                problems.append("push before the last packet")
            # Pixel 0 is red (bass), pixel 200 green (mid), pixel 400 blue (treble).
            frames.append(current[0] << 16 | current[601] << 8 | current[1202])
    frames = [n for n in frames if n]
    sent = sorted(made(process))
    inside = [n for n in sent if frames and frames[0] <= n <= frames[-1]]
    # In order and each a frame that was made; none lost but for a rare one to the test's own Python
    # listener (its socket read by a thread that shares the interpreter).
    check("DDP: every frame in two packets (1440 + 360 bytes, push on the last), the same to python-led-ddp",
          not problems, f"{len(problems)} problems: {problems[:3]}" if problems else f"{len(ours)} packets")
    check("DDP: at least 450 frames", len(frames) >= 450, f"{len(frames)} frames, {len(ours)} packets")
    check("DDP: the frames in order", frames == sorted(frames),
          out_of_order(frames))
    check("DDP: each a frame the sender made", set(frames) <= set(sent),
          f"not made: {sorted(set(frames) - set(sent))[:10]}")
    check("DDP: none lost but for 1 in 100", len(frames) >= 0.99 * len(inside),
          f"{len(frames)} of {len(inside)} frames made from the first to the last")
