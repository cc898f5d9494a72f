"""Writes test signals as WAV files, runs `lightorgan analyze --fps 1000` on each, prints the figures.

Usage: analysis_figures.py LIGHTORGAN WORKDIR. Standard library only.
"""
import csv, io, math, random, struct, subprocess, sys, wave

RATE = 44100
lightorgan, work = sys.argv[1], sys.argv[2]


def write(name, samples):
    path = f"{work}/{name}.wav"
    with wave.open(path, "wb") as out:
        out.setnchannels(1)
        out.setsampwidth(2)
        out.setframerate(RATE)
        out.writeframes(b"".join(struct.pack("<h", int(max(-1, min(1, s)) * 32767)) for s in samples))
    return path


def analyse(path, fps=1000):
    text = subprocess.run([lightorgan, "analyze", path, "--fps", str(fps)], check=True, capture_output=True, text=True).stdout
    return [(float(r["t_s"]), int(r["bass"]), int(r["mid"]), int(r["treble"])) for r in csv.DictReader(io.StringIO(text))]


def db(level):
    return 10 ** (level / 20)


def tone(freq, seconds, amplitude=0.5, on=(0, None)):
    end = on[1] if on[1] is not None else seconds
    return [amplitude * math.sin(2 * math.pi * freq * i / RATE) if on[0] <= i / RATE < end else 0.0
            for i in range(int(seconds * RATE))]


def pink(seconds, rms_db, seed=1):
    rng = random.Random(seed)
    b = [0.0] * 7
    out = []
    for _ in range(int(seconds * RATE)):  # Paul Kellet's pink filter
        w = rng.uniform(-1, 1)
        b[0] = 0.99886 * b[0] + w * 0.0555179; b[1] = 0.99332 * b[1] + w * 0.0750759
        b[2] = 0.96900 * b[2] + w * 0.1538520; b[3] = 0.86650 * b[3] + w * 0.3104856
        b[4] = 0.55000 * b[4] + w * 0.5329522; b[5] = -0.7616 * b[5] - w * 0.0168980
        out.append(sum(b) + b[6] + w * 0.5362); b[6] = w * 0.115926
    rms = math.sqrt(sum(x * x for x in out) / len(out))
    return [x * db(rms_db) / rms for x in out]


BANDS = {"bass": 1, "mid": 2, "treble": 3}
print("\nresponse (analyze --fps 1000, t_s = audio time of the last sample in the frame)")
for freq, band in [(1000, "mid"), (60, "bass")]:
    rows = analyse(write(f"burst{freq}", tone(freq, 2.5, on=(1.0, 1.5))))
    col = BANDS[band]
    peak = max(r[col] for r in rows if 1.0 <= r[0] < 1.5)
    rise = next(r[0] for r in rows if r[0] >= 1.0 and r[col] >= peak / 2) - 1.0
    fall = next(r[0] for r in rows if r[0] >= 1.5 and r[col] < peak / 2) - 1.5
    print(f"  {freq:>5} Hz burst at -6 dBFS, {band}: peak {peak}, rise to half {rise * 1000:.1f} ms, "
          f"fall below half {fall * 1000:.1f} ms after the stop")

print("\nband separation (steady tone at -6 dBFS, after the first 0.5 s)")
for freq, band in [(60, "bass"), (1000, "mid"), (8000, "treble")]:
    rows = [r for r in analyse(write(f"tone{freq}", tone(freq, 3)), fps=100) if r[0] >= 0.5]
    own = min(r[BANDS[band]] for r in rows)
    others = {name: max(r[col] for r in rows) for name, col in BANDS.items() if name != band}
    print(f"  {freq:>5} Hz: {band} min {own}; " + ", ".join(f"{k} max {v}" for k, v in others.items()))

print("\nsilence, hiss, pink noise (after the first 0.5 s)")
for name, samples in [("silence", [0.0] * (3 * RATE)),
                      ("white hiss -70 dBFS", [random.Random(2).gauss(0, db(-70)) for _ in range(3 * RATE)]),
                      ("pink noise -20 dBFS", pink(3, -20))]:
    rows = [r for r in analyse(write(name.split()[0], samples), fps=100) if r[0] >= 0.5]
    stats = ", ".join(f"{k} {min(r[c] for r in rows)}…{max(r[c] for r in rows)} (mean {sum(r[c] for r in rows) / len(rows):.0f})"
                      for k, c in BANDS.items())
    print(f"  {name}: {stats}")

print("\nlevel step: pink noise at -10 dBFS for 5 s, then -30 dBFS (mean level per band, 1 s windows)")
rows = analyse(write("step", pink(5, -10, seed=3) + pink(10, -30, seed=4)), fps=100)
for k, c in BANDS.items():
    before = [r[c] for r in rows if 3 <= r[0] < 5]
    target = 0.9 * sum(before) / len(before)
    recovered = next((t for t in [5 + i / 10 for i in range(90)]
                      if sum(r[c] for r in rows if t <= r[0] < t + 1) / 100 >= target), None)
    print(f"  {k}: before {sum(before) / len(before):.0f}; back to 90 % of it "
          + (f"{recovered - 5:.1f} s after the step" if recovered else "not within 9 s"))

print("\nliveliness on synthetic music (share of frames at 0 and at 255, 100 fps, after 1 s)")
def groove(seconds, level_db, quiet):
    rng = random.Random(5)
    out = []
    for i in range(int(seconds * RATE)):
        t = i / RATE
        beat = t % 0.5
        if quiet:  # orchestral-like: slow swells of a chord with a soft low string line
            swell = 0.5 + 0.5 * math.sin(2 * math.pi * 0.3 * t)
            v = swell * (0.3 * math.sin(2 * math.pi * 196 * t) + 0.2 * math.sin(2 * math.pi * 294 * t)
                         + 0.1 * math.sin(2 * math.pi * 587 * t) + 0.05 * math.sin(2 * math.pi * 2349 * t)
                         + 0.02 * math.sin(2 * math.pi * 5274 * t))
            v += 0.3 * (0.5 + 0.5 * math.sin(2 * math.pi * 0.7 * t)) * math.sin(2 * math.pi * 98 * t)
        else:  # electronic: kick, off-beat hat, bass
            v = 0.9 * math.sin(2 * math.pi * (50 * beat + 1.5 * (1 - math.exp(-beat / 0.02)))) * math.exp(-beat / 0.15)
            hat = (t + 0.25) % 0.5
            v += 0.3 * rng.uniform(-1, 1) * math.exp(-hat / 0.03)
            v += 0.3 * math.sin(2 * math.pi * 55 * t) * math.exp(-(t % 0.25) / 0.1)
            v += 0.1 * math.sin(2 * math.pi * 440 * t) * (1 if int(t * 4) % 3 == 0 else 0.2)
        out.append(v)
    peak = max(abs(x) for x in out)
    return [x * db(level_db) / peak for x in out]
for name, level, quiet in [("quiet orchestral-like, peaks -25 dBFS", -25, True), ("loud electronic-like, peaks -1 dBFS", -1, False)]:
    rows = [r for r in analyse(write("music", groove(12, level, quiet)), fps=100) if r[0] >= 1]
    stats = ", ".join(f"{k} {100 * sum(r[c] == 0 for r in rows) / len(rows):.0f} % / {100 * sum(r[c] == 255 for r in rows) / len(rows):.0f} %"
                      for k, c in BANDS.items())
    print(f"  {name}: at 0 / at 255: {stats}")
