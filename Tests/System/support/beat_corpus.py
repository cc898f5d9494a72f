"""The beat corpus of the beat benchmark: grooves with exact beats, generated as MIDI and rendered with FluidSynth.

Usage: beat_corpus.py CACHE_DIR [--speech WAV]   (scripts/beat-corpus)

Every groove is written with mido as a General MIDI file (drums on channel 10, a bass, chords or a pad; the tempo
map in track 0, where pretty_midi and FluidSynth both read it) and rendered with
`fluidsynth -ni -F out.wav -r 44100 FluidR3_GM.sf2 in.mid`. The ground truth is the MIDI beat times, each render
aligned by a probe: the same tempo map with a wood-block click on every beat, rendered the same way; the onset of
every click is measured and the beat is put there (FluidSynth plays 3–5 ms after the MIDI time, and every tempo
event adds a little drift: ../../shared/guides/beats.md).

The corpus: steady grooves from 72 to 176 BPM (ballad, hip-hop and funk syncopation, rock, shuffle, four on the
floor, half-time, jazz swing, punk; rock played with a drummer's timing, rock with a fill every fourth bar, a piano
and bass without drums, a waltz in 3/4), a tempo step from 100 to 128 BPM, a ramp from 90 to 140 BPM (one tempo event
a beat), a 4-bar break (drums and bass stop, the pad goes on), and negatives that have no beat: a sustained pad,
pink noise, silence and, given `--speech`, a recording of speech.

Made once into CACHE_DIR/corpus-HASH (HASH: of this file and FluidSynth's version, so a changed recipe makes a
new corpus; older ones are removed), two runs at once take turns (a lock in CACHE_DIR). It holds NAME.wav for
every item and corpus.json: per item its kind (groove, step, ramp, break, negative), the beat times in seconds,
the place of each beat in its bar (1…4) and, where there is one, the time of the step, the span of the ramp, of
the break and of the 4 bars after it. Prints the folder as its last line.
"""
import fcntl
import hashlib
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import wave

import mido
import numpy as np

SOUNDFONT = "/usr/share/sounds/sf2/FluidR3_GM.sf2"
RATE = 44100
TICKS = 480  # per quarter note
DRUMS = 9  # MIDI channel 10

# General MIDI drum notes.
KICK, SIDE_STICK, SNARE, CLAP, CLOSED_HAT, PEDAL_HAT, OPEN_HAT, CRASH, RIDE, WOOD_BLOCK = 36, 37, 38, 39, 42, 44, 46, 49, 51, 76
LOW_TOM, MID_TOM, HIGH_TOM = 45, 47, 50
# General MIDI programs (0-based).
PIANO, ELECTRIC_PIANO, ACOUSTIC_BASS, FINGER_BASS, SYNTH_BASS, STRINGS, WARM_PAD = 0, 4, 32, 33, 38, 48, 89

# The mix, as MIDI channel volume (CC 7; FluidSynth's gain is 40·log10(volume / 127) dB): drums forward, the bass
# 4 dB and the chords and pads 7 dB beneath them, as a produced record has them (rendered at equal volume the pad
# and the bass would be louder than the drums).
MIX = {"drums": 127, "bass": 100, "chords": 85, "pad": 85, "strings": 85, "click": 127}

# Chord roots of a four-bar progression (I vi IV V in C), MIDI notes of the bass, and the chords' notes.
ROOTS = [36, 33, 41, 43]
CHORDS = [[60, 64, 67], [57, 60, 64], [53, 57, 60], [55, 59, 62]]


class CorpusError(Exception):
    pass


# A groove: per drum, a bar of 16 steps ('x' a hit, 'o' a ghost note, '.' none); the bass as steps too (its note
# is the bar's root; 'f' the fifth); how the chords play ('pad': held a bar; 'stabs': on the steps given); swing
# (the share of a pair of steps at which the second one falls: 0.5 straight, 2/3 triplet swing) and at which
# grid it applies (8: off-beat eighths, 16: off-beat sixteenths).
GROOVES = {
    "ballad": dict(drums={KICK: "x.........x.....", SNARE: "....x.......x...", CLOSED_HAT: "xoxoxoxoxoxoxoxo"},
                   bass="x.......x.......", chords="pad", swing=0.5),
    "hiphop": dict(drums={KICK: "x......x..x....o", SNARE: "....x.......x...", CLOSED_HAT: "x.x.x.x.x.x.x.x."},
                   bass="x......x..x.....", chords="pad", swing=0.58, swing_grid=16),
    "funk": dict(drums={KICK: "x..x..x...x..x..", SNARE: "....x..o.o..x..o", CLOSED_HAT: "xoxoxoxoxoxoxoxo"},
                 bass="x..x..x.f.x..x..", chords="stabs", stabs="...x..x....x..x.", swing=0.5),
    "rock": dict(drums={KICK: "x.......x.x.....", SNARE: "....x.......x...", CLOSED_HAT: "x.x.x.x.x.x.x.x."},
                 bass="x.x.x.x.x.x.x.x.", chords="pad", swing=0.5),
    "shuffle": dict(drums={KICK: "x.......x.......", SNARE: "....x.......x...", CLOSED_HAT: "x.x.x.x.x.x.x.x."},
                    bass="x.x.f.f.x.x.f.f.", chords="stabs", stabs="..x...x...x...x.", swing=2 / 3),
    "four-on-the-floor": dict(drums={KICK: "x...x...x...x...", CLAP: "....x.......x...", OPEN_HAT: "..x...x...x...x.",
                                     CLOSED_HAT: "o.o.o.o.o.o.o.o."},
                              bass="..x...x...x...x.", chords="pad", swing=0.5, bass_program=SYNTH_BASS),
    "half-time": dict(drums={KICK: "x.........x.....", SNARE: "........x.......", CLOSED_HAT: "x.x.x.x.x.x.x.x."},
                      bass="x.........x.....", chords="pad", swing=0.5),
    "jazz-swing": dict(drums={RIDE: "x...x.xx....x.xx", PEDAL_HAT: "....x.......x..."},
                       bass="x...x...x...x...", chords="stabs", stabs="......x.....x...", swing=2 / 3,
                       bass_program=ACOUSTIC_BASS, chord_program=PIANO, walking=True),
    # A drummer's timing (each note off by a Gaussian of 8 ms, the beats annotated on the grid) and a fill in the
    # last two beats of every fourth bar (16th notes on the snare and toms, a crash on the next one).
    "rock-humanized": dict(drums={KICK: "x.......x.x.....", SNARE: "....x.......x...", CLOSED_HAT: "x.x.x.x.x.x.x.x."},
                           bass="x.x.x.x.x.x.x.x.", chords="pad", swing=0.5, humanize=0.008),
    "rock-fills": dict(drums={KICK: "x.......x.x.....", SNARE: "....x.......x...", CLOSED_HAT: "x.x.x.x.x.x.x.x."},
                       bass="x.x.x.x.x.x.x.x.", chords="pad", swing=0.5, fills=True),
    # No drums: a piano's chords on every beat, accented on 1 and 3, an acoustic bass on 1 and 3.
    "piano": dict(drums={}, bass="x.......x.......", chords="stabs", stabs="x...x...x...x...", swing=0.5,
                  bass_program=ACOUSTIC_BASS, chord_program=PIANO),
    "punk": dict(drums={KICK: "x.......x.......", SNARE: "....x.......x...", CLOSED_HAT: "x.x.x.x.x.x.x.x.",
                        CRASH: "x..............."},
                 bass="x.x.x.x.x.x.x.x.", chords="stabs", stabs="x.x.x.x.x.x.x.x.", swing=0.5,
                 chord_program=30),
}

# The steady items: (name, groove, BPM, bars).
STEADY = [
    ("ballad-72", "ballad", 72, 12),
    ("hiphop-88", "hiphop", 88, 14),
    ("funk-98", "funk", 98, 16),
    ("rock-112", "rock", 112, 18),
    ("shuffle-120", "shuffle", 120, 18),
    ("four-on-the-floor-128", "four-on-the-floor", 128, 20),
    ("half-time-140", "half-time", 140, 22),
    ("jazz-swing-160", "jazz-swing", 160, 24),
    ("punk-176", "punk", 176, 26),
    ("rock-humanized-104", "rock-humanized", 104, 18),
    ("rock-fills-116", "rock-fills", 116, 20),
    ("piano-92", "piano", 92, 14),
]
WALTZ = ("waltz-150", 150, 24)  # name, BPM, bars of 3/4
STEP = ("step-100-128", "rock", 100, 128, 8, 12)  # name, groove, BPM before, after, bars before, after
RAMP = ("ramp-90-140", "four-on-the-floor", 90, 140, 2, 16, 4)  # name, groove, from, to, bars before, ramp, after
BREAK = ("break-4-bars-120", "rock", 120, 8, 4, 8)  # name, groove, BPM, bars before, break, after


def rng(name):
    return random.Random(hashlib.sha256(name.encode()).digest())


class Song:
    """A MIDI file in the making: a tempo map in track 0 and notes per track, in ticks."""

    def __init__(self, bars, tempo_at_beat, beats_per_bar=4):
        self.bars = bars
        self.beats_per_bar = beats_per_bar
        self.beats = beats_per_bar * bars
        # Tempo per beat (microseconds per quarter note, as MIDI stores it): one event wherever it changes.
        self.tempi = [mido.bpm2tempo(tempo_at_beat(b)) for b in range(self.beats)]
        self.tracks = {}

    def note(self, track, channel, program, beat, length, note, velocity):
        events = self.tracks.setdefault(track, (channel, program, []))[2]
        start = round(beat * TICKS)
        end = max(start + 1, round((beat + length) * TICKS))
        events.append((start, 1, mido.Message("note_on", channel=channel, note=note, velocity=velocity)))
        events.append((end, 0, mido.Message("note_off", channel=channel, note=note, velocity=0)))

    def beat_times(self):
        """Seconds of every beat, as the tempo map puts them (integer microseconds per quarter)."""
        times, t = [], 0.0
        for tempo in self.tempi:
            times.append(t)
            t += tempo / 1e6
        return times

    def midi(self):
        song = mido.MidiFile(type=1, ticks_per_beat=TICKS)
        conductor = mido.MidiTrack()
        conductor.append(mido.MetaMessage("time_signature", numerator=self.beats_per_bar, denominator=4, time=0))
        previous, last_tick = None, 0
        for beat, tempo in enumerate(self.tempi):
            if tempo != previous:
                tick = beat * TICKS
                conductor.append(mido.MetaMessage("set_tempo", tempo=tempo, time=tick - last_tick))
                last_tick, previous = tick, tempo
        conductor.append(mido.MetaMessage("end_of_track", time=self.beats * TICKS - last_tick))
        song.tracks.append(conductor)
        for name, (channel, program, events) in self.tracks.items():
            track = mido.MidiTrack()
            track.append(mido.MetaMessage("track_name", name=name, time=0))
            track.append(mido.Message("control_change", channel=channel, control=7, value=MIX[name], time=0))
            if channel != DRUMS:
                track.append(mido.Message("program_change", channel=channel, program=program, time=0))
            last = 0
            for tick, _, message in sorted(events, key=lambda e: (e[0], e[1])):
                track.append(message.copy(time=tick - last))
                last = tick
            song.tracks.append(track)
        return song


def step_position(step, swing, grid):
    """The place of 16th step `step` (0…15) in its bar, in beats, with swing: at grid 8 the off-beat eighth falls
    at `swing` of the beat (0.5 straight, 2/3 triplet swing); at grid 16 the off-beat 16th at `swing` of the eighth."""
    beat, within = divmod(step, 4)
    if grid == 8:
        places = (0, swing / 2, swing, swing + (1 - swing) / 2)
    else:
        places = (0, swing / 2, 0.5, 0.5 + swing / 2)
    return beat + places[within]


def add_groove(song, groove_name, bars, name, play_drums=lambda bar: True, play_bass=lambda bar: True, bpm=120):
    """Writes `bars` bars of the groove: drums, bass and chords (`bpm` sets the humanised timing, in seconds)."""
    groove = GROOVES[groove_name]
    random_velocity = rng(name)
    random_timing = rng(name + " timing")
    spread = groove.get("humanize", 0) * bpm / 60  # beats
    swing = groove.get("swing", 0.5)
    grid = groove.get("swing_grid", 8)
    bass_program = groove.get("bass_program", FINGER_BASS)
    chord_program = groove.get("chord_program", WARM_PAD if groove["chords"] == "pad" else ELECTRIC_PIANO)

    def at(bar, step):
        offset = random_timing.gauss(0, spread) if spread else 0
        return max(0, 4 * bar + step_position(step, swing, grid) + offset)

    for bar in range(bars):
        root, chord = ROOTS[bar % 4], CHORDS[bar % 4]
        fill = groove.get("fills") and bar % 4 == 3
        if play_drums(bar):
            for drum, steps in groove["drums"].items():
                for step, mark in enumerate(steps):
                    if mark == "." or (fill and step >= 8 and drum != KICK):
                        continue
                    base = 100 if mark == "x" else 55
                    accent = 12 if step % 4 == 0 else 0
                    velocity = min(127, base + accent + random_velocity.randint(-8, 8))
                    song.note("drums", DRUMS, 0, at(bar, step), 0.1, drum, velocity)
            if fill:
                for step, drum in zip(range(8, 16), [SNARE, SNARE, HIGH_TOM, HIGH_TOM, MID_TOM, MID_TOM, LOW_TOM, LOW_TOM]):
                    song.note("drums", DRUMS, 0, at(bar, step), 0.1, drum, 96 + random_velocity.randint(-8, 8))
            if groove.get("fills") and bar % 4 == 0 and bar > 0:
                song.note("drums", DRUMS, 0, at(bar, 0), 0.1, CRASH, 110)
        if play_bass(bar):
            if groove.get("walking"):
                scale = [0, 2, 4, 5, 7, 9, 11, 12]
                for beat in range(4):
                    note = root + 12 + scale[random_velocity.randint(0, 7)] - (12 if beat == 0 else 0)
                    song.note("bass", 0, bass_program, 4 * bar + beat, 0.9, root + 12 if beat == 0 else note,
                              92 + random_velocity.randint(-6, 6))
            else:
                for step, mark in enumerate(groove["bass"]):
                    if mark == ".":
                        continue
                    note = root + (7 if mark == "f" else 0)
                    song.note("bass", 0, bass_program, at(bar, step), 0.22, note, 96 + random_velocity.randint(-6, 6))
        if groove["chords"] == "pad":
            for note in chord:
                song.note("chords", 1, chord_program, 4 * bar, 4, note, 70)
        else:
            for step, mark in enumerate(groove["stabs"]):
                if mark == "x":
                    for note in chord:
                        song.note("chords", 1, chord_program, at(bar, step), 0.2, note, 78)


def add_waltz(song, bars, name):
    """3/4: the bass on 1, the piano's chords on 2 and 3, a soft hi-hat on every beat."""
    random_velocity = rng(name)
    for bar in range(bars):
        root, chord = ROOTS[bar % 4], CHORDS[bar % 4]
        first = 3 * bar
        song.note("bass", 0, ACOUSTIC_BASS, first, 0.9, root, 100 + random_velocity.randint(-6, 6))
        for beat in (1, 2):
            for note in chord:
                song.note("chords", 1, PIANO, first + beat, 0.4, note, 70 + random_velocity.randint(-6, 6))
        for beat in range(3):
            song.note("drums", DRUMS, 0, first + beat, 0.1, PEDAL_HAT if beat else CLOSED_HAT,
                      80 + random_velocity.randint(-8, 8))


def probe(song):
    """The same tempo map with a wood-block click on every beat and nothing else."""
    click = Song(song.bars, lambda b: 120, song.beats_per_bar)
    click.tempi = list(song.tempi)
    for beat in range(song.beats):
        click.note("click", DRUMS, 0, beat, 0.05, WOOD_BLOCK, 120)
    return click


def render(song, wav, work):
    mid = os.path.join(work, os.path.basename(wav) + ".mid")
    song.midi().save(mid)
    try:
        subprocess.run(["fluidsynth", "-ni", "-g", "0.5", "-F", wav, "-r", str(RATE), SOUNDFONT, mid],
                       check=True, capture_output=True, text=True)
    except subprocess.CalledProcessError as error:
        raise CorpusError(f"fluidsynth failed on {mid}: {error.stderr.strip()[-400:]}") from error


def read_mono(path):
    with wave.open(path) as w:
        if w.getsampwidth() != 2:
            raise CorpusError(f"{path}: {8 * w.getsampwidth()}-bit samples, expected 16")
        data = np.frombuffer(w.readframes(w.getnframes()), dtype="<i2").astype(float) / 32768
        return data.reshape(-1, w.getnchannels()).mean(axis=1), w.getframerate()


def write_wav(path, samples):
    data = (np.clip(samples, -1, 1) * 32767).astype("<i2")
    with wave.open(path, "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(RATE)
        w.writeframes(data.tobytes())


def click_onsets(path, expected):
    """The onset of the click nearest each expected beat time: the first sample above a fifth of the click's peak
    within [t − 20 ms, t + 60 ms]."""
    samples, rate = read_mono(path)
    onsets = []
    for t in expected:
        start, end = int((t - 0.02) * rate), int((t + 0.06) * rate)
        window = np.abs(samples[max(0, start):end])
        if len(window) == 0 or window.max() < 1e-3:
            raise CorpusError(f"{path}: no click near {t:.3f} s")
        first = int(np.argmax(window >= 0.2 * window.max()))
        onsets.append((max(0, start) + first) / rate)
    return onsets


def aligned_beats(song, name, work):
    """The beat times of `song` as FluidSynth renders them, measured on its probe (seconds)."""
    midi_times = song.beat_times()
    probe_wav = os.path.join(work, name + "-probe.wav")
    render(probe(song), probe_wav, work)
    measured = click_onsets(probe_wav, midi_times)
    offsets = np.array(measured) - np.array(midi_times)
    if np.abs(offsets).max() > 0.03:
        raise CorpusError(f"{name}: the probe's clicks lie up to {1000 * np.abs(offsets).max():.0f} ms off the MIDI "
                          "beats (expected a few ms): check FluidSynth and the sound font")
    return [round(t, 5) for t in measured], float(np.median(offsets)), float(offsets.max() - offsets.min())


def bar_places(count, beats_per_bar=4):
    return [1 + b % beats_per_bar for b in range(count)]


def make_items():
    """(name, kind, Song or None, extra facts), every item of the corpus."""
    items = []
    for name, groove, bpm, bars in STEADY:
        song = Song(bars, lambda b, bpm=bpm: bpm)
        add_groove(song, groove, bars, name, bpm=bpm)
        items.append((name, "groove", song, {"bpm": bpm}))
    name, bpm, bars = WALTZ
    song = Song(bars, lambda b: bpm, beats_per_bar=3)
    add_waltz(song, bars, name)
    items.append((name, "groove", song, {"bpm": bpm, "beats_per_bar": 3}))

    name, groove, before, after, bars_before, bars_after = STEP
    bars = bars_before + bars_after
    song = Song(bars, lambda b: before if b < 4 * bars_before else after)
    add_groove(song, groove, bars, name)
    items.append((name, "step", song, {"bpm": [before, after], "step_beat": 4 * bars_before}))

    name, groove, start, end, bars_before, ramp_bars, bars_after = RAMP
    bars = bars_before + ramp_bars + bars_after
    first, last = 4 * bars_before, 4 * (bars_before + ramp_bars)

    def ramp(b):
        if b < first:
            return start
        if b >= last:
            return end
        return start + (end - start) * (b - first) / (last - first)

    song = Song(bars, ramp)
    add_groove(song, groove, bars, name)
    items.append((name, "ramp", song, {"bpm": [start, end], "ramp_beats": [first, last]}))

    name, groove, bpm, bars_before, break_bars, bars_after = BREAK
    bars = bars_before + break_bars + bars_after
    in_break = range(bars_before, bars_before + break_bars)
    song = Song(bars, lambda b: bpm)
    add_groove(song, groove, bars, name, play_drums=lambda bar: bar not in in_break,
               play_bass=lambda bar: bar not in in_break)
    items.append((name, "break", song, {"bpm": bpm, "break_beats": [4 * bars_before, 4 * (bars_before + break_bars)]}))

    # A sustained pad: chords held for uneven spans (no pulse), strings beneath.
    pad = Song(1, lambda b: 120)
    spans, beat, random_span = [], 0.0, rng("pad")
    while beat < 60:
        length = random_span.choice([5.5, 6.25, 7.0, 8.5, 9.75])
        spans.append((beat, length))
        beat += length
    pad.beats = int(beat) + 4
    pad.tempi = [mido.bpm2tempo(120)] * pad.beats
    for index, (start_beat, length) in enumerate(spans):
        for note in CHORDS[index % 4]:
            pad.note("pad", 1, WARM_PAD, start_beat, length + 0.5, note, 70)
            pad.note("strings", 2, STRINGS, start_beat + 0.3, length, note - 12, 58)
    items.append(("pad", "negative", pad, {}))
    items.append(("pink-noise", "negative", None, {}))
    items.append(("silence", "negative", None, {}))
    return items


def pink_noise(seconds, seed=7):
    """Pink noise (1/f power) at −20 dBFS RMS, from white noise shaped in the frequency domain."""
    count = int(seconds * RATE)
    spectrum = np.fft.rfft(np.random.default_rng(seed).standard_normal(count))
    frequencies = np.fft.rfftfreq(count, 1 / RATE)
    spectrum[1:] /= np.sqrt(frequencies[1:])
    spectrum[0] = 0
    noise = np.fft.irfft(spectrum, count)
    return noise / np.sqrt(np.mean(noise ** 2)) * 0.1


def recipe_hash():
    with open(__file__, "rb") as f:
        source = f.read()
    version = subprocess.run(["fluidsynth", "--version"], capture_output=True, text=True).stdout.splitlines()[:1]
    return hashlib.sha256(source + "".join(version).encode()).hexdigest()[:12]


def build(cache, speech=None):
    for tool, package in (("fluidsynth", "fluidsynth"),):
        if shutil.which(tool) is None:
            raise CorpusError(f"{tool} is missing: sudo apt-get install {package} fluid-soundfont-gm")
    if not os.path.exists(SOUNDFONT):
        raise CorpusError(f"{SOUNDFONT} is missing: sudo apt-get install fluid-soundfont-gm")
    os.makedirs(cache, exist_ok=True)
    folder = os.path.join(cache, "corpus-" + recipe_hash())
    with open(os.path.join(cache, "corpus.lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        manifest = os.path.join(folder, "corpus.json")
        if os.path.exists(manifest):
            with open(manifest) as f:
                has_speech = any(item["name"] == "speech" for item in json.load(f)["items"])
            if has_speech or not speech:
                return folder
        for old in os.listdir(cache):
            if old.startswith("corpus-") and old != os.path.basename(folder):
                shutil.rmtree(os.path.join(cache, old), ignore_errors=True)
        partial = folder + ".partial"
        shutil.rmtree(partial, ignore_errors=True)
        os.makedirs(partial)
        entries = []
        with tempfile.TemporaryDirectory() as work:
            for name, kind, song, facts in make_items():
                wav = os.path.join(partial, name + ".wav")
                entry = {"name": name, "kind": kind, **facts}
                if song is not None:
                    print(f"beat corpus: rendering {name}", file=sys.stderr)
                    render(song, wav, work)
                    if kind != "negative":
                        beats, offset, spread = aligned_beats(song, name, work)
                        entry.update(beats=beats, places=bar_places(len(beats), song.beats_per_bar),
                                     render_offset=round(offset, 5),
                                     render_drift=round(spread, 5))
                elif name == "pink-noise":
                    write_wav(wav, pink_noise(30))
                elif name == "silence":
                    write_wav(wav, np.zeros(30 * RATE))
                entry.setdefault("beats", [])
                beats = entry["beats"]
                if "step_beat" in entry:
                    entry["step_time"] = beats[entry["step_beat"]]
                if "ramp_beats" in entry:
                    entry["ramp"] = [beats[entry["ramp_beats"][0]], beats[entry["ramp_beats"][1]]]
                if "break_beats" in entry:
                    first, last = entry["break_beats"]
                    entry["break"] = [beats[first], beats[last]]
                    entry["after_break"] = [beats[last], beats[min(len(beats) - 1, last + 16)]]
                entries.append(entry)
            if speech:
                shutil.copyfile(speech, os.path.join(partial, "speech.wav"))
                entries.append({"name": "speech", "kind": "negative", "beats": []})
        with open(os.path.join(partial, "corpus.json"), "w") as f:
            json.dump({"recipe": os.path.basename(folder), "items": entries}, f, indent=1)
        shutil.rmtree(folder, ignore_errors=True)
        os.rename(partial, folder)
    return folder


def main():
    arguments = sys.argv[1:]
    if not arguments or arguments[0].startswith("--"):
        print("usage: beat_corpus.py CACHE_DIR [--speech WAV]", file=sys.stderr)
        sys.exit(2)
    speech = arguments[arguments.index("--speech") + 1] if "--speech" in arguments else None
    try:
        print(build(arguments[0], speech))
    except CorpusError as error:
        print(f"beat corpus: {error}", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
