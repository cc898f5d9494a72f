"""The receiver's page with an LED strip (issue 37) in a real headless Chromium, over HTTPS from a non-loopback
address: the live pixel row, the strip's wiring check, its settings, and nothing of it without a strip.

The receiver drives a virtual strip (`--strip-device virtual`: pixels only on the page and in the status, no
hardware) beside `--output stdout`, in a namespace of its own behind a veth (`page_host`, conftest.py); the
browser (`browser`) stays in the test's. Frames go to the receiver over TCP, three bytes each, from a thread of
the test (`Frames`), so the pixels each must give are known: with `segments`, gamma 1 and brightness 100 the
first third of 30 pixels is (bass, 0, 0), the second (0, mid, 0), the last (0, 0, treble). The recorder
injected before the page's scripts (web/recorder.js) keeps every binary message, its levels and its pixels;
the pixel row is read back from the page's canvas at each pixel's centre (`window.lightorgan.stripView`), where
a pixel's byte v shows sRGB-encoded, 255 · (v/255)^(1/2.2), and a dark pixel in the row's dark grey.
"""
import math
import socket
import threading
import time

import pytest

from support.browser import open_page, slide, tap

pytestmark = [pytest.mark.browser]

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


def test_the_pixel_row_follows_the_frames(page_host, browser, frames, check):
    process, key = page_host.receiver("follow", *STRIP, "--strip-effect", "segments", "--strip-brightness", "100")
    page = browser("follow")
    open_page(page, page_host.base, key)
    page.wait_for("window.lightorgan.stripView", 10)
    facts = page.js("return [window.lightorgan.status.receiver.strip, "
                    "[...document.querySelectorAll('#sender dd.strip-fact')].map((n) => n.textContent), "
                    "!document.querySelector('#pixels').hidden, document.querySelector('#pixels-caption').textContent]")
    check("the status names the strip (virtual, 30 pixels, ws2812b, segments) and the page shows its facts and a "
          "pixel row", facts[0] == {"device": "virtual", "pixels": PIXELS, "type": "ws2812b", "effect": "segments"}
          and facts[1] == ["virtual (only on this page)", "30", "WS2812B", "Segments"] and facts[2]
          and facts[3] == "· 30 pixels · Segments", f"status {facts[0]}, facts {facts[1]}, row shown {facts[2]}, "
          f"caption {facts[3]!r}")
    view = page.js("const v = window.lightorgan.stripView; return [v.count, v.columns, v.rows, v.cssCell, "
                   "document.querySelector('#pixel-row').getBoundingClientRect().width, innerWidth]")
    check("on a phone (390 CSS px) the 30 pixels are one row as wide as the page, each at least 9 CSS px wide",
          view[:3] == [PIXELS, PIXELS, 1] and view[3] >= 9 and view[4] >= view[5] - 40,
          f"{view[0]} pixels in {view[1]} columns, {view[2]} rows, {view[3]:.1f} CSS px each, row {view[4]:.0f} of "
          f"{view[5]} px")
    sender = frames()
    seen = []
    for levels in [(255, 128, 64), (10, 200, 90), (64, 0, 255), (0, 0, 0), (128, 255, 1)]:
        sender.show(levels)
        expected = segments(levels)
        shows(page, expected)
        read = page.js(READ_CANVAS)
        pixels = page.js("return Array.from(window.lightorgan.pixels || [])")
        seen.append((levels, pixels == expected, canvas_matches(read, expected), read and [read[0], read[15], read[29]]))
        time.sleep(0.5)  # messages of the same frame meanwhile, 40 a second
    sender.stop()
    check("frames over TCP make the pixel row follow them: for each of five frames the page's pixels are the "
          "segments of its levels and the canvas shows them (each byte sRGB-encoded, within 2)",
          all(ok and drawn for _, ok, drawn, _ in seen),
          "; ".join(f"{levels}: pixels {'ok' if ok else 'wrong'}, canvas {'ok' if drawn else 'wrong'} "
                    f"(pixels 0, 15, 29 drawn {corners})" for levels, ok, drawn, corners in seen))
    lamps = page.js("return window.__recorded.lamps")
    strip = page.js("return window.__recorded.strip")
    paired = [(tuple(lamp[1:]), pixels) for lamp, (_, pixels) in zip(lamps, strip)]
    wrong = [(levels, pixels[:3], pixels[30:33], pixels[60:63]) for levels, pixels in paired
             if pixels != segments(levels)]
    check("every binary message on /live is three levels and then 30 pixels, the segments of those levels",
          len(lamps) == len(strip) and len(strip) >= 80 and not wrong,
          f"{len(lamps)} messages, {len(strip)} with pixels; wrong {wrong[:3]}")
    rows = page.js("return [...document.querySelectorAll('#strip-settings-list .setting')].map((r) => "
                   "[r.dataset.key, r.querySelector('.locked').textContent])")
    check("the strip's settings show under 'LED strip', locked where an option sets them",
          [key for key, _ in rows] == ["receiver.strip.effect", "receiver.strip.brightness"]
          and "--strip-effect" in rows[0][1] and "--strip-brightness" in rows[1][1], f"rows {rows}")


def test_the_strip_check_shows_in_the_pixel_row(page_host, browser, check):
    process, key = page_host.receiver("check", *STRIP, "--strip-effect", "segments", "--strip-brightness", "100")
    page = browser("check")
    open_page(page, page_host.base, key)
    page.wait_for("window.lightorgan.stripView && window.lightorgan.control", 10)
    # The canvas, the check's state and the lamps, every 20 ms, in the page.
    page.js("window.__samples = []; const read = new Function(arguments[0]); window.__sampler = setInterval(() => "
            "window.__samples.push([Date.now(), read(), window.lightorgan.status.checkingStrip, "
            "[...window.lightorgan.levels], document.querySelector('#check-strip').getAttribute('aria-pressed'), "
            "document.querySelector('#checking').textContent]), 20)", READ_CANVAS)
    time.sleep(0.5)
    clicked = time.time() * 1000
    tap(page, "#check-strip")
    time.sleep(7)
    page.js("clearInterval(window.__sampler)")
    samples = page.js("return window.__samples")
    strip = page.js("return window.__recorded.strip")
    lamps = page.js("return window.__recorded.lamps")
    canvas = [(at, check_step(classify(read))) for at, read, *_ in samples if read and at >= clicked]
    shown = sequence(canvas)
    steps = [step for _, step in shown]
    runners = [step[1] for step in steps if isinstance(step, tuple)]
    unknown = [step for _, step in canvas if step is None]
    first_runner = next((at for at, step in shown if isinstance(step, tuple)), None)
    last_runner = next((at for at, step in reversed(shown) if isinstance(step, tuple)), None)
    ends_at = next((at for at, step in shown if step == "ends"), None)
    dark_at = next((at for at, step in shown if step == "dark" and last_runner and at > last_runner), None)
    ends_for = (first_runner - ends_at) / 1000 if ends_at and first_runner else None
    run_for = (last_runner - first_runner) / 1000 if first_runner and last_runner else None
    ok = (not unknown and steps[:2] == ["dark", "ends"] and runners == sorted(runners) and len(set(runners)) >= 27
          and runners[:1] == [0] and runners[-1:] == [PIXELS - 1] and steps[-1] == "dark"
          and ends_for and 1.7 <= ends_for <= 2.4 and run_for and 2.5 <= run_for <= 3.4)
    check("the strip check in the pixel row (the canvas, every 20 ms): first red and last blue for 2 s, then one "
          "green pixel runs from the first to the last in 3 s, then dark; nothing else drawn", ok,
          f"steps {[s if not isinstance(s, tuple) else s[1] for s in steps][:8]}…{steps[-3:]}, {len(set(runners))} "
          f"runner positions seen, ends {ends_for} s, run {run_for} s, {len(unknown)} samples of anything else")
    messages = sequence([(at, check_step(classify([on_canvas(p[i:i + 3]) for i in range(0, len(p), 3)])))
                         for at, p in strip if at >= clicked])
    message_runners = [step[1] for _, step in messages if isinstance(step, tuple)]
    check("and in the binary messages: ends, every one of the 30 runner positions in order, dark",
          [step for _, step in messages][:1] in (["ends"], ["dark"]) and message_runners == list(range(PIXELS))
          and messages[-1][1] == "dark", f"{[s for _, s in messages][:4]}…, runners {message_runners}")
    during = [s for s in samples if ends_at and ends_at + 300 <= s[0] <= (last_runner or 0)]
    after = [s for s in samples if dark_at and s[0] >= dark_at + 1200]
    dark_lamps = all(not any(levels[1:]) for levels in lamps if levels[0] >= clicked)
    check("checkingStrip is true while the check runs (the button pressed, the page says so) and false after it; "
          "the lamps stay dark", during and all(s[2] is True and s[4] == "true" and s[5].startswith("Checking the strip")
                                                for s in during)
          and after and all(s[2] is False and s[4] == "false" for s in after) and dark_lamps,
          f"{len(during)} samples during ({sum(1 for s in during if s[2] is True)} checking), {len(after)} after "
          f"({sum(1 for s in after if s[2] is False)} not checking); lamps dark {dark_lamps}; said "
          f"{during[0][5] if during else None!r}")
    # Stop ends it at once.
    tap(page, "#check-strip")
    page.wait_for("window.lightorgan.status.checkingStrip === true", 5)
    time.sleep(0.5)
    tap(page, "#check-stop")
    page.wait_for("window.lightorgan.status.checkingStrip === false", 5)
    time.sleep(0.3)
    stopped = classify(page.js(READ_CANVAS))
    check("Stop ends the strip's check: dark, checkingStrip false", stopped == "." * PIXELS, stopped)


def test_an_effect_and_a_brightness_set_on_the_page_apply(page_host, browser, frames, check, tmp_path):
    """The effect and the brightness from a settings file (an option would lock them), the rest as options."""
    settings_file = tmp_path / "lightorgan.yaml"
    settings_file.write_text("receiver:\n  strip:\n    effect: segments\n    brightness: 100\n")
    process, key = page_host.receiver("effect", *STRIP, "--config", settings_file)
    page = browser("effect")
    open_page(page, page_host.base, key)
    page.wait_for("window.lightorgan.stripView && window.lightorgan.control", 10)
    sender = frames()
    levels = (200, 100, 50)
    sender.show(levels)
    expected = segments(levels)
    shows(page, expected)
    row = '[data-key="receiver.strip.effect"]'
    choices = page.js(f"return [...document.querySelectorAll('{row} .segments button')].map((b) => [b.dataset.value, b.textContent])")
    tap(page, f'{row} button[data-value="blend"]')
    page.wait_for(f"document.querySelector('{row} .message').textContent === 'applied'", 10)
    page.wait_for("window.lightorgan.status.receiver.strip.effect === 'blend'", 5)
    blend = list(levels) * PIXELS
    shows(page, blend)
    pixels = page.js("return Array.from(window.lightorgan.pixels || [])")
    read = page.js(READ_CANVAS)
    words = page.js(f"const r = document.querySelector('{row}'); return [r.querySelector('.shown').textContent, "
                    "r.querySelector('[aria-checked=\"true\"]').dataset.value, r.querySelector('.summary').textContent, "
                    "document.querySelector('#st-effect').textContent, r.querySelector('.source').textContent]")
    logged = "page: receiver.strip.effect = blend" in process.log()
    check("the effect chosen on the page (Blend, one of five with a line each) applies: the status, the facts, "
          "the pixels and the canvas change at once, the receiver logs it",
          [value for value, _ in choices] == ["scroll", "energy", "flash", "segments", "blend"] and pixels == blend
          and canvas_matches(read, blend) and words[:2] == ["Blend", "blend"] and "mixed" in words[2]
          and words[3] == "Blend" and words[4] == "From set on this page" and logged,
          f"choices {choices}; pixels 0, 15 {pixels[:3]}, {pixels[45:48]}; canvas {read and read[:2]}; row and facts "
          f"{words}; logged {logged}")
    slide(page, "receiver.strip.brightness", 50)
    page.wait_for("window.lightorgan.status.settings.some((r) => r.key === 'receiver.strip.brightness' && r.value === '50')", 10)
    half = [100, 50, 25] * PIXELS
    shows(page, half)
    pixels = page.js("return Array.from(window.lightorgan.pixels || [])")
    read = page.js(READ_CANVAS)
    shown = page.js("return document.querySelector('[data-key=\"receiver.strip.brightness\"] .shown').textContent")
    sender.stop()
    check("the strip's brightness limit moved to 50 % on its slider halves the pixels (200, 100, 50 → 100, 50, 25) "
          "on the page and its canvas", pixels == half and canvas_matches(read, half) and shown == "50 %",
          f"pixel 0 {pixels[:3]}, canvas {read and read[0]}, shown {shown!r}")


def test_the_page_without_a_strip_shows_nothing_of_one(page_host, browser, frames, check):
    process, key = page_host.receiver("no-strip")
    page = browser("no-strip")
    open_page(page, page_host.base, key)
    page.wait_for("window.lightorgan.control", 10)
    sender = frames()
    sender.show((100, 150, 200))
    page.wait_for("window.lightorgan.levels.join() === '100,150,200'", 5)
    sender.stop()
    seen = page.js("""
        const shown = (css) => [...document.querySelectorAll(css)].some((n) => n.offsetParent !== null || n.getClientRects().length);
        return {strip: window.lightorgan.status.receiver.strip, pixels: shown('#pixels'), mini: shown('#pixel-mini'),
          facts: shown('.strip-fact'), settings: shown('#strip-settings'), check: shown('#strip-check'),
          rows: window.lightorgan.status.settings.map((r) => r.key).filter((k) => k.startsWith('receiver.strip.'))
            .filter((k) => document.querySelector(`[data-key="${k}"]`)),
          messages: window.__recorded.strip.length, lengths: window.__recorded.lamps.length,
          note: document.querySelector('[data-key="receiver.mode"] .gpio-note').textContent}""")
    check("without a strip the page shows nothing of one: no pixel row, facts, settings or check; its messages are "
          "three levels", seen["strip"] is None and not any(seen[k] for k in ("pixels", "mini", "facts", "settings", "check"))
          and not seen["rows"] and seen["messages"] == 0 and seen["lengths"] > 0 and "strip" not in seen["note"], f"{seen}")


def test_a_phone_shows_the_strip_readably(page_host, browser, frames, check, tmp_path):
    """Phone-sized screenshots (tmp_path/strip-*.png, and page-strip-phone.png, ThePage.md's picture; keep them
    with `-o tmp_path_retention_policy=all`): the pixel row under the lamps with a groove playing, the strip's
    settings, its check with the pixels in the compact bar at the top; and a 300-pixel strip, whose 150 pixels of
    the page take two rows."""
    process, key = page_host.receiver("phone", "--strip-device", "virtual", "--strip-pixels", "60",
                                      "--strip-effect", "scroll", "--strip-brightness", "100")
    page = browser("phone")
    open_page(page, page_host.base, key)
    page.wait_for("window.lightorgan.stripView && window.lightorgan.control", 10)
    sender = frames()
    sender.play(groove)
    # The status names the sender and its rate.
    page.wait_for("(window.lightorgan.status || {}).sender && window.lightorgan.status.fps > 0", 15)
    sizes = []
    for _ in range(20):  # caught with the lamps lit and colour along the strip
        page.wait_for(LIT, 15, interval=0.002)
        sizes.append(page.screenshot(str(tmp_path / "strip-phone.png")))
        lit = page.js("const p = window.lightorgan.pixels; let n = 0; "
                      "for (let i = 0; i < p.length; i += 3) if (p[i] + p[i + 1] + p[i + 2] > 60) n++; return n")
        if lit >= 30:
            break
    # The picture in ThePage.md: the top of the same phone at a third of the pixels (520 × 889; page-phone.png's size).
    page.phone_viewport(390, 667, scale=4 / 3)
    page.wait_for(LIT, 15, interval=0.002)
    docs = page.screenshot(str(tmp_path / "page-strip-phone.png"))
    page.phone_viewport()
    page.js("document.querySelector('#strip-settings').scrollIntoView({block: 'center'})")
    time.sleep(0.4)
    sizes.append(page.screenshot(str(tmp_path / "strip-settings.png")))
    sender.stop()
    page.wait_for("window.lightorgan.status && !window.lightorgan.status.sender", 10)  # the sender's gone: dark
    tap(page, "#check-strip")
    page.wait_for("window.lightorgan.status.checkingStrip === true", 5)
    time.sleep(3.2)  # the runner about half-way
    page.wait_for("document.querySelector('#strip').classList.contains('shown')", 5)
    bar = page.js("const r = document.querySelector('#pixel-mini').getBoundingClientRect(); return [r.width, r.height, r.top]")
    sizes.append(page.screenshot(str(tmp_path / "strip-check.png")))
    page.close()
    process.stop()
    check("phone screenshots of the strip under the lamps, its settings and its check (the compact bar's pixel row "
          "on screen while the check's button is)", all(size == (1170, 2532) for size in sizes) and docs == (520, 889)
          and bar[0] >= 100 and bar[1] >= 10 and bar[2] >= 0,
          f"screenshots {sizes[-3:]} and {docs}, compact row {bar}, {lit} pixels lit")
    process, key = page_host.receiver("long", "--strip-device", "virtual", "--strip-pixels", "300",
                                      "--strip-effect", "energy")
    page = browser("long")
    open_page(page, page_host.base, key)
    page.wait_for("window.lightorgan.stripView", 10)
    sender = frames()
    sender.play(groove)
    page.wait_for("document.querySelector('#pixels-note').textContent.startsWith('300 pixels') "
                  "&& (window.lightorgan.pixels || []).length === 450", 10)
    view = page.js("const v = window.lightorgan.stripView; return [v.count, v.columns, v.rows, v.cssCell, "
                   "document.querySelector('#pixels-note').textContent]")
    page.screenshot(str(tmp_path / "strip-300.png"))
    check("a 300-pixel strip: the page gets 150 pixels and shows them on two rows, each pixel at least 4 CSS px "
          "wide, and says so", view[:3] == [150, 75, 2] and view[3] >= 4
          and view[4] == "300 pixels shown as 150, each the average of about 2.", f"{view}")
