"""The receiver's page as a live view in a real headless Chromium: its lamps follow the receiver's frames, and on a
phone the lamps and the state of the connection stay in view.

Rules: those of every page test, in support/browser.py (the receiver in its own namespace, frames on its stdout,
the recorder in the page, one time line).
"""
import bisect
import time

import pytest

from support.browser import open_page, shown
from support.page_music import fetch_up_front  # noqa: F401 (conftest.py fetches the recording up front)
from support.processes import percentile, wait_for

pytestmark = [pytest.mark.browser]


@pytest.mark.timing
def test_the_pages_lamps_follow_a_sender(page_host, browser, spawn, music, check, figure, tmp_path):
    process, key = page_host.receiver("follow")
    page = browser("follow")
    open_page(page, page_host.base, key)
    started = time.time()
    sender = spawn("follow-sender", "send", "--input", music, "--host", page_host.address, "--port", "8181",
                   "--fps", "50", "--delay", "0", "--stats-interval", "0")
    time.sleep(12)  # the recording plays in real time: 12 s of lamp messages to measure
    recorded = page.js("return window.__recorded.lamps")
    status = page.js("return window.lightorgan.status")
    # The README's picture: the phone-sized page with the lamps lit.
    page.wait_for("window.lightorgan.levels.filter((level) => level > 120).length >= 2", 10, interval=0.005)
    viewport = page.js("return [innerWidth, innerHeight, devicePixelRatio]")
    size = page.screenshot(str(tmp_path / "page-phone.png"))
    sender.stop()
    page.close()
    check("screenshot() gives a 1170×2532 PNG", size == (1170, 2532), f"{size[0]}×{size[1]}")
    check("phone_viewport() gives CSS 390×844 at 3×", viewport == [390, 844, 3], f"CSS {viewport}")
    frames = shown(process, started)
    times = [at for at, _ in frames]
    lags = []
    for wall_ms, b, m, t in recorded:
        wall = wall_ms / 1000
        if wall < times[0] + 0.5 if times else True:
            continue
        # The page hears of a frame in the wake-up that showed it, under a millisecond later: the two clocks'
        # mapping onto wall time may put the message a little before the frame's line. 5 ms covers that.
        newest = bisect.bisect_right(times, wall + 0.005) - 1
        lag = next((newest - j for j in range(newest, max(-1, newest - 50), -1) if frames[j][1] == (b, m, t)), 99)
        lags.append(lag)
    lit = [r for r in recorded if any(r[1:])]
    span = (recorded[-1][0] - recorded[0][0]) / 1000 if len(recorded) > 1 else 1
    rate = len(recorded) / span
    follow = "the page's lamps follow a sender playing a WAV"
    check(f"{follow}: more than 200 lamp messages measured", len(lags) > 200,
          f"{len(lags)} messages, sender kind {status and status.get('sender') and status['sender'].get('kind')}")
    check(f"{follow}: each lamp message equals one of the receiver's last three shown frames (within two frames at "
          "50 frames/s; p95)", percentile(lags, 0.95) <= 2,
          f"lag p50 {percentile(lags, 0.5)} p95 {percentile(lags, 0.95)} max {max(lags, default=None)} frames")
    check(f"{follow}: more than 50 messages with a lamp lit", len(lit) > 50, f"{len(lit)} of {len(recorded)} lit")
    check(f"{follow}: 30+ updates a second", rate >= 30, f"{rate:.0f} updates/s")
    figure(f"page lamp updates {rate:.0f}/s with a sender at 50 frames/s; lag p95 {percentile(lags, 0.95)} frames")

def test_the_phone_layout_keeps_the_lamps_and_the_connection_in_view(page_host, browser, spawn, music, check, tmp_path):
    """Phone-sized screenshots of each state (tmp_path/phone-*.png; keep them with
    `-o tmp_path_retention_policy=all`), and what a person on a phone must see in each."""
    process, key = page_host.receiver("phone")
    page = browser("phone", fake_audio=music)
    open_page(page, page_host.base, key)
    sender = spawn("phone-sender", "send", "--input", music, "--host", page_host.address, "--port", "8181",
                   "--fps", "50", "--delay", "0", "--stats-interval", "0")
    # The status names the sender and its rate.
    page.wait_for("(window.lightorgan.status || {}).sender && window.lightorgan.status.fps > 0", 15)
    for _ in range(10):  # the README's picture: the lamps caught lit (they flash on the beats)
        page.wait_for("window.lightorgan.levels.filter((level) => level > 150).length >= 2", 15, interval=0.002)
        sizes = [page.screenshot(str(tmp_path / "phone-lamps.png"))]
        if len([level for level in page.js("return window.lightorgan.levels") if level > 100]) >= 2:
            break
    def in_view(css):
        return page.js("const r = document.querySelector(arguments[0]).getBoundingClientRect(); "
                       "return r.height > 0 && r.top >= 0 && r.bottom <= innerHeight", css)
    page.js("document.querySelector('#settings').scrollIntoView()")
    page.wait_for("document.querySelector('#strip').classList.contains('shown')", 5)
    time.sleep(0.3)  # the strip slides in
    strip = in_view("#strip")
    sizes.append(page.screenshot(str(tmp_path / "phone-settings.png")))
    page.js("document.querySelector('#audio').scrollIntoView()")
    sender.stop()
    page.click("#mic")
    page.wait_for("document.querySelector('#audio-msg').textContent.startsWith('Sending')", 20)
    page.wait_for("window.lightorgan.levels.some((level) => level > 120)", 15, interval=0.005)
    sizes.append(page.screenshot(str(tmp_path / "phone-microphone.png")))
    page.click("#stop-audio")
    page.wait_for("window.lightorgan.status && window.lightorgan.status.sender === null", 10)
    idle_figures = "return [document.querySelector('#st-fps').textContent, document.querySelector('#st-age').textContent]"
    wait_for(lambda: page.js(idle_figures) == ["–", "–"], 0.6)
    idle = page.js(idle_figures)
    page.js("window.scrollTo(0, 0)")
    sizes.append(page.screenshot(str(tmp_path / "phone-idle.png")))
    viewer = browser("phone-viewer")
    open_page(viewer, page_host.base)
    viewer.wait_for("!document.querySelector('#access').hidden", 10)
    sizes.append(viewer.screenshot(str(tmp_path / "phone-view-only.png")))
    viewer.close()
    page.js("document.querySelector('#settings').scrollIntoView()")
    process.stop()
    page.wait_for("!document.querySelector('#offline').hidden", 10)
    banner = [in_view("#offline"), page.js("return document.querySelector('#offline').textContent")]
    gone = page.js("return document.querySelector('#st-fps').textContent")
    sizes.append(page.screenshot(str(tmp_path / "phone-lost.png")))
    page.close()
    check("on a phone: every screenshot is 1170×2532", all(size == (1170, 2532) for size in sizes),
          f"screenshots {sizes}")
    check("on a phone: the lamp strip stays on screen while the settings are scrolled to", strip,
          f"strip in view {strip}")
    check("on a phone: the frame rate and age show '–' once nobody sends", idle == ["–", "–"], f"idle figures {idle}")
    check("on a phone: a lost connection is said at the bottom of the screen wherever the person is (in view)",
          banner[0], f"banner {banner}")
    check("on a phone: the banner says \"Connection to the receiver lost\"",
          str(banner[1]).startswith("Connection to the receiver lost"), f"banner {banner}")
    check("on a phone: the frame rate shows '–' when the connection is lost", gone == "–", f"fps when lost {gone!r}")
