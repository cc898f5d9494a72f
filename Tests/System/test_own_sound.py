"""The receiver's own sound (receiver.sound, receiver.play): AirPlay through a real shairport-sync with a real
AirPlay client (pyatv 0.13.0, the one bookworm's shairport-sync 3.3.8 decodes), a FIFO written in real time as
librespot's pipe backend writes it, and the sound played on real ALSA devices: the `file` plugin (which keeps
what is played) and PulseAudio through ALSA's `pulse` plugin, whose sink plays 200 ms after its client.

Each test runs in a network namespace of its own (its ports: the receiver's, AirPlay's 5000) with its own
D-Bus system bus and avahi-daemon where AirPlay needs them (support/avahi.py), its FIFO and files in its folder.
"""
import array
import json
import math
import os
import re
import socket
import statistics
import sys
import time

import pytest

from support import debian_roots, sound_servers
from support.avahi import AvahiHost
from support.packages import package_path
from support.processes import free_port, listening, wait_for
from support.snapcast import SnapServer, heard_onsets, stock_client
from support.sound_servers import DESKTOP_NICE
from support.sound_signals import BANDS, RATE
from support.sound_timing import burst_offsets_ms, nearest, reference_onsets, rises

HERE = os.path.dirname(os.path.abspath(__file__))
WRITER = os.path.join(HERE, "support", "paced_writer.py")
STAMPED = os.path.join(HERE, "support", "stamped.py")
ATVREMOTE = os.path.join(os.path.dirname(sys.executable), "atvremote")
LEVEL = {"LIGHTORGAN_ANALYSIS_RESPONSE": "level", "LIGHTORGAN_PAGE_ENABLED": "false"}


# -- what the receiver showed and played -------------------------------------------------------------

def frames(process):
    """The receiver's `--output stdout` lines: [(time, bass, mid, treble)]."""
    return [(float(f[0]), int(f[1]), int(f[2]), int(f[3])) for f in process.lines() if len(f) == 4]


def lit_after_the_chord(rows):
    """When each band's lamp first lit after the chord (≥ 1.5 s after the first lamp lit), or None each."""
    chord = next((t for t, *levels in rows if max(levels) >= 128), None)
    if chord is None:
        return {band: None for band in BANDS}
    return {band: first_lit(rows, index, after=chord + 1.5) for index, band in enumerate(BANDS, start=1)}


def first_lit(rows, band, after=0.0):
    """When lamp `band` (1 bass, 2 mid, 3 treble) first reached 128 after `after`, or None."""
    return next((t for t, *levels in rows if t >= after and levels[band - 1] >= 128), None)


def tone_starts(raw_path, after=2.0):
    """Where each band's tone starts in a played raw 44.1 kHz stereo file, seconds from its start: the first
    20 ms window from `after` s on whose energy at that band's frequency (Goertzel) is over a tenth of a full-scale sine's."""
    with open(raw_path, "rb") as file:
        left = array.array("h", file.read())[0::2]
    window = int(RATE * 0.02)
    starts = {}
    for band, frequency in BANDS.items():
        coefficient = 2 * math.cos(2 * math.pi * frequency / RATE)
        for begin in range(int(after * RATE), len(left) - window, window):
            s1 = s2 = 0.0
            for value in left[begin:begin + window]:
                s1, s2 = value + coefficient * s1 - s2, s1
            power = s1 * s1 + s2 * s2 - coefficient * s1 * s2
            if power > 0.1 * (0.5 * 32767 * window / 2) ** 2:
                starts[band] = begin / RATE
                break
    return starts, len(left) / RATE


def check_tones(check, rows, played, log, tolerance=0.05):
    """The tones' checks: the lamps light bass, mid, treble in order 2 s (± `tolerance`) apart after the chord, the
    played file holds the tones as far apart, and the lamps end dark."""
    lit = lit_after_the_chord(rows)
    check(f"every band's lamp lit after the chord (first lit: {lit})", None not in lit.values(), log[-800:])
    check(f"bass, mid and treble light in that order (first lit: {lit})",
          None not in lit.values() and lit["bass"] < lit["mid"] < lit["treble"], log[-800:])
    if None not in lit.values():
        gaps = (lit["mid"] - lit["bass"], lit["treble"] - lit["mid"])
        check(f"2 s apart, as the tones were made ({gaps[0]:.3f} s, {gaps[1]:.3f} s)",
              all(abs(gap - 2.0) <= tolerance for gap in gaps))
    starts, length = tone_starts(played)
    check(f"the played file holds every band's tone (found at {starts})", list(starts) == list(BANDS),
          f"{starts}, {length:.2f} s")
    check(f"the played file holds the tones in order, 2 s apart (found at {starts})",
          list(starts) == list(BANDS) and all(abs(starts[b] - starts["bass"] - 2.0 * i) <= 0.03
                                              for i, b in enumerate(BANDS)), f"{starts}, {length:.2f} s")
    check("the receiver showed frames", bool(rows), log[-800:])
    check("the lamps end dark", bool(rows) and rows[-1][1:] == (0, 0, 0), str(rows[-1:]))
    return length


def idle_figures(log):
    """The figures of the receiver's last "idle" line: (latency ms, taken out, put in, underruns) or None."""
    found = re.findall(r"idle; the sound was (-?\d+) ms behind its source, (\d+) frames taken out and (\d+) put "
                       r"in to hold it, (\d+) underruns", log)
    return tuple(int(v) for v in found[-1]) if found else None


def own_receiver(spawn, name, *options, env=None, wrapper=()):
    """`lightorgan receive` printing its frames, with its own sound; (process, port) once it listens."""
    port = free_port()
    process = spawn(name, "receive", "--bind", "127.0.0.1", "--port", str(port), "--output", "stdout",
                    "--stats-interval", "0", *options, env={**LEVEL, **(env or {})}, wrapper=wrapper)
    if not wait_for(lambda: listening(port) or not process.alive(), 10) or not process.alive():
        raise AssertionError(f"the receiver did not start: {process.log()[-800:]}")
    return process, port


def write_paced(spawn, name, audio, pipe, log, *options):
    """The pipe's writer at a desktop player's priority (it stands for librespot on its own core)."""
    return spawn.command(name, [*DESKTOP_NICE, sys.executable, WRITER, audio, pipe, log, *options])


# -- a pipe: Spotify Connect's contract ----------------------------------------------------------------

def test_a_pipe_lights_bass_mid_treble_in_order_and_plays_the_tones(signals, spawn, check, netns, tmp_path):
    """Tones written into the FIFO as librespot writes, played on the file plugin: the lamps light in order
    2 s apart, and the played file holds the tones, as far apart."""
    fifo, played = str(tmp_path / "spotify"), str(tmp_path / "played.raw")
    receiver, _ = own_receiver(spawn, "receiver", "--sound", f"pipe:{fifo}", "--play", f"file:'{played}',raw")
    writer = write_paced(spawn, "writer", signals["tones.raw"], fifo, str(tmp_path / "writer.log"))
    check("the writer wrote the 8 s in real time", writer.wait(timeout=20) == 0, writer.log()[-300:])
    wait_for(lambda: "idle" in receiver.log(), 5)
    receiver.stop()
    log = receiver.log()
    length = check_tones(check, frames(receiver), played, log)
    check(f"all of it was played ({length:.3f} s of 8.0 s)", abs(length - 8.0) <= 0.02)
    check("the log names the pipe and its stream playing", f"pipe {fifo}: playing" in log, log[-600:])
    check("the log names the pipe and its stream going idle", f"pipe {fifo}: idle" in log, log[-600:])


def test_a_paused_pipe_goes_dark_and_lights_again_when_it_resumes(signals, spawn, check, netns, tmp_path):
    """A steady tone, a 5 s pause in the writing (a paused Spotify), the tone again."""
    fifo = str(tmp_path / "spotify")
    receiver, _ = own_receiver(spawn, "receiver", "--sound", f"pipe:{fifo}", "--play", "none")
    writer_log = str(tmp_path / "writer.log")
    writer = write_paced(spawn, "writer", signals["steady.raw"], fifo, writer_log, "--pause-at", "1.5",
                         "--pause-for", "5")
    check("the writer wrote, paused and wrote again", writer.wait(timeout=20) == 0, writer.log()[-300:])
    time.sleep(1)
    receiver.stop()
    lines = open(writer_log).read().split("\n")
    paused = float(next(line.split()[1] for line in lines if line.startswith("pause")))
    resumed = float(next(line.split()[1] for line in lines if line.startswith("resume")))
    rows = frames(receiver)
    lit_before = [t for t, _, mid, _ in rows if mid >= 128 and t < paused]
    # The stream ends 0.5 s into the pause: the lamps go off (one dark frame) and nothing is shown until it resumes.
    last_before = next((row for row in reversed(rows) if row[0] < resumed), None)
    lit_during = [t for t, b, m, tr in rows if paused + 1.0 < t < resumed and max(b, m, tr) > 0]
    lit_after = first_lit(rows, 2, after=resumed)
    check(f"the mid lamp is lit while the tone plays ({len(lit_before)} frames)", len(lit_before) >= 50)
    check("a frame was shown before the writer resumed", last_before is not None, f"{len(rows)} frames")
    check(f"dark in the pause (the last frame before it resumes: {last_before and last_before[1:]})",
          last_before is not None and last_before[1:] == (0, 0, 0), str(last_before))
    check("dark within a second of the pause", last_before is not None and last_before[0] - paused <= 1.0,
          f"the last frame before it resumes: {last_before[0] - paused:.2f} s into it" if last_before else "none")
    check("dark through the pause", not lit_during, f"lit at {lit_during[:5]}")
    check("the mid lamp lit again after the writer resumed", lit_after is not None,
          f"{sum(row[0] >= resumed for row in rows)} frames after it resumed")
    check(f"lit again when the writer resumes ({(lit_after or 0) - resumed:.2f} s after)",
          lit_after is not None and lit_after - resumed <= 0.5)
    log = receiver.log()
    check("the log says it played again", log.count(": playing") >= 2, log[-800:])
    check("the log says it went idle", ": idle" in log, log[-800:])


def test_a_groove_in_a_pipe_dances_and_its_silence_breathes_after_idle_after(signals, spawn, check, netns, tmp_path):
    """A 120 BPM groove for 10 s, 6 s of silence, the groove again, written into the FIFO, with `analysis.idle:
    breathe` after 2 s: the lamps dance on the groove, stay dark for the first 2 s of silence (the beat is let go
    0.5 s into it), then breathe, every lamp alike and never above the glow's level; the groove's return brings
    the dance back at once, and the lamps end dark when the stream ends."""
    fifo = str(tmp_path / "spotify")
    receiver, _ = own_receiver(spawn, "receiver", "--sound", f"pipe:{fifo}", "--play", "none", "--idle", "breathe",
                               "--idle-after", "2")
    writer_log = str(tmp_path / "writer.log")
    writer = write_paced(spawn, "writer", signals["groove.raw"], fifo, writer_log)
    check("the writer wrote the 20 s in real time", writer.wait(timeout=40) == 0, writer.log()[-300:])
    wait_for(lambda: f"pipe {fifo}: idle" in receiver.log(), 5)
    receiver.stop()
    start = float(next(line.split()[1] for line in open(writer_log) if line.startswith("start")))
    # A frame is shown about 0.26 s after its audio was written (a 0.11 s block, the 0.15 s pacing of a pipe that
    # is not played); the windows below leave 0.3 s or more to either side.
    rows = [(t - start - 0.26, *levels) for t, *levels in frames(receiver)]

    def within(first, last):
        return [row for row in rows if first <= row[0] <= last]
    glow = round(255 * 0.4)
    dancing = [row for row in within(4, 9.7) if max(row[1:]) >= 128]
    check(f"the lamps dance on the groove ({len(dancing)} frames at half or more, 4…9.7 s)", len(dancing) >= 20)
    before = within(11.0, 12.3)
    check("dark in the first 2 s of the silence, before idle_after has passed (11…12.3 s)",
          bool(before) and all(row[1:] == (0, 0, 0) for row in before), str([r for r in before if max(r[1:])][:5]))
    breathing = within(14.0, 15.7)
    check(f"breathing 1.5…3.2 s into the idle look: every frame lit ({len(breathing)} frames, 14…15.7 s)",
          bool(breathing) and all(min(row[1:]) > 0 for row in breathing), str(breathing[:3]))
    check("breathing: every lamp alike", bool(breathing) and all(row[1] == row[2] == row[3] for row in breathing),
          str([r for r in breathing if not r[1] == r[2] == r[3]][:3]))
    check(f"breathing: never above the glow's level ({glow})",
          bool(breathing) and all(max(row[1:]) <= glow + 1 for row in breathing), str(max(breathing, default=None)))
    back = next((row for row in within(15.7, 18) if max(row[1:]) >= 224), None)
    check("the groove's return brings the dance back at once (a lamp at 224 or more within 0.4 s of 16 s)",
          back is not None and back[0] <= 16.4, str(back))
    check("the lamps end dark when the stream ends", bool(rows) and rows[-1][1:] == (0, 0, 0), str(rows[-1:]))


@pytest.mark.slow
def test_a_fast_source_for_a_minute_keeps_the_lamps_in_step(signals, spawn, check, figure, netns, tmp_path):
    """Bursts written 0.1 % fast for a minute (a source whose clock runs fast against the DAC), played on the
    file plugin (timed by the monotonic clock): frames are taken out of the sound so it stays as far behind
    its source, and every burst's lamp rises as long after the burst was written."""
    fifo, played = str(tmp_path / "spotify"), str(tmp_path / "played.raw")
    receiver, _ = own_receiver(spawn, "receiver", "--sound", f"pipe:{fifo}", "--play", f"file:'{played}',raw")
    writer_log = str(tmp_path / "writer.log")
    writer = write_paced(spawn, "writer", signals["minute.raw"], fifo, writer_log, "--rate-factor", "1.001")
    check("the writer wrote its minute", writer.wait(timeout=90) == 0, writer.log()[-300:])
    wait_for(lambda: "idle" in receiver.log(), 5)
    receiver.stop()
    start = float(open(writer_log).readline().split()[1])
    made = [start + at / 1.001 for at in signals["minute starts"]]  # seconds of audio, written 0.1 % fast
    offsets = burst_offsets_ms(rises(receiver.out_path), made)
    figures = idle_figures(receiver.log())
    check(f"the receiver held the sound with frames taken out ({figures})", figures is not None, receiver.log()[-600:])
    if figures:
        latency, taken, put, underruns = figures
        # 0.1 % of 44.1 kHz over the 61 s: about 2,700 frames.
        check(f"about 0.1 % of the frames taken out ({taken - put} net of 2,700)", 1_900 <= taken - put <= 3_500)
        check("no underrun", underruns == 0)
    first, last = offsets[:10], offsets[-10:]
    check(f"the lamps rose with at least 60 bursts ({len(offsets)})", len(offsets) >= 60, f"{offsets}")
    check(f"the lamps rise as long after each burst at the end as at the start (first ten {statistics.median(first) if first else None} ms, "
          f"last ten {statistics.median(last) if last else None} ms)",
          bool(offsets) and abs(statistics.median(last) - statistics.median(first)) <= 10, f"{offsets}")
    if offsets:
        figure(f"a 0.1 % fast pipe for a minute: lamps rise {statistics.median(first):.0f} ms after the first bursts "
               f"were written, {statistics.median(last):.0f} ms after the last; {figures[1] if figures else '?'} frames "
               f"taken out")


# -- AirPlay ---------------------------------------------------------------------------------------

@pytest.fixture
def airplay_host(netns, tmp_path):
    """A host with its own system bus and avahi-daemon (shairport-sync's mDNS), in the test's namespace."""
    host = AvahiHost(str(tmp_path), "speaker")
    try:
        host.start_bus()
        host.start_avahi()
        yield host
    finally:
        host.close()


@pytest.fixture
def pulse(tmp_path):
    """A PulseAudio server with the null sink "phones" and "slow", a tunnel into it that plays 200 ms later,
    the default sink; its environment for the receiver (ALSA's pulse plugin) and the recorder."""
    server = sound_servers.pulseaudio(str(tmp_path / "pulse"), "module-null-sink sink_name=phones")
    try:
        server.load_module("module-tunnel-sink", "sink_name=slow", f"server=unix:{sound_servers.socket_of(server)}",
                           "sink=phones", "latency_msec=200")
        sound_servers.wait_for_sink(server, "slow")
        server.set_default_sink("slow")
        yield server
    finally:
        server.stop()


def stream(spawn, name, wav, port=5000):
    """pyatv's atvremote streaming `wav` to the AirPlay speaker on 127.0.0.1:`port`, in manual mode (no mDNS)."""
    with open(wav, "rb") as audio:
        # At a desktop player's priority: it stands for a phone, which does not share this machine's cores.
        return spawn.command(name, [*DESKTOP_NICE, ATVREMOTE, "--manual", "--address", "127.0.0.1", "--port", str(port),
                                    "--protocol", "raop", "--id", "lightorgan-test", "stream_file=-"], stdin=audio)


@pytest.mark.airplay
def test_an_airplay_client_lights_bass_mid_treble_in_order(airplay_host, signals, spawn, check, tmp_path):
    """pyatv streams the tones to `lightorgan receive --sound airplay --play file:…`: the speaker is published
    by Avahi under the receiver's name, the lamps light in order 2 s apart, the played file holds the tones."""
    played = str(tmp_path / "played.raw")
    receiver, _ = own_receiver(spawn, "receiver", "--sound", "airplay", "--name", "Kitchen organ", "--play",
                               f"file:'{played}',raw", env={"XDG_STATE_HOME": str(tmp_path / "state")},
                               wrapper=airplay_host.wrapper)
    # avahi-browse -p writes a space in a name as \032.
    found = wait_for(lambda: "Kitchen\\032organ" in airplay_host.run(["avahi-browse", "-rtp", "_raop._tcp"], 10)[1],
                     15)
    check("Avahi publishes the AirPlay speaker under the receiver's name", found,
          airplay_host.run(["avahi-browse", "-rtp", "_raop._tcp"], 10)[1][-400:])
    client = stream(spawn, "atvremote", signals["tones.wav"])
    check("the AirPlay client streamed the tones", client.wait(timeout=60) == 0, client.output()[-400:])
    wait_for(lambda: "AirPlay: idle" in receiver.log(), 10)
    receiver.stop()
    log = receiver.log()
    check_tones(check, frames(receiver), played, log)
    check("the log says AirPlay played", "AirPlay: playing" in log, log[-800:])
    check("the log says AirPlay went idle", "AirPlay: idle" in log, log[-800:])


@pytest.mark.airplay
@pytest.mark.sound
@pytest.mark.timing
def test_airplay_lamps_rise_with_the_bursts_leaving_the_sink(airplay_host, pulse, signals, spawn, check, figure,
                                                             tmp_path):
    """Bursts streamed over AirPlay, played through ALSA's pulse plugin into "slow" (heard 200 ms after it is
    written). The reference: the monitor of "phones", the sink "slow" plays into, recorded with each read
    stamped on the receivers' clock: there a burst is heard. The lamps rise within ±15 ms of it."""
    receiver, _ = own_receiver(spawn, "receiver", "--sound", "airplay", "--play", "pulse",
                               env={"XDG_STATE_HOME": str(tmp_path / "state"), **pulse.env},
                               wrapper=airplay_host.wrapper)
    reference_audio, reference_reads = str(tmp_path / "reference.raw"), str(tmp_path / "reference.txt")
    reference = spawn.command("reference", [*DESKTOP_NICE, sys.executable, STAMPED, "reads", reference_audio,
                                            reference_reads, "--", "parec", "--device=phones.monitor", "--raw",
                                            "--format=s16le", "--rate=48000", "--channels=2", "--latency-msec=10"],
                              env=pulse.env)
    time.sleep(1)
    client = stream(spawn, "atvremote", signals["bursts.wav"])
    check("the AirPlay client streamed the bursts", client.wait(timeout=60) == 0, client.output()[-400:])
    wait_for(lambda: "AirPlay: idle" in receiver.log(), 10)
    time.sleep(1)
    reference.stop()
    receiver.stop()
    log = receiver.log()
    heard = reference_onsets(reference_audio, reference_reads)
    offsets = burst_offsets_ms(rises(receiver.out_path), heard, before=0.1, after=0.1)
    check(f"at least 15 bursts were heard ({len(heard)} heard)", len(heard) >= 15, log[-800:])
    check(f"the lamps rose with at least 15 of them ({len(offsets)} paired)", len(offsets) >= 15, log[-800:])
    if offsets:
        ordered = sorted(offsets)
        p50 = statistics.median(ordered)
        p95 = ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))]
        quartiles = statistics.quantiles(ordered, n=4)
        check(f"the lamps rise within ±15 ms of the bursts leaving the sink (p50 {p50:.1f} ms, p95 {p95:.1f} ms)",
              abs(p50) <= 15, f"{ordered}")
        check(f"every burst's rise keeps that time (middle half within {quartiles[2] - quartiles[0]:.1f} ms ≤ 14, "
              f"as the laptop's delayed lamps)", quartiles[2] - quartiles[0] <= 14, f"{ordered}")
        # Lights later than their sound by about 45 ms are seen to lag (ITU-R BT.1359's detectability threshold);
        # the tail is kept well inside that.
        check(f"the late tail: p95 {p95:.1f} ms ≤ 30 ms after the bursts leave the sink", p95 <= 30, f"{ordered}")
        figure(f"AirPlay into a 200 ms sink: lamps rise {p50:.1f} ms (p50), {p95:.1f} ms (p95) from the bursts "
               f"being heard, over {len(offsets)} bursts")
    latency = re.findall(r"the sound was (\d+) ms behind its source", log)
    check(f"the log gives the sound's delay behind its source ({latency[-1:] or 'none'} ms)", bool(latency), log[-800:])


# -- the page ----------------------------------------------------------------------------------------

@pytest.mark.browser
def test_the_page_names_the_own_sound_and_changes_it(page_host, browser, signals, spawn, check, tmp_path):
    """A phone's page while a pipe plays: it names the sound and its sender, and its settings row changes
    receiver.sound at once (phone-own-sound.png, phone-own-sound-off.png in the test's folder)."""
    from support.browser import open_page  # selenium: only where a test opens the page
    fifo = tmp_path / "spotify"
    settings = tmp_path / "lightorgan.yaml"
    settings.write_text(f"receiver:\n  sound: \"pipe:{fifo}\"\n  play: none\n")
    process, key = page_host.receiver("own", "--config", str(settings))
    page = browser("phone")
    open_page(page, page_host.base, key)
    writer = write_paced(spawn, "writer", signals["steady.raw"], str(fifo), str(tmp_path / "writer.log"))
    page.wait_for(f"(window.lightorgan.status || {{}}).sound === {json.dumps(f'pipe {fifo}: playing')}", 15)
    page.wait_for("(window.lightorgan.status || {}).sender && window.lightorgan.status.sender.kind === 'own sound'", 10)
    page.wait_for("window.lightorgan.status.fps > 0", 5)  # a second of frames: the rate shows
    sender_text = page.js("return document.querySelector('#sender-text').textContent")
    check(f"the page names the pipe as the sender ({sender_text!r})", f"pipe {fifo}" in sender_text)
    check(f"the page calls the sender the own sound ({sender_text!r})", "own sound" in sender_text)
    page.js("document.querySelector('#sender-text').scrollIntoView({block: 'start'})")
    shown_sound = page.js("return document.querySelector('#st-sound').textContent")
    check(f"the status says what plays ({shown_sound!r})", shown_sound == f"pipe {fifo}: playing")
    wide = page.js("return document.querySelector('#sender-text').scrollWidth > "
                   "document.querySelector('#sender-text').clientWidth")
    check("a long name wraps inside the card on a phone", not wide)
    page.screenshot(str(tmp_path / "phone-own-sound.png"))
    writer.wait(timeout=20)
    page.js("const f = document.querySelector('#setting-receiver-sound'); f.scrollIntoView({block: 'center'});"
            "f.focus(); f.value = 'network'; f.dispatchEvent(new Event('input')); f.dispatchEvent(new Event('change'))")
    page.wait_for("(window.lightorgan.status || {}).sound === null", 15)
    check("set on the page, receiver.sound network stops the pipe", "receiver.sound is now network" in process.log(),
          process.log()[-600:])
    shown_off = page.js("return document.querySelector('#st-sound').textContent")
    check(f"and the status says so ({shown_off!r})", shown_off.startswith("none"))
    page.screenshot(str(tmp_path / "phone-own-sound-off.png"))


# -- clear errors ----------------------------------------------------------------------------------

def test_what_cannot_be_the_receivers_own_sound_says_what_to_do(spawn, check, netns, tmp_path):
    """A bad receiver.sound, a pipe that is a file, an absent ALSA device, AirPlay without shairport-sync
    and AirPlay's port taken: one line each, and the receiver runs on for its senders."""
    bad = spawn("bad", "receive", "--sound", "spotify", "--output", "stdout")
    check("a bad receiver.sound is refused", bad.wait(10) != 0, bad.log()[-400:])
    check("the refusal names the key", "receiver.sound" in bad.log(), bad.log()[-400:])
    check("the refusal names the value", "spotify" in bad.log(), bad.log()[-400:])
    check("the refusal names what is allowed", "airplay" in bad.log(), bad.log()[-400:])
    file = tmp_path / "not-a-fifo"
    file.write_text("x")
    runs = {
        "pipe": (["--sound", f"pipe:{file}"], {}, "exists and is not a FIFO"),
        "folder": (["--sound", f"pipe:{tmp_path}/missing/fifo"], {}, "does not exist; create it"),
        "device": (["--sound", "hw:7,0"], {}, "does not exist"),
        "shairport": (["--sound", "airplay"], {"PATH": "/nonexistent"}, "sudo apt install shairport-sync"),
    }
    with socket.socket() as holder:  # AirPlay's port taken, as Debian's own shairport-sync service takes it
        holder.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        holder.bind(("0.0.0.0", 5000))
        holder.listen()
        runs["port"] = (["--sound", "airplay"], {}, "sudo systemctl disable --now shairport-sync")
        for name, (options, env, words) in runs.items():
            receiver, _ = own_receiver(spawn, name, *options, env={"XDG_STATE_HOME": str(tmp_path / "state"), **env})
            # The sound opens after the listening socket: its line may come a moment after the port listens.
            wait_for(lambda: "without its own sound" in receiver.log(), 10)
            line = next((line for line in receiver.log().splitlines() if "without its own sound" in line), "")
            check(f"{name}: one line that says what to do ({line[line.find('error'):][:160]}…)", words in line,
                  receiver.log()[-600:])
            check(f"{name}: the receiver runs on", receiver.alive())
            receiver.stop()


# -- Raspberry Pi OS trixie: shairport-sync 4.3.7 ----------------------------------------------------

def _trixie_selected(request):
    return any(item.module.__name__ == __name__ and "trixie" in item.name for item in request.session.items)


def fetch_up_front(request):
    """The release tests' trixie arm64 root, when the trixie test is selected (the .debs of the package's Depends
    and of shairport-sync 4.3.7 are fetched beside the tests, by `_trixie_speaker`)."""
    if _trixie_selected(request):
        debian_roots.arm64_root("trixie")


TRIXIE_SPEAKER = "the trixie root with the package, shairport-sync and snapclient"


def _trixie_speaker(tmp_path_factory, config, prepared_roots):
    """How to make a copy of the trixie arm64 root with the package's Depends (support/apt_release.py's
    `PreparedRoots`) with the arm64 package and Debian's shairport-sync and snapclient installed from the cached
    .debs (fetched first, when the cache lacks them) through qemu-user, without a network: a `make(wrapper)` for
    support/beside.py. It returns the root and {program: version}."""
    def make(wrapper):
        pi_package = package_path(config, "arm64")  # waited for here, beside the tests, when it is being built
        root, cached = str(tmp_path_factory.mktemp("trixie") / "root"), debian_roots.arm64_root("trixie")
        debian_roots.fetch_depends("trixie", cached, pi_package, extra=("shairport-sync", "snapclient"),
                                   wrapper=wrapper)
        debian_roots.copy_root("trixie", prepared_roots.template("trixie", "arm64"), root, pi_package,
                               sources_from=cached)
        install = (f"apt-get install -y -q --no-install-recommends /tmp/{os.path.basename(pi_package)} "
                   "shairport-sync snapclient")
        versions = "echo shairport-sync $(shairport-sync -V) && snapclient --version | head -1"
        result = debian_roots.in_root(root, ["bash", "-c", f"{install} && {versions}"], timeout=1800,
                                      wrapper=wrapper)
        if result.returncode != 0:
            raise RuntimeError(f"trixie: installing the package, shairport-sync and snapclient failed:\n"
                               f"{result.stdout[-2000:]}")
        shairport, snapclient = result.stdout.strip().splitlines()[-2:]
        return root, {"shairport-sync": shairport.split()[-1], "snapclient": snapclient.split()[-1].lstrip("v")}
    return make


def prepare_beside(request, beside):
    """The trixie root, made beside the tests from the session's start (apt under qemu-user: a minute or two of
    CPU, nothing timed) when its test is selected."""
    if _trixie_selected(request):
        beside.start(TRIXIE_SPEAKER, _trixie_speaker(request.getfixturevalue("tmp_path_factory"), request.config,
                                                     request.getfixturevalue("prepared_roots")))


@pytest.fixture(scope="module")
def trixie_speaker(tmp_path_factory, request, beside, prepared_roots):
    """The trixie root with the package and shairport-sync (made beside the tests, or now), and the version."""
    return beside.result(TRIXIE_SPEAKER, _trixie_speaker(tmp_path_factory, request.config, prepared_roots))


def _receiver_in_root(spawn, root, options):
    """The Pi's own binary receiving in `root` through qemu-user (a private mount namespace with its /proc and
    /dev, a clean environment, the level response, no page), on a free port here, lines on stdout; `options`:
    the rest of its command line, as the shell takes it."""
    inside = ("/usr/bin/env -i PATH=/usr/bin:/bin HOME=/root LIGHTORGAN_ANALYSIS_RESPONSE=level "
              "LIGHTORGAN_PAGE_ENABLED=false XDG_STATE_HOME=/tmp/state /usr/bin/lightorgan receive --bind 127.0.0.1 "
              f"--port {free_port()} --output stdout --stats-interval 0 {options}")
    return spawn.command("receiver", ["unshare", "--mount", "--propagation", "private", "--", "bash", "-c",
                                      f"mount -t proc proc {root}/proc; mount --rbind /dev {root}/dev; "
                                      f"exec chroot {root} {inside}"])


@pytest.mark.airplay
@pytest.mark.pi
@pytest.mark.package
@pytest.mark.slow
def test_on_trixie_shairport_sync_4_3_7_plays_and_lights_the_tones(trixie_speaker, signals, spawn, check, netns,
                                                                 tmp_path):
    """Raspberry Pi OS trixie's shairport-sync (4.3.7) and the Pi's own binary, in the trixie arm64 root through
    qemu-user: pyatv 0.13.0 (also the newest this shairport-sync decodes: from 0.13.1 to 0.18.0 it segfaults on
    their PCM, as 3.3.8 does) streams the tones; the lamps light in order, the played file holds them."""
    root, versions = trixie_speaker
    build = versions["shairport-sync"]
    check(f"the root's shairport-sync is 4.3.7 ({build})", build.startswith("4.3.7-"))
    bus = tmp_path / "bus.xml"
    socket_path = f"{root}/run/dbus/system_bus_socket"
    os.makedirs(os.path.dirname(socket_path), exist_ok=True)
    bus.write_text(f"<busconfig><type>system</type><listen>unix:path={socket_path}</listen><auth>EXTERNAL</auth>"
                   "<policy context='default'><allow send_destination='*' eavesdrop='true'/><allow eavesdrop='true'/>"
                   "<allow own='*'/><allow user='*'/></policy></busconfig>")
    spawn.command("dbus", ["dbus-daemon", f"--config-file={bus}", "--nofork"])
    check("a system bus for shairport-sync (its Avahi client)", wait_for(lambda: os.path.exists(socket_path), 10))
    receiver = _receiver_in_root(spawn, root, "--sound airplay --play file:'/tmp/played.raw',raw")
    speaking = wait_for(lambda: listening(5000) or not receiver.alive(), 60) and receiver.alive()
    check("the receiver runs its shairport-sync on port 5000", speaking, receiver.log()[-600:])
    check("the receiver's shairport-sync is 4.3.7", "shairport-sync 4.3.7" in receiver.log(), receiver.log()[-600:])
    client = stream(spawn, "atvremote", signals["tones.wav"])
    check("the AirPlay client streamed the tones", client.wait(timeout=90) == 0, client.output()[-400:])
    wait_for(lambda: "AirPlay: idle" in receiver.log(), 20)
    receiver.stop()
    log = receiver.log()
    check("the log says AirPlay played", "AirPlay: playing" in log, log[-800:])
    check("the log says AirPlay went idle", "AirPlay: idle" in log, log[-800:])
    # Under qemu-user the Pi's binary keeps real time, with room for emulation.
    check_tones(check, frames(receiver), f"{root}/tmp/played.raw", log, tolerance=0.1)


@pytest.mark.snapcast
@pytest.mark.pi
@pytest.mark.package
@pytest.mark.slow
def test_on_trixie_snapclient_0_31_joins_a_bookworm_server_and_lights_with_the_stock_client(
        trixie_speaker, signals, spawn, check, figure, netns, tmp_path):
    """Raspberry Pi OS trixie's snapclient (0.31) under the Pi's own binary, in the trixie arm64 root through
    qemu-user, joins bookworm's snapserver (0.26) here: the protocol across the two versions. Bursts go into the
    server's pipe; the room's lamp rises with the stock (bookworm) client's sound, with room for emulation."""
    root, versions = trixie_speaker
    check(f"the root's snapclient is 0.31 ({versions['snapclient']})", versions["snapclient"].startswith("0.31"))
    (tmp_path / "house").mkdir()
    server = SnapServer(str(tmp_path / "house"))
    try:
        receiver = _receiver_in_root(spawn, root, f"--sound {server.url} --name Kitchen --play none")
        stock, audio, reads = stock_client(spawn, server, str(tmp_path))
        check("the trixie room joined the bookworm server by its name", wait_for(
            lambda: server.clients().get("kitchen", {}).get("connected"), 60), receiver.log()[-1200:])
        writer = spawn.command("writer", [sys.executable, WRITER, signals["bursts.raw"], server.fifo,
                                          str(tmp_path / "writer.log")])
        check("the writer wrote the 16 s in real time", writer.wait(timeout=40) == 0, writer.log()[-300:])
        time.sleep(2.5)
        stock.stop()
        heard = heard_onsets(audio, reads)
        lamps = rises(receiver.out_path)
        offsets = [(rise - at) * 1000 for at in heard if (rise := nearest(lamps, at)) is not None]
        median = statistics.median(offsets) if offsets else float("nan")
        figure(f"trixie's snapclient {versions['snapclient']}: the lamp against the stock client's sound, p50 "
               f"{median:+.1f} ms over {len(offsets)} of {len(heard)} bursts")
        check(f"the stock client heard at least 16 bursts ({len(heard)})", len(heard) >= 16,
              " ".join(f"{at:.2f}" for at in heard))
        check(f"the lamp rose with all the bursts heard but one at most ({len(offsets)} of {len(heard)})",
              len(offsets) >= len(heard) - 1, " ".join(f"{o:+.0f}" for o in offsets) + receiver.log()[-600:])
        check(f"the lamp rose with the bursts, p50 {median:+.1f} ms (≤ 50 ms: emulated)", abs(median) <= 50,
              " ".join(f"{o:+.0f}" for o in offsets))
        check("the log says it joined the Snapcast server", "connected to the Snapcast server" in receiver.log(),
              receiver.log()[-1200:])
        check("the log says it played", "Snapcast: playing" in receiver.log(), receiver.log()[-1200:])
    finally:
        spawn.stop_all()
        server.stop()
