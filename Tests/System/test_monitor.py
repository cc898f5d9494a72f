"""The laptop side against a real sound server (input: monitor), the speaker's delay included.

Each test runs against PulseAudio, and against PipeWire with pipewire-pulse and WirePlumber on a
private D-Bus, as most desktops now run (support/sound_servers.py). Null sinks "speakers" and
"phones", and "slow": a tunnel sink (into "phones" under PulseAudio, into a second, PulseAudio,
server's sink under PipeWire) whose latency is set to 200 ms, as a Bluetooth speaker would have:
- the default input (auto) records the default sink's monitor: a 1 kHz tone lights mid only (but for
  the frames where an independent recorder of the monitor heard the tone itself break); a null sink is
  virtual (its latency is its own buffer's, no speaker's): no delay;
- sender.delay auto asks the server for the sink's latency (PipeWire itself, through pw-dump, where
  pipewire-pulse says 0), logs it, and holds the frames back by it less the chain's 10 ms: the
  lamps' rises come that much after the bursts were made, as a recorder of the same monitor that
  stamps each read with CLOCK_MONOTONIC (the receivers' stdout clock) tells;
- receiver.delay holds a 2016-style sender's frames back at the receiver;
- switching the default sink moves the capture to the new sink within a second, without a restart.

The servers, their players and the reference recorder run at nice -11, as a desktop's RTKit gives
them: at normal priority, beside a build on both cores, PipeWire itself broke the tone up.
"""
import math
import os
import random
import re
import struct
import sys
import time

import pytest

from support import sound_servers
from support.processes import children, command_line, free_port, listening, running, wait_for
from support.sound_servers import DESKTOP_NICE, pipewire_latency_ms, pulseaudio_latency_ms
from support.sound_timing import earliest_onsets, handed_over_shift_ms, made_shift_ms, shift_ms, tone_breaks_at

pytestmark = [pytest.mark.sound, pytest.mark.timing]

STAMPED = os.path.join(os.path.dirname(os.path.abspath(__file__)), "support", "stamped.py")
LEVEL = {"LIGHTORGAN_ANALYSIS_RESPONSE": "level"}


@pytest.fixture(scope="module", params=["pulseaudio", "pipewire"])
def server(request, tmp_path_factory):
    """The sound server (one for the module's tests: they set the default sink they need), with the sinks "speakers",
    "phones" and the 200 ms tunnel "slow", "speakers" the default."""
    runtime = str(tmp_path_factory.mktemp(f"sound-{request.param}"))
    servers = []
    try:
        if request.param == "pipewire":
            main = sound_servers.pipewire(runtime)
            servers.append(main)
            # The far end of the tunnel: a PulseAudio server of its own (a tunnel into PipeWire itself hangs).
            far = sound_servers.pulseaudio(os.path.join(runtime, "far"), "module-null-sink sink_name=far", name="far")
            servers.append(far)
            main.load_module("module-null-sink", "sink_name=speakers")
            main.load_module("module-null-sink", "sink_name=phones")
            main.load_module("module-tunnel-sink", "sink_name=slow", f"server=unix:{sound_servers.socket_of(far)}",
                             "sink=far", "latency_msec=200")
        else:
            main = sound_servers.pulseaudio(runtime, "module-null-sink sink_name=speakers",
                                            "module-null-sink sink_name=phones")
            servers.append(main)
            main.load_module("module-tunnel-sink", "sink_name=slow", f"server=unix:{sound_servers.socket_of(main)}",
                             "sink=phones", "latency_msec=200")
        sound_servers.wait_for_sink(main, "slow")
        main.set_default_sink("speakers")
        main.kind = request.param
        yield main
    finally:
        for started in servers:  # PipeWire (and its tunnel) first, then the tunnel's far end
            started.stop()


@pytest.fixture(scope="module")
def tones(tmp_path_factory):
    """48 kHz stereo s16le: tone.raw, a steady 1 kHz tone for 8 s, and bursts.raw, bursts of it of 250 ms
    starting 0.55–0.8 s apart for 16 s (random, so the bursts fall at every phase of the sink's
    rendering blocks: a tunnel sink hands its monitor about 40 ms at a time, so an undelayed lamp rises
    when the block that holds the burst arrives, 0–40 ms after the burst was made). The silence between two
    bursts, 0.3 s at least, is longer than the mid lamp takes to go dark after a 250 ms tone (about 0.25 s):
    each burst then rises from dark, and its rise times the path, not the lamp's release. (With silences
    down to 0.2 s the three shortest left the lamp above dark, or dark for less than one 50 ms block.)"""
    folder = tmp_path_factory.mktemp("tones")
    generator = random.Random(14)
    starts, at = [], 4800
    while at < 48000 * 15:
        starts.append(at)
        at += generator.randint(26400, 38400)
    period = b"".join(struct.pack("<hh", v, v) for v in (int(12000 * math.sin(2 * math.pi * 1000 * i / 48000))
                                                           for i in range(48)))
    (folder / "tone.raw").write_bytes(period * 8000)
    bursts = bytearray(4 * 48000 * 16)
    for start in starts:
        bursts[4 * start:4 * (start + 12000)] = period * 250
    (folder / "bursts.raw").write_bytes(bursts)
    return {"tone": str(folder / "tone.raw"), "bursts": str(folder / "bursts.raw")}


# -- helpers -------------------------------------------------------------------------------------

def play(spawn, server, name, path, *options, latency=10):
    """pacat playing raw 48 kHz stereo in `latency` ms blocks, at the desktop's priority."""
    return spawn.command(name, [*DESKTOP_NICE, "pacat", "--playback", "--raw", "--format=s16le", "--rate=48000",
                                "--channels=2", f"--latency-msec={latency}", *options, path], env=server.env)


def receiver(spawn, name, *extra):
    """A receiver printing its frames (`time bass mid treble`), listening; (process, port)."""
    port = free_port()
    process = spawn(name, "receive", "--bind", "127.0.0.1", "--port", str(port), "--output", "stdout", "--quiet",
                    *extra)
    wait_for(lambda: listening(port), 5)
    return process, port


def frames(process):
    return [fields for fields in process.lines() if len(fields) == 4]


def dark_last(process):
    """Whether a receiver's last frame is dark."""
    last = frames(process)[-1:]
    return bool(last) and last[0][1:] == ["0", "0", "0"]


def tail(text, count):
    """The last `count` non-empty lines of `text`, on one line."""
    return " ".join([line for line in text.splitlines() if line.strip()][-count:])


# -- tests ---------------------------------------------------------------------------------------

def test_default_input_records_the_default_sinks_monitor(server, tones, spawn, check, netns, tmp_path):
    """A steady tone played to the default sink: the level response shows it as a steady lamp."""
    server.set_default_sink("speakers")
    # Played with a 100 ms buffer: on a busy machine a 10 ms player runs dry (pacat -v: 2 underruns in 12 s
    # beside four CPU hogs, none with 100 ms), and the click where the tone broke off and resumed lit bass
    # and treble for 30 ms (the analysis showing what was played). Nothing here is timed by the player.
    player = play(spawn, server, "steady-player", tones["tone"], latency=100)
    # The first recording of a monitor after a player starts waits 1-1.6 s for data (the sink finishes the
    # long block it began alone; later recorders start within 10 ms). A desktop's player has long been
    # playing: warm this one up with a recorder like ours.
    server.warm_up("speakers")
    # What the monitor hands out, recorded beside the sender, each read stamped with the receivers' clock:
    # where the tone itself broke (a starved server or player, on a busy machine), the click lights bass
    # and treble for a few frames, as it should; those frames are told apart, the rest must be mid only.
    reference_audio, reference_reads = str(tmp_path / "steady.raw"), str(tmp_path / "steady.txt")
    reference = spawn.command("steady-reference", [*DESKTOP_NICE, sys.executable, STAMPED, "reads", reference_audio,
                                                   reference_reads, "--", "parec", "--device=speakers.monitor",
                                                   "--raw", "--format=s16le", "--rate=48000", "--channels=2",
                                                   "--latency-msec=10"], env=server.env)
    steady, port = receiver(spawn, "steady")
    sender = spawn("send", "send", "--host", "127.0.0.1", "--port", str(port), env={**server.env, **LEVEL})
    time.sleep(2)  # 2 s of frames
    sender.stop()
    wait_for(lambda: dark_last(steady), 0.3)  # the sender gone: dark
    steady.stop()
    reference.stop()
    player.stop()
    log = sender.log()
    check("the default input records the default sink's monitor", "input: auto (48000 Hz, stereo)" in log,
          tail(log, 2))
    lines = frames(steady)
    count = len(lines)
    # Frames the server hands over together (two 10 ms blocks at once, now and then) reach the receiver together,
    # and it shows the newest: fewer than 100 a second are shown, but they never stop.
    times = [float(fields[0]) for fields in lines]
    span = times[-1] - times[0] if count >= 2 else 0
    gap = max((later - earlier for earlier, later in zip(times, times[1:])), default=0)
    check("frames keep coming: shown over at least 1.5 s", span >= 1.5, f"{count} frames shown over {span:.2f} s")
    check("frames keep coming: at least 60 a second shown", span > 0 and (count - 1) / span >= 60,
          f"{count} frames shown over {span:.2f} s")
    check("frames keep coming: never 60 ms without one", gap <= 0.06, f"the longest gap {gap * 1000:.0f} ms")
    breaks = tone_breaks_at(reference_audio, reference_reads)

    def near_a_break(shown):
        # The click reaches the sender's recorder within a block of ours and stays in its analysis
        # window for some 50 ms: a frame up to 50 ms before and 150 ms after the break shows it.
        return any(-0.05 <= shown - broke <= 0.15 for broke in breaks)
    settled = [(number, fields) for number, fields in enumerate(lines, start=1) if 60 < number < count - 2]
    judged = [(number, (b, m, t)) for number, (at, b, m, t) in settled if not near_a_break(float(at))]
    clicks = len(settled) - len(judged)
    off_tone = [f"frame {number}: {b} {m} {t}" for number, (b, m, t) in judged
                if not (int(m) >= 200 and int(b) <= 10 and int(t) <= 10)]
    check("a 1 kHz tone lights mid only, but where the monitor's own tone broke", not off_tone,
          f"{len(judged)} frames judged: {' '.join(off_tone[:3]) or 'all mid only'}; " + (
              f"the monitor's tone itself broke {len(breaks)}× in an independent recording (a starved sound "
              f"server or player), {clicks} frames near a break not judged" if breaks
              else "the monitor's tone was whole"))
    check(f"at least 60 frames judged for the tone ({len(judged)})", len(judged) >= 60,
          f"{clicks} frames near a break in the monitor's tone not judged")
    outputs = [line for line in log.splitlines() if "output" in line]
    check("a null sink is virtual: no delay, and the log says so",
          "output speakers is virtual, its speaker's latency unknown: lights not delayed" in log,
          outputs[-1] if outputs else "")


# PulseAudio's tunnel sink hands its monitor 50 ms blocks, and a record stream now and then starts one
# block behind the others and stays there for its life (measured: of 8 pairs of 10 ms and 40 ms recorders
# started together on "slow", one pair was 50.2 ms apart one way, one the other way, the rest within
# 0.2 ms; on a brand-new machine the senders' lamps rose 40-60 ms late, run after run). The delayed sender
# times its frames by what the server states of its own record stream (its write index at the server's
# clock: when the audio was made, not when it reached the sender), and the reference is the earliest of
# three record streams started apart.
@pytest.mark.parametrize("server", ["pulseaudio", "pipewire"], indirect=True)
def test_delayed_lamps_rise_as_long_after_the_sound_as_the_output_lags(server, tones, spawn, check, figure, netns,
                                                                       lightorgan, tmp_path):
    """Bursts played to "slow". Sender A (--delay 0) streams to a plain receiver and to one with
    receiver.delay 150; sender B (delay auto) to a third. All capture the same monitor at once."""
    server.set_default_sink("slow")
    plain_receiver, plain = receiver(spawn, "plain")
    held_receiver, held = receiver(spawn, "held", "--delay", "150")
    auto_receiver, auto = receiver(spawn, "auto")
    env = {**server.env, **LEVEL}
    # 200 frames/s: a frame period of 5 ms, so the rises of two senders differ by at most that in phase.
    plain_sender = spawn("send-plain", "send", "--fps", "200", "--hosts", f"127.0.0.1:{plain},127.0.0.1:{held}",
                         "--delay", "0", env=env)
    # Its log lines get the monotonic clock of the receivers' frames: which delay held at each burst.
    auto_log = str(tmp_path / "send-auto.log")
    auto_sender = spawn.command("send-auto", [sys.executable, STAMPED, "lines", auto_log, "--", lightorgan, "send",
                                              "--fps", "200", "--host", "127.0.0.1", "--port", str(auto)], env=env)
    # The reference for when each burst was made: recorders of the same monitor of our own, each read(2)
    # stamped with the monotonic clock as it returns, before anything else is done (reference-N.txt: time,
    # bytes so far), the audio kept to find the bursts in. Three, started apart, and the earliest counts: a
    # PulseAudio record stream can run a whole block (50 ms on this tunnel) behind another for its life.
    references, recorders = [], []
    for number in range(3):
        audio, reads = str(tmp_path / f"reference-{number}.raw"), str(tmp_path / f"reference-{number}.txt")
        recorders.append(spawn.command(f"reference-{number}", [*DESKTOP_NICE, sys.executable, STAMPED, "reads", audio, reads, "--",
                                               "parec", "--device=slow.monitor", "--raw", "--format=s16le",
                                               "--rate=48000", "--channels=2", "--latency-msec=10"],
                                       env=server.env))
        references.append((audio, reads))
        time.sleep(0.13)
    time.sleep(1)  # the senders and the reference record a second of silence before the first burst
    player = play(spawn, server, "bursts-player", tones["bursts"], "--device=slow")
    time.sleep(16.5)  # the 16 s of bursts play in real time
    # The server's figure while the bursts still play (a PulseAudio tunnel states 0 until it has timed its far end).
    if server.kind == "pipewire":
        reported = pipewire_latency_ms(server, "slow")
    else:
        reported = pulseaudio_latency_ms(server, "slow")
    for process in (plain_sender, auto_sender, *recorders, player, plain_receiver, held_receiver, auto_receiver):
        process.stop()

    auto_text = open(auto_log).read()
    lag = re.search(r"capture lag ([0-9]+) ms \(the sound server's timing of the record stream\)", auto_text)
    check("the delayed sender reads its capture lag from the sound server's timing of its record stream",
          lag is not None, tail(auto_text, 3))
    logged = re.findall(r"output latency ([0-9]+) ms \(slow\): lights delayed [0-9]+ ms", auto_text)
    latency = int(logged[-1]) if logged else None
    check("delay auto logs the sink's latency", latency is not None, tail(auto_text, 3))
    check("the sound server reports the sink's latency", reported is not None,
          f"{server.kind}'s figure for slow: {reported}")
    check(f"delay auto logs the sink's latency as the tunnel's, 150-350 ms (logged {latency or 'none'} ms, tunnel set "
          "to 200)", latency is not None and 150 <= latency <= 350, tail(auto_text, 3))
    check(f"the server reports the sink's latency as the tunnel's, 150-350 ms (server "
          f"{reported if reported is not None else 'none'} ms, tunnel set to 200)",
          reported is not None and 150 <= reported <= 350, server.kind)
    plain_log = plain_sender.log()
    check("sender.delay 0 holds nothing back", "lights delayed" not in plain_log,
          " ".join(line for line in plain_log.splitlines() if "lights delayed" in line))

    # Every burst made is judged but two (a busy machine's late block may merge two bursts into one rise), on
    # every receiver: undelayed too, though there a dark spell may show as one frame a 50 ms block (rises()).
    bursts = len(earliest_onsets(references))
    wanted = max(bursts - 2, 20)  # (the signal holds 22 bursts)
    auto_shift, auto_expected, auto_spread, auto_pairs, auto_rises = made_shift_ms(
        auto_receiver.out_path, auto_log, references)
    plain_shift, _, plain_spread, _, plain_rises = made_shift_ms(plain_receiver.out_path, None, references)
    check("the delayed lamps' rises were paired with the bursts", auto_shift is not None,
          f"rises: {auto_rises} delayed, {plain_rises} undelayed")
    check(f"the delayed lamps rose with at least {wanted} bursts ({auto_pairs} of {bursts})", auto_pairs >= wanted,
          f"rises: {auto_rises} delayed, {plain_rises} undelayed")
    check(f"the lamps rise by the logged delay ± 10 ms after the sound was made (measured {auto_shift} ms, delay "
          f"{auto_expected} ms, over {auto_pairs} of {bursts} bursts; undelayed: {plain_shift} ms)",
          auto_shift is not None and auto_expected - 10 <= auto_shift <= auto_expected + 10,
          f"rises: {auto_rises} delayed, {plain_rises} undelayed")
    check(f"every burst's rise keeps that time, though the sink hands the audio over in blocks (middle half "
          f"within {auto_spread} ms ≤ 14, room for a busy machine; undelayed, sent as their block arrived: "
          f"{plain_spread} ms)", auto_shift is not None and auto_spread <= 14, f"rises: {auto_rises} delayed")
    # Undelayed, a lamp can rise no sooner than the server hands the burst's block over (PulseAudio's tunnel: 50 ms
    # blocks, so 0-50 ms after the sound); from there it is the sender's own time: its analysis and the network.
    handed_shift, handed_pairs = handed_over_shift_ms(plain_receiver.out_path, references)
    check("undelayed, the lamps' rises were paired with the blocks handed over", handed_shift is not None,
          f"rises: {plain_rises}")
    check(f"undelayed, the lamps rose with at least {wanted} bursts handed over ({handed_pairs} of {bursts})",
          handed_pairs >= wanted, f"rises: {plain_rises}")
    check(f"undelayed, the lamps rise within 10 ms of the sound server handing the burst over (measured "
          f"{handed_shift if handed_shift is not None else 'none'} ms over {handed_pairs} of {bursts} bursts)",
          handed_shift is not None and handed_shift <= 10, f"rises: {plain_rises}")
    figure(f"{server.kind}: delayed lamps rise {auto_shift} ms after the sound for a delay of {auto_expected} ms "
           f"(middle half within {auto_spread} ms), undelayed {plain_shift} ms (within {plain_spread} ms; {handed_shift} ms "
           f"after the server handed the burst over); capture "
           f"lag stated {lag.group(1) if lag else 'never'} ms")
    held_shift, held_pairs, _, held_rises = shift_ms(plain_receiver.out_path, held_receiver.out_path)
    check("receiver.delay 150: its rises were paired with the undelayed ones", held_shift is not None,
          f"rises: {held_rises}")
    check(f"receiver.delay 150: rises paired for at least {wanted} bursts ({held_pairs} of {bursts})",
          held_pairs >= wanted, f"rises: {held_rises}")
    check(f"receiver.delay 150 shows each frame 150 ms ± 10 ms after it arrives (measured "
          f"{held_shift if held_shift is not None else 'none'} ms over {held_pairs} of {bursts} bursts)",
          held_shift is not None and 140 <= held_shift <= 160, f"rises: {held_rises}")
    last = frames(held_receiver)[-1:] or [[]]
    check("the delayed receiver ends dark", last[0][1:] == ["0", "0", "0"], " ".join(last[0]))


def test_switching_the_default_sink_moves_the_capture(server, tones, spawn, check, netns):
    """The tone plays to "phones" only; the sender starts on the silent "speakers", then the default
    output is switched to "phones"."""
    server.set_default_sink("speakers")
    play(spawn, server, "phones-player", tones["tone"], "--device=phones")
    switch, port = receiver(spawn, "switch")
    sender = spawn("send-switch", "send", "--host", "127.0.0.1", "--port", str(port), env={**server.env, **LEVEL})
    time.sleep(1.5)  # 1.5 s on the silent sink, where nothing may light
    switched = time.monotonic()
    server.set_default_sink("phones")
    time.sleep(2)  # 2 s on the new one
    helpers = children(sender.pid)
    sender.stop()
    wait_for(lambda: not any(running(pid) for pid in helpers), 0.3)
    left = [f"{pid} {command_line(pid)}" for pid in helpers if running(pid)]
    lines = frames(switch)
    first = next((int((float(t) - switched) * 1000) for t, _, m, _ in lines if float(t) > switched and int(m) >= 200),
                 None)
    before = sum(1 for t, _, m, _ in lines if float(t) < switched and int(m) >= 64)
    log = sender.log()
    check("mid lit after the switch", first is not None, tail(log, 2))
    check(f"switching the default sink moves the capture within a second (mid lit "
          f"{first if first is not None else 'never'} ms after the switch)", first is not None and first < 1000,
          tail(log, 2))
    check(f"nothing lit on the silent sink before the switch ({before} lit frames before it)", before == 0,
          tail(log, 2))
    check("the new sink's latency is looked up after the switch", "output phones is virtual" in log,
          " ".join(line for line in log.splitlines() if "output latency" in line))
    check("the sender ran its recorders and watchers", bool(helpers),
          f"helpers {' '.join(map(str, helpers)) or 'none'}")
    check("a stopped sender leaves none of its recorders and watchers running", not left,
          f"helpers {' '.join(map(str, helpers)) or 'none'}; still running: {' | '.join(left)}")
