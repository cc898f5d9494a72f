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
    row = "the strip check in the pixel row (the canvas, every 20 ms)"
    check(f"{row}: nothing else drawn", not unknown, f"{len(unknown)} samples of anything else")
    check(f"{row}: dark, then first red and last blue (the ends)", steps[:2] == ["dark", "ends"],
          f"steps {[s if not isinstance(s, tuple) else s[1] for s in steps][:8]}…")
    check(f"{row}: then one green pixel that only runs forward", runners == sorted(runners), f"runners {runners}")
    check(f"{row}: the green pixel seen at 27 or more of the 30 positions", len(set(runners)) >= 27,
          f"{len(set(runners))} runner positions seen")
    check(f"{row}: the green pixel starts at the first pixel", runners[:1] == [0], f"runners {runners[:3]}…")
    check(f"{row}: the green pixel ends at the last pixel", runners[-1:] == [PIXELS - 1], f"runners …{runners[-3:]}")
    check(f"{row}: then dark", steps[-1:] == ["dark"], f"steps …{steps[-3:]}")
    check(f"{row}: the ends and a runner seen (the ends' time measured)", ends_for is not None,
          f"ends at {ends_at}, the first runner at {first_runner}")
    check(f"{row}: the ends for 2 s (1.7…2.4 s)", ends_for is not None and 1.7 <= ends_for <= 2.4,
          f"ends {ends_for} s")
    check(f"{row}: a runner seen (the run's time measured)", run_for is not None,
          f"the first runner at {first_runner}, the last at {last_runner}")
    check(f"{row}: the run takes 3 s (2.5…3.4 s)", run_for is not None and 2.5 <= run_for <= 3.4,
          f"run {run_for} s")
    messages = sequence([(at, check_step(classify([on_canvas(p[i:i + 3]) for i in range(0, len(p), 3)])))
                         for at, p in strip if at >= clicked])
    message_runners = [step[1] for _, step in messages if isinstance(step, tuple)]
    check("and in the binary messages: first ends (or dark before them)",
          [step for _, step in messages][:1] in (["ends"], ["dark"]), f"{[s for _, s in messages][:4]}…")
    check("…every one of the 30 runner positions in order", message_runners == list(range(PIXELS)),
          f"runners {message_runners}")
    check("…then dark", [step for _, step in messages][-1:] == ["dark"], f"…{[s for _, s in messages][-3:]}")
    during = [s for s in samples if ends_at and ends_at + 300 <= s[0] <= (last_runner or 0)]
    after = [s for s in samples if dark_at and s[0] >= dark_at + 1200]
    dark_lamps = all(not any(levels[1:]) for levels in lamps if levels[0] >= clicked)
    check("the page was sampled while the check runs", during, f"{len(during)} samples during")
    check("checkingStrip is true while the check runs (the button pressed, the page says so)",
          all(s[2] is True and s[4] == "true" and s[5].startswith("Checking the strip") for s in during),
          f"{sum(1 for s in during if s[2] is True)} of {len(during)} checking; said "
          f"{during[0][5] if during else None!r}")
    check("the page was sampled after the check", after, f"{len(after)} samples after")
    check("checkingStrip is false after it", all(s[2] is False and s[4] == "false" for s in after),
          f"{sum(1 for s in after if s[2] is False)} of {len(after)} not checking")
    check("the lamps stay dark", dark_lamps,
          f"first lit {next((levels for levels in lamps if levels[0] >= clicked and any(levels[1:])), None)}")
    # Stop ends it at once.
    tap(page, "#check-strip")
    page.wait_for("window.lightorgan.status.checkingStrip === true", 5)
    time.sleep(0.5)  # the check under way when Stop comes
    tap(page, "#check-stop")
    page.wait_for("window.lightorgan.status.checkingStrip === false", 5)
    wait_for(lambda: classify(page.js(READ_CANVAS)) == "." * PIXELS, 0.3)  # the next animation frames draw it
    stopped = classify(page.js(READ_CANVAS))
    check("Stop ends the strip's check at once: checkingStrip false (waited for above), the strip drawn dark",
          stopped == "." * PIXELS, stopped)
