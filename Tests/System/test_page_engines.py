"""The page in each engine a phone or a laptop may bring: Chromium, WebKitGTK (an iPhone's Safari is WebKit) and
Firefox ESR each load it, sign in, follow a sender, apply a setting and drive the lamps with their microphone.

Rules: those of every page test, in support/browser.py (the receiver in its own namespace, frames on its stdout,
the recorder in the page, one time line).

The engines (`engine`, conftest.py; support/engines.py): Debian's Chromium through chromedriver, WebKitGTK's
MiniBrowser under Xvfb through WebKitWebDriver, Firefox ESR headless over WebDriver BiDi.
"""
import time

import pytest

from support.browser import counter_sender, gone_dark, open_page, shown, slide, tap
from support.page_music import fetch_up_front  # noqa: F401 (conftest.py fetches the recording up front)

pytestmark = [pytest.mark.browser]


@pytest.mark.timing
@pytest.mark.parametrize("name", ["chromium", "webkit", "firefox"])
def test_the_page_in_each_engine(name, page_host, engine, spawn, music, check, figure, tmp_path):
    """In Chromium, WebKitGTK (iPhone Safari is WebKit) and Firefox ESR: the page loads and signs in, its lamps
    follow a sender at 30 updates a second or more, a setting applies (brightness 40 % limits the lamps), and the
    microphone drives the lamps (the level response, so that a steady test sound lights them), dark after Stop."""
    settings_file = tmp_path / "lightorgan.yaml"
    settings_file.write_text("analysis:\n  response: level\n")
    process, key = page_host.receiver(f"engine-{name}", "--config", settings_file)
    page = engine(name, music)
    if name == "chromium":
        open_page(page, page_host.base, key)
    else:
        page.open(f"{page_host.base}/#key={key}")
    signed_in = page.wait_for("window.lightorgan && window.lightorgan.status && window.lightorgan.control", 30)
    sender = counter_sender(spawn, f"engine-{name}-sender", page_host)
    time.sleep(1)  # the sender's first second is left out
    first = page.js("return window.lightorgan.updates")
    time.sleep(5)  # the updates of 5 s
    rate = (page.js("return window.lightorgan.updates") - first) / 5
    sender.stop()
    slide(page, "receiver.max_brightness", 40)
    page.wait_for("window.lightorgan.status.settings.some((r) => r.key === 'receiver.max_brightness' && r.value === '40')", 10)
    page.wait_for("window.lightorgan.status.sender === null", 10)  # the counter's frames timed out: dark
    tap(page, "#mic")
    page.wait_for("document.querySelector('#audio-msg').textContent.startsWith('Sending')", 20)
    started = time.time()
    time.sleep(6)  # 6 s of the microphone
    said = page.js("return document.querySelector('#audio-msg').textContent")
    page.screenshot(str(tmp_path / f"{name}-microphone.png"))
    tap(page, "#stop-audio")
    gone_dark(page, process)
    page.close()
    frames = shown(process, started)
    lit = [levels for _, levels in frames if max(levels) >= 40]
    brightest = max((max(levels) for _, levels in frames), default=None)
    source = next((line.split("sends its ")[-1] for line in process.log().splitlines() if "sends its " in line), "?")
    ok = (signed_in and rate >= 30 and len(lit) >= 50 and brightest is not None and brightest <= 102
          and frames[-1][1] == (0, 0, 0) and source.startswith("microphone at") and said.startswith("Sending"))
    check(f"{name}: the page signs in, its lamps follow a sender at 30+ updates/s, brightness 40 % set on the page "
          "limits the lamps, its microphone drives them, dark after Stop", ok,
          f"signed in {signed_in}, {rate:.1f} updates/s, {len(lit)} of {len(frames)} frames lit, brightest {brightest}, "
          f"last {frames[-1][1] if frames else None}, source {source!r}, page said {said!r}")
    figure(f"{name}: {rate:.1f} lamp updates/s; microphone {source}, {len(lit)} lit frames")
