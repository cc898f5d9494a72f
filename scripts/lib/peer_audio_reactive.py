#!/usr/bin/env python3
"""Runs a peer, scottlawsonbc/audio-reactive-led-strip, headless on a WAV file and writes what
three lamps standing for its LED strip would show, in the CSV format of `lightorgan analyze`.

Usage: peer_audio_reactive.py [--effect energy|scroll|spectrum] PEER_PYTHON_DIR IN.wav OUT.csv
(OUT.csv may be `-` for stdout). PEER_PYTHON_DIR is the peer's `python/` folder (a checkout of
https://github.com/scottlawsonbc/audio-reactive-led-strip; our repository holds none of its code).
Needs Python 3, numpy and scipy.

How the peer is run
-------------------
Its modules config, dsp, melbank, led, microphone and visualization are imported from
PEER_PYTHON_DIR unmodified. Stubbed, because they need hardware or a screen:
- `pyaudio` (imported by microphone.py; we feed the audio ourselves) and `pyqtgraph` (only the
  GUI uses it; stubbed so that nothing can open a window);
- `led.update` (the strip output) becomes a no-op; we read `led.pixels` after each chunk instead.
No bytecode is written into PEER_PYTHON_DIR.
Config values set, after `import config` and before the other modules are imported (they read
them at import time); everything else keeps the peer's defaults:
- MIC_RATE = the WAV's sample rate (Hz; default 44100),
- FPS = 60 (frames/s; the default, set explicitly),
- USE_GUI = False, DISPLAY_FPS = False (a wall-clock FPS print, meaningless offline),
- DEVICE = 'headless' (not 'esp8266', 'pi' or 'blinkstick', so led.py opens no socket or strip).
N_PIXELS stays 60, N_FFT_BINS 24, MIN_FREQUENCY 200 Hz, MAX_FREQUENCY 12000 Hz, N_ROLLING_HISTORY 2.
numpy's global random generator is seeded with 0 first: the peer fills its rolling audio window
with random numbers of order 1e-16 at import, and the seed makes runs repeatable.
If SciPy no longer has `scipy.ndimage.filters` (deprecated, removed in SciPy 2.0), that name is
aliased to `scipy.ndimage`, which holds the same gaussian_filter1d.

The audio, as its microphone path would deliver it: microphone.py opens a mono 16-bit PyAudio
stream, so the WAV (PCM 8/16/24/32-bit or 32-bit float, any channel count and rate) is mixed to
mono as the mean of its channels, scaled to 16-bit integer units, rounded and clipped to
−32768…32767, and handed over as float32, like `np.frombuffer(…, int16).astype(np.float32)`.
Chunks of `int(MIC_RATE / FPS)` samples (735 at 44.1 kHz) go, in order and none skipped, to
`visualization.microphone_update`, the callback microphone.start_stream calls (live, it would
drop samples when the computer falls behind; offline it never does). A last partial chunk is
not fed. The effect is chosen by setting `visualization.visualization_effect`, as the GUI's
buttons do (the module's default is `visualize_spectrum`; its GUI selects energy at start, and
so does this driver unless told otherwise).

The mapping to three lamps
--------------------------
The peer colours its strip by frequency range: its 24 mel bins are cut in thirds, red = the low
third, green = the middle, blue = the high third, in every effect. So red → bass, green → mid,
blue → treble. After each chunk, `led.pixels` (3 × 60, before any gamma: led.py applies its gamma
table only when sending, and the ESP8266 default does none in software) is clipped to 0…255 and
truncated to integers per pixel, as led.py does before it sends a pixel; a lamp's level is the
mean of its colour over the 60 pixels (what one lamp standing for the whole strip would show),
rounded half up, 0…255. Our metric then applies the same receiver gamma (2.2) to these levels as
to ours. In the energy effect a colour's mean is about 255 × (lit width / half strip), the width
growing with that third's energy; in scroll it is the strip's history of that third's peak; in
spectrum it is a blend of the bins' level and change.

Frequency ranges
----------------
Ours: bass < 250 Hz, mid 250–4000 Hz, treble > 4 kHz. The peer's: a mel filterbank of 24 bins
from MIN_FREQUENCY 200 Hz to MAX_FREQUENCY 12000 Hz, thirds split at about 1.5 kHz and 4.5 kHz
as configured. But its filterbank assumes the first int(MIC_RATE/FPS) FFT bins span 0…MIC_RATE/2,
while its FFT is zero-padded to 2048 points (at 44.1 or 48 kHz), so those bins span less: at
44.1 kHz every frequency is really × 0.717 of its label, i.e. 143 Hz–8.6 kHz in all, split at
about 1.1 kHz and 3.2 kHz (at 48 kHz × 0.78). We do not correct this (it is the peer as it runs);
the driver prints the effective ranges to stderr. Nothing in the peer measures below ~143 Hz,
so a kick drum's fundamental counts only through its overtones and click.

Output
------
CSV `t_s,bass,mid,treble`, one row per chunk (60 rows per second of audio): t_s = audio time in
seconds of the last sample fed (sample index / rate, 6 decimals), levels 0…255 integers.
The peer's gain normalisation warms up: its per-bin gain filters start at 0.1 (dsp's mel_gain)
and 0.01 (the energy effect's gain) and decay slowly (energy: alpha 0.001 per frame, ~17 s), so
the first frames and any quiet passage after a loud one read differently from a steady state:
on a drum loop the energy effect lights all three lamps alike (≈ 168 of 255) in the first frame
and settles within about 0.2 s. When the 2-chunk window is digitally silent (every sample
below 1e-7 of full scale) the peer blanks the strip at once and freezes its effect's state;
dither or any noise floor keeps it running.
"""
import argparse
import contextlib
import os
import struct
import sys
import types
import warnings
import wave

import numpy as np

FRAMES_PER_SECOND = 60
EFFECTS = {"energy": "visualize_energy", "scroll": "visualize_scroll", "spectrum": "visualize_spectrum"}
LAMPS = ("bass", "mid", "treble")  # red, green, blue rows of led.pixels


class WavReader:
    """Reads a WAV file chunk by chunk as mono samples in 16-bit integer units (float32).

    Uses the stdlib `wave` module; WAVE_FORMAT_EXTENSIBLE and 32-bit float files, which the
    `wave` of Python < 3.12 refuses, are read from their `fmt ` and `data` chunks directly."""

    def __init__(self, path):
        self._file = open(path, "rb")
        try:
            self._wave = wave.open(self._file)
            self.rate = self._wave.getframerate()
            self.channels = self._wave.getnchannels()
            self.bytes_per_sample = self._wave.getsampwidth()
            self.is_float = False
        except (wave.Error, EOFError):
            self._wave = None
            self._file.seek(0)
            self._read_header()

    def _read_header(self):
        riff, _, kind = struct.unpack("<4sI4s", self._file.read(12))
        if riff != b"RIFF" or kind != b"WAVE":
            raise ValueError("not a RIFF/WAVE file")
        fmt = None
        while True:
            header = self._file.read(8)
            if len(header) < 8:
                raise ValueError("no data chunk")
            name, size = struct.unpack("<4sI", header)
            if name == b"fmt ":
                fmt = self._file.read(size + (size & 1))
            elif name == b"data":
                if fmt is None:
                    raise ValueError("data chunk before fmt chunk")
                self._data_left = size
                break
            else:
                self._file.seek(size + (size & 1), os.SEEK_CUR)
        tag, self.channels, self.rate, _, _, bits = struct.unpack("<HHIIHH", fmt[:16])
        if tag == 0xFFFE and len(fmt) >= 26:  # WAVE_FORMAT_EXTENSIBLE: the real tag opens the GUID
            tag = struct.unpack("<H", fmt[24:26])[0]
        if tag not in (1, 3) or (tag == 3 and bits != 32):
            raise ValueError(f"unsupported WAV encoding (format tag {tag}, {bits} bits)")
        self.bytes_per_sample = bits // 8
        self.is_float = tag == 3

    def _read_bytes(self, frames):
        if self._wave is not None:
            return self._wave.readframes(frames)
        size = min(frames * self.channels * self.bytes_per_sample, self._data_left)
        data = self._file.read(size)
        self._data_left -= len(data)
        return data

    def read(self, frames):
        """Up to `frames` mono samples in 16-bit units, rounded and clipped like an int16 stream."""
        data = self._read_bytes(frames)
        width = self.bytes_per_sample
        data = data[: len(data) // (width * self.channels) * (width * self.channels)]
        if self.is_float:
            samples = np.frombuffer(data, "<f4").astype(np.float64) * 32768.0
        elif width == 1:  # unsigned 8-bit
            samples = (np.frombuffer(data, np.uint8).astype(np.float64) - 128.0) * 256.0
        elif width == 3:
            raw = np.frombuffer(data, np.uint8).reshape(-1, 3).astype(np.int32)
            values = raw[:, 0] | (raw[:, 1] << 8) | (raw[:, 2] << 16)
            values = np.where(values >= 1 << 23, values - (1 << 24), values)
            samples = values.astype(np.float64) / 256.0
        elif width in (2, 4):
            samples = np.frombuffer(data, f"<i{width}").astype(np.float64) / 2.0 ** (8 * width - 16)
        else:
            raise ValueError(f"unsupported sample width {width} bytes")
        mono = samples.reshape(-1, self.channels).mean(axis=1)
        return np.clip(np.round(mono), -32768, 32767).astype(np.int16).astype(np.float32)

    def close(self):
        if self._wave is not None:
            self._wave.close()
        self._file.close()


class LineCounter:
    """Stands in for stdout while the peer runs: counts its console lines instead of showing
    them (its only per-frame print is 'No audio input. Volume below threshold.')."""

    def __init__(self):
        self.lines = 0
        self.silent_frames = 0

    def write(self, text):
        self.lines += text.count("\n")
        self.silent_frames += text.count("No audio input")
        return len(text)

    def flush(self):
        pass


def load_peer(peer_python_dir, sample_rate):
    """Imports the peer's modules unmodified, stubbing hardware and GUI; returns (visualization,
    led, config, dsp)."""
    if not os.path.isfile(os.path.join(peer_python_dir, "visualization.py")):
        raise SystemExit(f"{peer_python_dir}: no visualization.py here; pass the peer's python/ folder")
    sys.modules["pyaudio"] = types.ModuleType("pyaudio")  # microphone.py imports it at the top
    sys.modules["pyqtgraph"] = types.ModuleType("pyqtgraph")  # the GUI only
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        try:
            import scipy.ndimage.filters  # noqa: F401  (the peer's import; deprecated)
        except ImportError:
            import scipy.ndimage
            sys.modules["scipy.ndimage.filters"] = scipy.ndimage
    sys.path.insert(0, os.path.abspath(peer_python_dir))
    sys.dont_write_bytecode = True  # leave the peer's folder as it is (no __pycache__)
    np.random.seed(0)
    import config
    config.MIC_RATE = sample_rate
    config.FPS = FRAMES_PER_SECOND
    config.USE_GUI = False
    config.DISPLAY_FPS = False
    config.DEVICE = "headless"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        import dsp
        import led
        import visualization
    led.update = lambda: None  # the strip output; we read led.pixels instead
    return visualization, led, config, dsp


def effective_ranges(config, dsp, visualization):
    """(configured, effective) edges in Hz of the peer's whole range and of its three colour
    thirds: effective = the frequencies its FFT bins really hold (the FFT is zero-padded to the
    next power of two, the filterbank assumes its bins span 0…rate/2)."""
    window = visualization.samples_per_frame * config.N_ROLLING_HISTORY
    fft_points = 2 ** int(np.ceil(np.log2(window)))
    scale = 2.0 * (dsp.samples - 1) / fft_points
    import melbank
    centres, lower, upper = melbank.melfrequencies_mel_filterbank(
        config.N_FFT_BINS, config.MIN_FREQUENCY, config.MAX_FREQUENCY, dsp.samples)
    n = config.N_FFT_BINS
    # A third's edge: between the centres of the last bin of one third and the first of the next.
    splits_mel = [(centres[n // 3 - 1] + centres[n // 3]) / 2, (centres[2 * n // 3 - 1] + centres[2 * n // 3]) / 2]
    edges = [config.MIN_FREQUENCY] + [float(melbank.mel_to_hertz(m)) for m in splits_mel] + [config.MAX_FREQUENCY]
    return edges, [e * scale for e in edges]


def run(peer_python_dir, wav_path, csv_path, effect):
    reader = WavReader(wav_path)
    visualization, led, config, dsp = load_peer(peer_python_dir, reader.rate)
    visualization.visualization_effect = getattr(visualization, EFFECTS[effect])
    chunk = visualization.samples_per_frame
    configured, effective = effective_ranges(config, dsp, visualization)
    print(f"peer: {reader.rate} Hz, {reader.channels} channel(s), chunks of {chunk} samples, effect {effect}; "
          "red/green/blue thirds as configured " + "–".join(f"{e:.0f}" for e in configured)
          + " Hz, effective " + "–".join(f"{e:.0f}" for e in effective) + " Hz", file=sys.stderr)
    rows = ["t_s,bass,mid,treble"]
    fed = 0
    console = LineCounter()
    with contextlib.redirect_stdout(console):
        while True:
            samples = reader.read(chunk)
            if len(samples) < chunk:
                break
            visualization.microphone_update(samples)
            fed += chunk
            pixels = np.asarray(led.pixels, dtype=np.float64)
            if pixels.shape != (3, config.N_PIXELS):
                raise RuntimeError(f"led.pixels has shape {pixels.shape}, expected (3, {config.N_PIXELS})")
            shown = np.clip(pixels, 0, 255).astype(int)  # as led.py does before sending a pixel
            levels = np.clip(np.floor(shown.mean(axis=1) + 0.5), 0, 255).astype(int)
            rows.append(f"{(fed - 1) / reader.rate:.6f},{levels[0]},{levels[1]},{levels[2]}")
    reader.close()
    text = "\n".join(rows) + "\n"
    if csv_path == "-":
        sys.stdout.write(text)
    else:
        with open(csv_path, "w") as output:
            output.write(text)
    print(f"peer: {len(rows) - 1} frames ({fed / reader.rate:.3f} s of audio); "
          f"{console.silent_frames} below its volume threshold (strip dark)", file=sys.stderr)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--effect", choices=sorted(EFFECTS), default="energy",
                        help="the peer's effect (default: energy)")
    parser.add_argument("peer_python_dir", help="the peer's python/ folder")
    parser.add_argument("wav", help="input WAV file")
    parser.add_argument("csv", help="output CSV file, or - for stdout")
    arguments = parser.parse_args()
    run(arguments.peer_python_dir, arguments.wav, arguments.csv, arguments.effect)


if __name__ == "__main__":
    main()
