"""What a person sees of a light organ on recorded music, as numbers.

A lamp's level 0…255 becomes luminance Y = (level / 255) ** 2.2 (the receiver's PWM gamma) and
perceived lightness L* = CIE 1976 lightness of Y (0…100). Per band:
- swing: p90 − p10 of L* over the frames (a pulse needs ≥ 60);
- dark: the share of frames with L* < 20; full: the share with Y ≥ 0.9;
- onset F-measure: the lamp's flashes against an independent onset detector (aubio's `aubioonset`,
  its default method and threshold) run on that band of the audio (sox band filters at the
  crossovers). A flash is a rise of ≥ 15 L* within 60 ms; it matches an onset when it comes
  20 ms before to 70 ms after it, each flash and onset matched at most once.

Frames are CSV rows `t_s,bass,mid,treble` (t_s = audio time of the last sample the frame saw), as
`lightorgan analyze` writes them. Needs numpy, sox and aubio-tools.
"""
import csv
import io
import os
import subprocess

import numpy as np

BANDS = ("bass", "mid", "treble")
#: sox effects that cut a band out of the audio, at our crossovers (250 Hz and 4 kHz).
BAND_FILTERS = {"bass": ["sinc", "-250"], "mid": ["sinc", "250-4000"], "treble": ["sinc", "4000"]}
FLASH_RISE = 15.0  # L*
FLASH_WINDOW = 0.060  # s
MATCH_EARLY, MATCH_LATE = 0.020, 0.070  # s: a flash may lead an onset by 20 ms and lag it by 70 ms
#: A band counts as having onsets when the detector finds at least this many per 30 s.
MINIMUM_ONSETS = 8


def read_frames(text):
    """CSV text → (times in s, levels as an N×3 array 0…255)."""
    rows = list(csv.DictReader(io.StringIO(text)))
    times = np.array([float(r["t_s"]) for r in rows])
    levels = np.array([[int(r[b]) for b in BANDS] for r in rows], dtype=float)
    return times, levels


def lightness(levels):
    """Levels 0…255 → CIE L* 0…100 of the lamp's luminance after gamma 2.2."""
    y = (np.asarray(levels, dtype=float) / 255.0) ** 2.2
    return np.where(y > 216 / 24389, 116 * np.cbrt(y) - 16, y * 24389 / 27)


def flashes(times, lstar):
    """Times of the lamp's flashes: the first frame of each run of frames whose L* is ≥ 15 above
    the lowest L* of the preceding 60 ms."""
    result = []
    start = 0
    rising = False
    for i in range(len(times)):
        while times[start] < times[i] - FLASH_WINDOW:
            start += 1
        now = lstar[i] - lstar[start:i + 1].min() >= FLASH_RISE
        if now and not rising:
            result.append(times[i])
        rising = now
    return np.array(result)


def match(flash_times, onset_times):
    """Greedy one-to-one matching in time order: (matched, flashes, onsets)."""
    used = np.zeros(len(flash_times), dtype=bool)
    matched = 0
    for onset in onset_times:
        candidates = np.where(~used & (flash_times >= onset - MATCH_EARLY) & (flash_times <= onset + MATCH_LATE))[0]
        if len(candidates):
            used[candidates[0]] = True
            matched += 1
    return matched, len(flash_times), len(onset_times)


def f_measure(matched, n_flashes, n_onsets):
    if n_flashes == 0 or n_onsets == 0:
        return 0.0
    precision, recall = matched / n_flashes, matched / n_onsets
    return 0.0 if matched == 0 else 2 * precision * recall / (precision + recall)


def band_onsets(wav, band, cache_dir):
    """Onset times (s) of one band of `wav`, by aubioonset on the band-filtered audio; cached."""
    os.makedirs(cache_dir, exist_ok=True)
    stem = os.path.splitext(os.path.basename(wav))[0]
    cached = os.path.join(cache_dir, f"{stem}.{band}.onsets")
    if os.path.exists(cached) and os.path.getmtime(cached) >= os.path.getmtime(wav):
        with open(cached) as f:
            return np.array([float(x) for x in f.read().split()])
    filtered = os.path.join(cache_dir, f"{stem}.{band}.wav")
    # Normalised to a −3 dBFS peak: the reference does not depend on how loud the recording is.
    subprocess.run(["sox", "-D", wav, "-c", "1", filtered, *BAND_FILTERS[band], "gain", "-n", "-3"], check=True,
                   stderr=subprocess.DEVNULL)
    text = subprocess.run(["aubioonset", "-i", filtered], check=True, capture_output=True, text=True).stdout
    os.remove(filtered)
    with open(cached + ".tmp", "w") as f:
        f.write(text)
    os.replace(cached + ".tmp", cached)
    return np.array([float(x) for x in text.split()])


def band_figures(times, levels, onsets_by_band):
    """Per band: dict of swing, dark, full, f, precision, recall, flashes, onsets."""
    figures = {}
    for index, band in enumerate(BANDS):
        lstar = lightness(levels[:, index])
        y = (levels[:, index] / 255.0) ** 2.2
        found = flashes(times, lstar)
        onsets = onsets_by_band[band]
        matched, n_flashes, n_onsets = match(found, onsets)
        figures[band] = {
            "swing": float(np.percentile(lstar, 90) - np.percentile(lstar, 10)),
            "dark": float(np.mean(lstar < 20)),
            "full": float(np.mean(y >= 0.9)),
            "f": f_measure(matched, n_flashes, n_onsets),
            "precision": matched / n_flashes if n_flashes else 0.0,
            "recall": matched / n_onsets if n_onsets else 0.0,
            "flashes": n_flashes,
            "onsets": n_onsets,
            "has_onsets": n_onsets * 30.0 / max(times[-1] - times[0], 1e-9) >= MINIMUM_ONSETS,
        }
    return figures
