"""The signals the own-sound and Snapcast tests play (raw S16LE 44.1 kHz stereo, and WAV): the fixture `signals`,
made once per module (a pytest plugin of conftest.py)."""
import array
import math
import random
import struct

import pytest

RATE = 44100
BANDS = {"bass": 60, "mid": 1000, "treble": 8000}


def tone(frequency, seconds, amplitude=0.5):
    """Mono samples of a sine with 5 ms ramps at both ends (no click to light the other bands)."""
    count, ramp = int(RATE * seconds), int(RATE * 0.005)
    return [amplitude * 32767 * math.sin(2 * math.pi * frequency * n / RATE)
            * min(1.0, n / ramp, (count - 1 - n) / ramp) for n in range(count)]


def silence(seconds):
    return [0.0] * int(RATE * seconds)


def groove(seconds, bpm=120):
    """Mono samples of a drum groove at `bpm`: a kick (a 60 Hz sine falling over 0.15 s, louder on the one) on every
    beat, a 1 kHz snare on beats 2 and 4, an 8 kHz hat on every off-beat; a beat the tracker can hold."""
    mono = silence(seconds)
    period = 60 / bpm

    def hit(at, frequency, length, amplitude):
        start = int(at * RATE)
        for n in range(min(int(length * RATE), len(mono) - start)):
            mono[start + n] += amplitude * 32767 * math.exp(-n / (length * RATE / 4)) * math.sin(
                2 * math.pi * frequency * n / RATE)
    beat = 0
    while beat * period < seconds - 0.2:
        at = beat * period
        hit(at, 60, 0.15, 0.6 if beat % 4 == 0 else 0.45)
        if beat % 4 in (1, 3):
            hit(at, 1000, 0.08, 0.25)
        hit(at + period / 2, 8000, 0.03, 0.1)
        beat += 1
    return mono


def stereo_bytes(mono):
    return array.array("h", (int(v) for v in mono for _ in (0, 1))).tobytes()


def wav_bytes(pcm):
    """A 44.1 kHz stereo 16-bit WAV of raw `pcm`."""
    return (b"RIFF" + struct.pack("<I", 36 + len(pcm)) + b"WAVEfmt " + struct.pack("<IHHIIHH", 16, 1, 2, RATE,
                                                                                    RATE * 4, 4, 16)
            + b"data" + struct.pack("<I", len(pcm)) + pcm)


@pytest.fixture(scope="module")
def signals(tmp_path_factory):
    """tones.raw/.wav: a chord of the three tones for 1 s (every band's gain learns a level), 1.5 s of silence,
    then 0.5 s each of 60 Hz, 1 kHz and 8 kHz, 2 s apart (starts at 2.5, 4.5, 6.5 s), 1 s of silence at the
    end (8 s in all); steady.raw: a 1 kHz tone for 3 s; bursts.raw/.wav: 250 ms
    bursts of 1 kHz at random gaps of 0.45–0.75 s for `seconds`, and their starts (s); groove.raw/.wav: a
    120 BPM groove for 10 s, 6 s of silence, the groove for 4 s."""
    folder = tmp_path_factory.mktemp("signals")
    chord = [sum(parts) for parts in zip(*(tone(f, 1.0, 0.25) for f in BANDS.values()))]
    tones = (chord + silence(1.5) + tone(60, 0.5) + silence(1.5) + tone(1000, 0.5) + silence(1.5) + tone(8000, 0.5)
             + silence(1.0))
    made = {"tones.raw": stereo_bytes(tones), "steady.raw": stereo_bytes(tone(1000, 3.0, 0.3))}
    generator = random.Random(49)

    def bursts(seconds):
        starts, at, mono = [], 0.5, silence(0.5)
        burst = tone(1000, 0.25, 0.4)
        while at < seconds - 1:
            starts.append(at)
            gap = generator.uniform(0.45, 0.75)
            mono += burst + silence(gap)
            at += 0.25 + gap
        return mono + silence(0.5), starts
    short, short_starts = bursts(16)
    long, long_starts = bursts(62)
    made["bursts.raw"], made["minute.raw"] = stereo_bytes(short), stereo_bytes(long)
    # groove.raw: 10 s of a 120 BPM groove, 6 s of silence, 4 s of the groove again.
    made["groove.raw"] = stereo_bytes(groove(10) + silence(6) + groove(4))
    made["tones.wav"], made["bursts.wav"] = wav_bytes(made["tones.raw"]), wav_bytes(made["bursts.raw"])
    made["groove.wav"] = wav_bytes(made["groove.raw"])
    for name, data in made.items():
        (folder / name).write_bytes(data)
    paths = {name: str(folder / name) for name in made}
    paths["bursts starts"], paths["minute starts"] = short_starts, long_starts
    return paths
