"""The browser as a sound source: the page's microphone button and its tab button make the browser a sender whose
lamps match the sound, dark after Stop, and a page whose audio never starts says so instead of "Sending".

Rules: those of every page test, in support/browser.py (the receiver in its own namespace, frames on its stdout,
the recorder in the page, one time line).
"""
import subprocess
import time
import urllib.parse

import numpy as np
import pytest

from support import music_metrics
from support.browser import gone_dark, open_page, shown, web_file
from support.page_music import fetch_up_front  # noqa: F401 (conftest.py fetches the recording up front)

pytestmark = [pytest.mark.browser]


def flash_times(frames):
    """Flash times per band of [(time, (b, m, t))] (music_metrics: L* rise ≥ 15 in 60 ms)."""
    times = np.array([at for at, _ in frames])
    levels = np.array([levels for _, levels in frames], dtype=float)
    return [music_metrics.flashes(times, music_metrics.lightness(levels[:, band])) for band in range(3)]


def on_audio_time(frames):
    """[(audio time s, (b, m, t))] of the receiver's shown frames [(wall time, levels)] of a page that sends: the page
    sends ~8.7 ms messages at 44.1 kHz, so each 10 ms of its audio completes one frame, shown as it completes, and
    the n-th frame shown is audio time n × 10 ms. A busy machine delays and bunches the page's messages, which moves
    wall times, not frames (beside two CPU hogs, bursts 1.5 s apart were 1.6 to 1.8 s apart on the wall clock)."""
    return [(index * 0.01, levels) for index, (_, levels) in enumerate(frames)]


def test_the_microphone_button_makes_the_browser_a_sender(page_host, browser, lightorgan, music, check, figure):
    process, key = page_host.receiver("microphone")
    page = browser("mic", fake_audio=music)
    open_page(page, page_host.base, key)
    page.click("#mic")
    page.wait_for("window.__recorded.sent.length > 10", 20)
    first_sent = page.js("return window.__recorded.sent[0][0]") / 1000
    time.sleep(16)  # the fake microphone plays the recording in real time: 16 s of it
    sent = page.js("return window.__recorded.sent")
    page.click("#stop-audio")
    gone_dark(page, process)
    page.close()
    frames = on_audio_time(shown(process, first_sent - 0.5))
    analysed = subprocess.run([lightorgan, "analyze", "--fps", "100", music], capture_output=True, text=True,
                              check=True).stdout
    times, levels = music_metrics.read_frames(analysed)
    reference = [music_metrics.flashes(times, music_metrics.lightness(levels[:, band])) for band in range(3)]
    lamps = flash_times([f for f in frames if f[0] <= 15])
    # The fake capture starts somewhere near the file's start: find the one offset that lines all
    # three bands up best.
    base = frames[0][0] if frames else 0
    best = (0, None)
    for offset in np.arange(-3.0, 3.0, 0.005):
        matched = sum(music_metrics.match(np.array([f - base + offset for f in lamps[band]]),
                                          reference[band][reference[band] <= 15])[0] for band in range(3))
        if matched > best[0]:
            best = (matched, offset)
    scores = []
    for band in range(3):
        shifted = np.array([f - base + best[1] for f in lamps[band]]) if best[1] is not None else np.array([])
        window = reference[band][(reference[band] >= 1) & (reference[band] <= 14)]
        in_window = shifted[(shifted >= 1) & (shifted <= 14)]
        scores.append(music_metrics.f_measure(*music_metrics.match(in_window, window)))
    ended = frames[-1][1] == (0, 0, 0) if frames else False
    rate = next((line.split(" at ")[-1] for line in process.log().splitlines() if "sends its microphone at" in line), "?")
    ok = min(scores) >= 0.9 and ended and len(sent) > 100
    check("the microphone button makes the browser a sender: its lamps match `lightorgan analyze` of the file "
          "(onset F ≥ 0.9 per band), dark after Stop", ok,
          f"F bass {scores[0]:.2f} mid {scores[1]:.2f} treble {scores[2]:.2f}, {len(sent)} sound messages at "
          f"{rate}, last frame {frames[-1][1] if frames else None}")
    figure(f"microphone → lamps onset F bass {scores[0]:.2f} mid {scores[1]:.2f} treble {scores[2]:.2f}")


@pytest.mark.timing
def test_the_tab_button_shares_another_tabs_audio(page_host, browser, check):
    process, key = page_host.receiver("tab")
    # Chromium picks the tab titled lightorgan-music itself (no dialog), as a person would in the picker.
    page = browser("tab", args=("--auto-select-tab-capture-source-by-title=lightorgan-music",
                                "--autoplay-policy=no-user-gesture-required"))
    open_page(page, page_host.base, key, phone=False)
    handle = page.driver.current_window_handle
    page.driver.switch_to.new_window("tab")
    page.driver.get("data:text/html," + urllib.parse.quote(web_file("music-tab.html")))
    page.driver.switch_to.window(handle)
    page.click("#tab")
    page.wait_for("window.__recorded.sent.length > 10", 20)
    first_sent = page.js("return window.__recorded.sent[0][0]") / 1000
    time.sleep(9)  # the other tab plays in real time: 9 s of it, six bursts a band
    page.click("#stop-audio")
    gone_dark(page, process)
    page.close()
    frames = on_audio_time(shown(process, first_sent - 0.5))
    flashes = flash_times(frames)
    # Each band flashes on its own tone: every 1.5 s; flashes on every burst (0.5 s) would be clicks.
    intervals = [float(np.median(np.diff(band))) if len(band) >= 2 else 0.0 for band in flashes]
    source = next((line.split("sends its ")[-1] for line in process.log().splitlines() if "sends its " in line), "?")
    ended = frames[-1][1] == (0, 0, 0) if frames else False
    ok = (all(len(band) >= 4 for band in flashes) and all(1.3 <= gap <= 1.7 for gap in intervals) and ended
          and source.startswith("tab at "))
    check("the tab button shares another tab's audio: each lamp flashes on its own band's bursts "
          "(every 1.5 s), dark after Stop", ok,
          f"flashes {[len(band) for band in flashes]}, median gaps {[round(gap, 2) for gap in intervals]} s, "
          f"source {source!r}, last frame {frames[-1][1] if frames else None}")


def test_the_page_says_why_when_no_sound_leaves(page_host, browser, music, check):
    """Firefox without a sound output device never starts its AudioContext: nothing leaves, and the page must
    not say it sends. An AudioContext that stays suspended (resume() does nothing) stands in for it here."""
    process, key = page_host.receiver("no-sound")
    page = browser("no-sound", fake_audio=music)
    page.driver.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": """
        window.AudioContext = class extends window.AudioContext {
          constructor(...args) { super(...args); super.suspend(); }
          resume() { return Promise.resolve(); }
        };"""})
    open_page(page, page_host.base, key)
    page.click("#mic")
    time.sleep(3)  # nothing may leave: 3 s of nothing
    said = page.js("return document.querySelector('#audio-msg').textContent")
    sent = page.js("return window.__recorded.sent.length")
    page.close()
    ok = said.startswith("Not sending") and "audio engine has not started" in said and sent == 0
    check("with an audio engine that never starts and nothing sent, the page says why instead of 'Sending'", ok,
          f"said {said!r}, {sent} sound messages sent")
