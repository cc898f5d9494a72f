"""The strip's pixel row on the receiver's page, for test_page_strip*.py (a pytest plugin, conftest.py's
`pytest_plugins`): a sender of known frames and how to read the pixel row back.

- `Frames` and the fixture `frames()`: one frame, three bytes, 50 times a second over TCP to the test's receiver
  (`page_host`), from a thread of the test, so the pixels each must give are known.
- `segments(levels)`: the pixels the `segments` effect draws with gamma 1 and brightness 100 on PIXELS pixels: the
  first third (bass, 0, 0), the second (0, mid, 0), the last (0, 0, treble). `groove(seconds)`: levels of a groove.
- READ_CANVAS (a script for `page.js`) reads the pixel row back from the page's canvas at each pixel's centre
  (`window.lightorgan.stripView`), where a pixel's byte v shows sRGB-encoded, 255 · (v/255)^(1/2.2), and a dark
  pixel in the row's dark grey (`on_canvas`, `canvas_matches`); `shows(page, pixels)` waits for the page to have
  them; `classify`, `check_step` and `sequence` name what the strip check draws.
"""
import math
import socket
import threading
import time

import pytest

PIXELS = 30
STRIP = ("--strip-device", "virtual", "--strip-pixels", str(PIXELS), "--strip-gamma", "1")
DARK = (29, 29, 36)  # an unlit pixel's body on the canvas (#1d1d24)

READ_CANVAS = """
const view = window.lightorgan.stripView, canvas = document.querySelector('#pixel-row');
if (!view || !canvas.width) return null;
const data = canvas.getContext('2d').getImageData(0, 0, canvas.width, canvas.height).data;
return view.centers.map(([x, y]) => { const i = 4 * (y * canvas.width + x); return [data[i], data[i + 1], data[i + 2]]; });
"""


class Frames:
    """Sends one frame, three bytes, 50 times a second over TCP to the receiver at `address`, on a thread of its
    own, until `stop()`; `show(levels)` changes the frame, `play(levels_at)` sends `levels_at(seconds)` instead."""

    def __init__(self, address, port=8181):
        self.levels = bytes(3)
        self.levels_at = None
        self.stopping = threading.Event()
        self.connection = socket.create_connection((address, port), timeout=5)
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def show(self, levels):
        self.levels_at = None
        self.levels = bytes(levels)

    def play(self, levels_at):
        self.levels_at = levels_at

    def _run(self):
        started = time.monotonic()
        while not self.stopping.is_set():
            playing = self.levels_at
            try:
                self.connection.sendall(bytes(playing(time.monotonic() - started)) if playing else self.levels)
            except OSError:
                return
            time.sleep(0.02)

    def stop(self):
        self.stopping.set()
        self.thread.join(2)
        self.connection.close()


@pytest.fixture
def frames(page_host):
    """frames(): a `Frames` sender to the test's receiver, stopped when the test ends."""
    started = []

    def start():
        sender = Frames(page_host.address)
        started.append(sender)
        return sender
    yield start
    for sender in started:
        sender.stop()


def groove(seconds):
    """A groove at 120 beats a minute as a sender's levels: a kick on each beat, a snare between them over a chord
    that swells over two bars, hi-hats on the eighths between those."""
    kick = 255 * math.exp(-(seconds % 0.5) / 0.25)
    snare = 200 * math.exp(-((seconds - 0.25) % 0.5) / 0.2) + 60 + 40 * math.sin(2 * math.pi * seconds / 4)
    hats = 180 * math.exp(-((seconds - 0.125) % 0.25) / 0.1) + 50
    return [max(0, min(255, round(level))) for level in (kick, snare, hats)]


LIT = "(([b, m, t]) => b > 180 && m > 100 && t > 80)(window.lightorgan.levels)"  # a moment for a picture


def segments(levels, pixels=PIXELS):
    """The pixels `segments` draws of `levels` with gamma 1 and brightness 100: a third per band."""
    out = []
    for pixel in range(pixels):
        band = min(2, pixel * 3 // pixels)
        out += [levels[band] if channel == band else 0 for channel in range(3)]
    return out


def on_canvas(rgb):
    """What the canvas shows of a pixel's (r, g, b): each byte sRGB-encoded; a dark pixel in the row's grey."""
    if not any(rgb):
        return DARK
    return tuple(round(255 * (value / 255) ** (1 / 2.2)) for value in rgb)


def canvas_matches(read, pixels, tolerance=2):
    """Whether the canvas's pixel centres `read` show `pixels` (flat r, g, b, …)."""
    if not read or len(read) * 3 != len(pixels):
        return False
    return all(abs(got - want) <= tolerance for i, seen in enumerate(read)
               for got, want in zip(seen, on_canvas(pixels[3 * i:3 * i + 3])))


def shows(page, pixels, timeout=5):
    """Waits until the page has `pixels` (flat r, g, b, …) and the next animation frames drew them; whether it did."""
    try:
        page.wait_for(f"Array.from(window.lightorgan.pixels || []).join() === '{','.join(map(str, pixels))}'", timeout)
    except TimeoutError:
        return False
    time.sleep(0.15)
    return True


def classify(read):
    """One character per pixel of a canvas read: r, g, b (full red, green, blue), . (dark), ? (anything else)."""
    named = {"r": (255, 0, 0), "g": (0, 255, 0), "b": (0, 0, 255), ".": DARK}
    return "".join(next((name for name, rgb in named.items()
                         if all(abs(a - b) <= 3 for a, b in zip(seen, rgb))), "?") for seen in read)


def check_step(text):
    """The strip check's step a row of pixel classes shows: 'ends', ('runner', i), 'dark' or None."""
    if text == "r" + "." * (len(text) - 2) + "b":
        return "ends"
    if text == "." * len(text):
        return "dark"
    if text.count("g") == 1 and text.count(".") == len(text) - 1:
        return ("runner", text.index("g"))
    return None


def sequence(steps):
    """`steps` [(time, step)] with repeats merged: [(first time, step)]."""
    merged = []
    for at, step in steps:
        if not merged or merged[-1][1] != step:
            merged.append((at, step))
    return merged
