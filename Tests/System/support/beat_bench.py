"""The beat benchmark: our live beat tracker beside LedFx's and librosa's, scored with mir_eval on the beat corpus.

Usage: beat_bench.py LIGHTORGAN CORPUS_DIR [--check] [--systems ours,ledfx,librosa] [ITEM...]

For every item of the corpus (scripts/beat-corpus; or those whose name contains one of ITEM) it runs, in one run:
- ours: the release `lightorgan analyze FILE` (100 frames/s); a beat is the `t_s` of a frame whose `beat` column
  is not 0 (the frame that announced it), its place in the bar that column, the tempo the `bpm` column;
- ledfx: LedFx 2.2.1's tracker as LedFx uses it: PyPI aubio-ledfx's `aubio.tempo("default", 4096, 500, 30000)`
  fed the file, mixed to mono and resampled to 30 kHz, hop by hop; a beat is the end of the hop for which it
  answered 1 (what `bpm_beat_now()` reports), the tempo `get_bpm()`;
- librosa: `librosa.beat.beat_track` on the whole file (offline, not causal: an upper reference).

Figures (mir_eval 0.8.2; ±70 ms; the first 5 s trimmed as mir_eval.beat.evaluate does): F-measure, CMLt and
AMLt per item; the lock time after the tempo step (seconds from the step to the first of four consecutive
reference beats matched within ±70 ms with no extra beat among them; the time of the fourth is shown beside it); F through the ramp (reference and
announced beats within its span); F through the 4-bar break and over the 4 bars after it (the phase held); the
share of announced beats placed in the bar right (ours: `beat` = the reference's place 1…4); and for the
negatives the beats reported and the highest tempo reported.

`--check` judges the goals (issue 69) and ends with "beats: N passed, N failed": overall (mean over the music
items) F ≥ 0.75 and CMLt ≥ 0.55 and both ahead of each peer; locked within 2 s of the step; F ≥ 0.8 through the
ramp; F ≥ 0.8 through the break and over the 4 bars after it; no beat and BPM 0 on every negative.
"""
import argparse
import csv
import io
import json
import os
import subprocess
import sys
import wave

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))
import bench_checks  # noqa: E402

GOAL_F, GOAL_CMLT, GOAL_LOCK, GOAL_RAMP, GOAL_BREAK = 0.75, 0.55, 2.0, 0.8, 0.8
WINDOW = 0.07  # s, mir_eval's F-measure window
SYSTEMS = ("ours", "ledfx", "librosa")


def read_mono(path):
    with wave.open(path) as w:
        width, channels, rate = w.getsampwidth(), w.getnchannels(), w.getframerate()
        raw = w.readframes(w.getnframes())
    if width != 2:
        raise SystemExit(f"{path}: {8 * width}-bit samples; the corpus is 16-bit")
    data = np.frombuffer(raw, dtype="<i2").astype(np.float32) / 32768
    return data.reshape(-1, channels).mean(axis=1), rate


def ours(lightorgan, wav):
    """(announced beat times, their places in the bar, [(t, bpm)]) from `lightorgan analyze`."""
    text = subprocess.run([lightorgan, "analyze", wav], check=True, capture_output=True, text=True).stdout
    rows = list(csv.DictReader(io.StringIO(text)))
    beats = [(float(r["t_s"]), int(r["beat"])) for r in rows if int(r["beat"]) > 0]
    tempo = [(float(r["t_s"]), float(r["bpm"])) for r in rows]
    return [t for t, _ in beats], [p for _, p in beats], tempo


def ledfx(wav):
    """LedFx's tracker: aubio tempo "default", fft 4096, hop 500 at 30 kHz, beats as announced."""
    import aubio
    from scipy.signal import resample_poly
    samples, rate = read_mono(wav)
    if rate != 30000:
        divisor = np.gcd(rate, 30000)
        samples = resample_poly(samples, 30000 // divisor, rate // divisor).astype(np.float32)
    hop = 500
    tracker = aubio.tempo("default", 4096, hop, 30000)
    beats, tempo = [], []
    for index in range(len(samples) // hop):
        block = np.ascontiguousarray(samples[index * hop:(index + 1) * hop], dtype=np.float32)
        end = (index + 1) * hop / 30000
        if tracker(block)[0]:
            beats.append(end)
        tempo.append((end, float(tracker.get_bpm())))
    return beats, None, tempo


def librosa_beats(wav):
    import librosa
    samples, rate = librosa.load(wav, sr=22050, mono=True)
    bpm, beats = librosa.beat.beat_track(y=samples, sr=rate, units="time")
    return list(beats), None, [(0.0, float(np.atleast_1d(bpm)[0]))]


def within(times, span, margin=0.0):
    times = np.asarray(times, dtype=float)
    return times[(times >= span[0] - margin) & (times < span[1] + margin)]


def span_f(reference, estimated, span):
    """F-measure of the beats within `span` (announced beats up to one window outside it count)."""
    import mir_eval
    ref, est = within(reference, span), within(estimated, span, WINDOW)
    if len(ref) == 0:
        return float("nan")
    return float(mir_eval.beat.f_measure(ref, est, WINDOW))


def lock_time(reference, estimated, after):
    """(first, fourth): seconds from `after` to the first and to the fourth of the first four consecutive reference
    beats that are each matched within ±70 ms with no other announced beat between them; (inf, inf) when never.
    The lock time is the first: from there on the tracker is on the beat (the fourth only proves it)."""
    reference, estimated = np.asarray(reference), np.asarray(estimated)
    candidates = reference[reference >= after]
    for start in range(len(candidates) - 3):
        run = candidates[start:start + 4]
        if all(np.any(np.abs(estimated - r) <= WINDOW) for r in run):
            among = estimated[(estimated >= run[0] - WINDOW) & (estimated <= run[-1] + WINDOW)]
            if len(among) == 4:
                return float(run[0] - after), float(run[-1] - after)
    return float("inf"), float("inf")


def bar_share(reference, places, estimated, est_places):
    """Share of the announced beats that match a reference beat and name its place in the bar."""
    if not estimated or est_places is None:
        return float("nan")
    reference = np.asarray(reference)
    right = matched = 0
    for t, place in zip(estimated, est_places):
        nearest = int(np.argmin(np.abs(reference - t)))
        if abs(reference[nearest] - t) <= WINDOW:
            matched += 1
            right += place == places[nearest]
    return right / matched if matched else float("nan")


def score(item, beats, places, tempo):
    import mir_eval
    figures = {"beats": len(beats), "bpm": max((b for _, b in tempo), default=0.0)}
    reference = np.asarray(item["beats"])
    if item["kind"] == "negative":
        return figures
    ref, est = mir_eval.beat.trim_beats(reference), mir_eval.beat.trim_beats(np.asarray(beats, dtype=float))
    figures["f"] = float(mir_eval.beat.f_measure(ref, est, WINDOW))
    _, cmlt, _, amlt = mir_eval.beat.continuity(ref, est)
    figures["cmlt"], figures["amlt"] = float(cmlt), float(amlt)
    late = [b for t, b in tempo if t > 5] or [b for _, b in tempo]  # librosa's one tempo is at 0 s
    figures["bpm"] = float(np.median(late)) if late else 0.0
    figures["bar"] = bar_share(item["beats"], item["places"], beats, places)
    if "step_time" in item:
        figures["lock"], figures["lock_proved"] = lock_time(reference, beats, item["step_time"])
    if "ramp" in item:
        figures["ramp_f"] = span_f(reference, beats, item["ramp"])
    if "break" in item:
        figures["break_f"] = span_f(reference, beats, item["break"])
        figures["after_break_f"] = span_f(reference, beats, item["after_break"])
    return figures


def special(item, f):
    if item["kind"] == "negative":
        return f"beats {f['beats']}, BPM up to {f['bpm']:.1f}"
    if "lock" in f:
        return f"locked {f['lock']:.2f} s after the step (the 4th beat in a row at {f['lock_proved']:.2f} s)"
    if "ramp_f" in f:
        return f"F through the ramp {f['ramp_f']:.2f}"
    if "break_f" in f:
        return f"F in the break {f['break_f']:.2f}, 4 bars after {f['after_break_f']:.2f}"
    return ""


def measure(lightorgan, corpus, names=(), systems=SYSTEMS, show=print):
    """{system: [(item, figures)]}; `show` gets the table's lines."""
    with open(os.path.join(corpus, "corpus.json")) as f:
        items = json.load(f)["items"]
    if names:
        items = [i for i in items if any(n in i["name"] for n in names)]
    runs = {"ours": lambda wav: ours(lightorgan, wav), "ledfx": ledfx, "librosa": librosa_beats}
    results = {name: [] for name in systems}
    show(f"{'item':<22} {'system':<8} {'F':>5} {'CMLt':>5} {'AMLt':>5} {'bar':>5} {'BPM':>6}  ")
    for item in items:
        wav = os.path.join(corpus, item["name"] + ".wav")
        for system in systems:
            beats, places, tempo = runs[system](wav)
            figures = score(item, beats, places, tempo)
            results[system].append((item, figures))
            if item["kind"] == "negative":
                cells = f"{'':>5} {'':>5} {'':>5} {'':>5} {'':>6}"
            else:
                bar = f"{figures['bar']:5.2f}" if not np.isnan(figures["bar"]) else f"{'':>5}"
                cells = (f"{figures['f']:5.2f} {figures['cmlt']:5.2f} {figures['amlt']:5.2f} {bar} "
                         f"{figures['bpm']:6.1f}")
            show(f"{item['name'][:22]:<22} {system:<8} {cells}  {special(item, figures)}")
    return results


def overall(rows):
    music = [f for item, f in rows if item["kind"] != "negative"]
    if not music:
        return {}
    return {key: float(np.mean([f[key] for f in music])) for key in ("f", "cmlt", "amlt")}


def summary(results):
    lines = ["overall (mean over the music items, first 5 s trimmed):"]
    for system, rows in results.items():
        o = overall(rows)
        if o:
            lines.append(f"  {system:<8} F {o['f']:.3f}   CMLt {o['cmlt']:.3f}   AMLt {o['amlt']:.3f}")
    return lines


def goals(results):
    """[(name, ok, detail)]: the beat goals, judged on ours."""
    checks = []
    rows = results["ours"]
    o = overall(rows)
    if o:
        checks.append((f"overall F ≥ {GOAL_F}", o["f"] >= GOAL_F, f"{o['f']:.3f}"))
        checks.append((f"overall CMLt ≥ {GOAL_CMLT}", o["cmlt"] >= GOAL_CMLT, f"{o['cmlt']:.3f}"))
        for peer in ("ledfx", "librosa"):
            if peer in results and overall(results[peer]):
                p = overall(results[peer])
                checks.append((f"F ahead of {peer}", o["f"] > p["f"], f"{o['f']:.3f} vs {p['f']:.3f}"))
                checks.append((f"CMLt ahead of {peer}", o["cmlt"] > p["cmlt"], f"{o['cmlt']:.3f} vs {p['cmlt']:.3f}"))
    for item, f in rows:
        name = item["name"]
        if item["kind"] == "negative":
            checks.append((f"{name}: no beat, BPM 0", f["beats"] == 0 and f["bpm"] == 0,
                           f"{f['beats']} beats, BPM up to {f['bpm']:.1f}"))
        if "lock" in f:
            checks.append((f"{name}: locked within {GOAL_LOCK:.0f} s of the step", f["lock"] <= GOAL_LOCK,
                           f"{f['lock']:.2f} s"))
        if "ramp_f" in f:
            checks.append((f"{name}: F ≥ {GOAL_RAMP} through the ramp", f["ramp_f"] >= GOAL_RAMP, f"{f['ramp_f']:.2f}"))
        if "break_f" in f:
            checks.append((f"{name}: phase held, F ≥ {GOAL_BREAK} through the break and the 4 bars after",
                           f["break_f"] >= GOAL_BREAK and f["after_break_f"] >= GOAL_BREAK,
                           f"{f['break_f']:.2f}, {f['after_break_f']:.2f}"))
    return checks


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("lightorgan")
    parser.add_argument("corpus")
    parser.add_argument("items", nargs="*")
    parser.add_argument("--systems", default=",".join(SYSTEMS))
    parser.add_argument("--check", action="store_true")
    args = parser.parse_intermixed_args()
    systems = [s for s in args.systems.split(",") if s]
    unknown = set(systems) - set(SYSTEMS)
    if unknown:
        parser.error(f"unknown system {', '.join(sorted(unknown))}; systems: {', '.join(SYSTEMS)}")
    if args.check and "ours" not in systems:
        parser.error("--check judges ours: keep it in --systems")
    results = measure(args.lightorgan, args.corpus, args.items, systems, show=lambda line: print(line, flush=True))
    print("\n" + "\n".join(summary(results)))
    if not args.check:
        return 0
    return bench_checks.report("beats", goals(results))


if __name__ == "__main__":
    sys.exit(main())
