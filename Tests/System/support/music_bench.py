"""The music benchmark: how the lamps follow recorded songs, ours side by side with a peer.

Usage: music_bench.py LIGHTORGAN CORPUS_DIR [--peer PEER_DIR] [--responses dance,level] [--check] [TRACK...]

For every WAV of the corpus (or the named tracks) it runs `lightorgan analyze` with each response,
and, given `--peer`, audio-reactive-led-strip's own DSP through scripts/lib/peer_audio_reactive.py,
then prints per track and band the figures of music_metrics.py: swing (p90 − p10 of L*), share of
dark frames (L* < 20), share of frames at ≥ 90 % luminance, onset F-measure (precision, recall).

`goals(results)` gives the goals as named checks (the system tests' test_music.py, and `--check`, which
exits 1 when one fails): every band with onsets swings ≥ 60 L*, the mean onset F is ≥ 0.6, on rhythmic
tracks (every band has onsets) at most 25 % of frames are at ≥ 90 % luminance, and, beside the peer, ours
beats it on both onset F and swing.
"""
import argparse
import os
import subprocess
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))
import bench_checks  # noqa: E402
import music_metrics  # noqa: E402

GOAL_SWING, GOAL_F, GOAL_FULL = 60.0, 0.6, 0.25


def analyse(lightorgan, wav, response):
    environment = dict(os.environ, LIGHTORGAN_ANALYSIS_RESPONSE=response)
    text = subprocess.run([lightorgan, "analyze", wav], check=True, capture_output=True, text=True, env=environment).stdout
    return music_metrics.read_frames(text)


def peer(peer_dir, wav):
    driver = os.path.join(os.path.dirname(__file__), "..", "..", "..", "scripts", "lib", "peer_audio_reactive.py")
    with tempfile.NamedTemporaryFile(suffix=".csv") as out:
        subprocess.run([sys.executable, driver, peer_dir, wav, out.name], check=True, capture_output=True)
        with open(out.name) as f:
            return music_metrics.read_frames(f.read())


def measure(lightorgan, corpus, tracks=(), responses=("dance", "level"), peer_dir=None, show=print):
    """{system: [(track, figures by band)]} for every WAV of `corpus` (or those naming one of `tracks`),
    the first system being ours with the first response; `show` gets the table's lines."""
    wavs = sorted(os.path.join(corpus, name) for name in os.listdir(corpus) if name.endswith(".wav"))
    if tracks:
        wavs = [w for w in wavs if any(t in os.path.basename(w) for t in tracks)]
    onset_cache = os.path.join(corpus, "onsets")
    systems = [(f"ours:{r}", lambda wav, r=r: analyse(lightorgan, wav, r)) for r in responses if r]
    if peer_dir:
        systems.append(("audio-reactive", lambda wav: peer(peer_dir, wav)))

    results = {name: [] for name, _ in systems}
    show(f"{'track':<24} {'system':<15} " + "  ".join(f"{b:>6} sw  dark  full    F (P/R)       " for b in music_metrics.BANDS))
    for wav in wavs:
        track = os.path.splitext(os.path.basename(wav))[0]
        onsets = {band: music_metrics.band_onsets(wav, band, onset_cache) for band in music_metrics.BANDS}
        for name, run in systems:
            times, levels = run(wav)
            figures = music_metrics.band_figures(times, levels, onsets)
            results[name].append((track, figures))
            cells = []
            for band in music_metrics.BANDS:
                f = figures[band]
                mark = " " if f["has_onsets"] else "·"
                cells.append(f"{f['swing']:6.1f}{mark} {f['dark']:4.2f}  {f['full']:4.2f}  {f['f']:4.2f} ({f['precision']:.2f}/{f['recall']:.2f})")
            show(f"{track[:24]:<24} {name:<15} " + "  ".join(cells))
    return results


def summary(results):
    """The summary lines: per system, mean F, swing, dark share, worst full share."""
    lines = ["summary (bands with onsets; · marks a band without: fewer than "
             f"{music_metrics.MINIMUM_ONSETS} per 30 s)"]
    for name, rows in results.items():
        bands = [f for _, figures in rows for f in figures.values() if f["has_onsets"]]
        if not bands:
            continue
        rhythmic = [f for _, figures in rows if all(x["has_onsets"] for x in figures.values()) for f in figures.values()]
        lines.append(f"  {name:<15} mean F {np.mean([f['f'] for f in bands]):.3f}   swing mean {np.mean([f['swing'] for f in bands]):5.1f}"
                     f" min {np.min([f['swing'] for f in bands]):5.1f}   dark {np.mean([f['dark'] for f in bands]):.2f}"
                     f"   full (rhythmic tracks) max {max([f['full'] for f in rhythmic], default=0):.2f}")
    return lines


def goals(results):
    """[(name, ok, detail)]: the music goals judged on our first system's figures."""
    checks = []
    ours = next(iter(results.values()))
    for track, figures in ours:
        for band, f in figures.items():
            if f["has_onsets"]:
                checks.append((f"{track} {band} swings ≥ {GOAL_SWING:.0f} L*", f["swing"] >= GOAL_SWING, f"{f['swing']:.1f}"))
        if all(f["has_onsets"] for f in figures.values()):
            worst = max(f["full"] for f in figures.values())
            checks.append((f"{track}: ≤ {GOAL_FULL:.0%} of frames at full", worst <= GOAL_FULL, f"{worst:.2f}"))
    mean_f = np.mean([f["f"] for _, figures in ours for f in figures.values() if f["has_onsets"]])
    checks.append((f"mean onset F ≥ {GOAL_F}", mean_f >= GOAL_F, f"{mean_f:.3f}"))
    if "audio-reactive" in results:  # side by side: ours must beat it on both swing and onset F
        def means(rows):
            bands = [f for _, figures in rows for f in figures.values() if f["has_onsets"]]
            return np.mean([f["f"] for f in bands]), np.mean([f["swing"] for f in bands])
        (our_f, our_swing), (its_f, its_swing) = means(ours), means(results["audio-reactive"])
        checks.append(("onset F above audio-reactive-led-strip's", our_f > its_f, f"{our_f:.3f} vs {its_f:.3f}"))
        checks.append(("swing above audio-reactive-led-strip's", our_swing > its_swing,
                       f"{our_swing:.1f} vs {its_swing:.1f} L*"))
    return checks


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("lightorgan")
    parser.add_argument("corpus")
    parser.add_argument("tracks", nargs="*")
    parser.add_argument("--peer")
    parser.add_argument("--responses", default="dance,level")
    parser.add_argument("--check", action="store_true")
    args = parser.parse_intermixed_args()
    results = measure(args.lightorgan, args.corpus, args.tracks, args.responses.split(","), args.peer,
                      show=lambda line: print(line, flush=True))
    print("\n" + "\n".join(summary(results)))
    if not args.check:
        return 0
    return bench_checks.report("music", goals(results))


if __name__ == "__main__":
    sys.exit(main())
