"""The strip's wiring check on the receiver's page: the check's steps drawn in the pixel row and sent in the
page's messages, the page's state meanwhile, and Stop ending it.

Rules: the receiver drives a virtual strip of 30 pixels (`--strip-device virtual`) behind a veth (`page_host`);
the browser (`browser`, headless Chromium) stays in the test's namespace. The page samples its own canvas (read at
each pixel's centre, support.pixel_row.READ_CANVAS) every 20 ms, and the recorder injected before its scripts
(web/recorder.js) keeps every binary message's pixels: both are named step by step (`check_step`).
"""
import time

import pytest

from support.browser import open_page, tap
from support.pixel_row import PIXELS, READ_CANVAS, STRIP, check_step, classify, on_canvas, sequence
from support.processes import wait_for

pytestmark = [pytest.mark.browser]


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
    time.sleep(0.5)  # the sampler's first samples, before the click
    clicked = time.time() * 1000
    tap(page, "#check-strip")
    time.sleep(7)  # the whole check in the samples, 2 s of ends and a 3-s run, and dark well after it
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
    time.sleep(0.5)  # the check under way when Stop comes
    tap(page, "#check-stop")
    page.wait_for("window.lightorgan.status.checkingStrip === false", 5)
    wait_for(lambda: classify(page.js(READ_CANVAS)) == "." * PIXELS, 0.3)  # the next animation frames draw it
    stopped = classify(page.js(READ_CANVAS))
    check("Stop ends the strip's check: dark, checkingStrip false", stopped == "." * PIXELS, stopped)
