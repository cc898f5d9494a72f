"""The receiver's page in real browsers (headless Chromium; WebKitGTK and Firefox ESR where a test says
so), over HTTPS from a non-loopback address.

Each test runs in a network namespace of its own (`netns`), with the receiver in a second one behind
a veth (`page_host`: support.browser.PageHost, 10.77.1.1 here, 10.77.1.2 there), with `--output
stdout` so every frame it shows is a line "MONOTONIC_TIME BASS MID TREBLE". The browser (`browser`)
stays here. A recorder injected into every page (web/recorder.js, before the page's own scripts,
through the DevTools protocol) keeps each lamp message with Date.now(), and each sound message the
page sends. CLOCK_MONOTONIC and the wall clock are both the kernel's, read here to put both on one
time line (support.browser.shown).
"""
import bisect
import http.client
import json
import os
import ssl
import subprocess
import time
import urllib.parse
import urllib.request

import numpy as np
import pytest

from support import music_corpus, music_metrics, sound_servers
from support.browser import Browser, open_page, quit_all, shown, slide, stalled_pages, tap, web_file, websocket
from support.engines import Firefox, WebKit
from support.processes import ages_ms, percentile
from support.strangers import Strangers

pytestmark = [pytest.mark.browser]

TRACK = "funk-rock"  # a band with drums, from the music corpus


def fetch_up_front():
    """The recording the page plays (the music corpus: apt downloads), before any namespace."""
    music_corpus.tracks([TRACK])


@pytest.fixture(scope="session")
def music():
    """A 30-s excerpt of a real recording (a band with drums): fetched up front, so only looked up here."""
    return os.path.join(music_corpus.tracks([TRACK]), f"{TRACK}.wav")


def counter_sender(spawn, name, host, *extra):
    return spawn(name, "send", "--pattern", "counter", "--fps", "100", "--host", host.address, "--port", "8181",
                 "--stats-interval", "0", *extra)


def flash_times(frames):
    """Flash times per band of [(time, (b, m, t))] (music_metrics: L* rise ≥ 15 in 60 ms)."""
    times = np.array([at for at, _ in frames])
    levels = np.array([levels for _, levels in frames], dtype=float)
    return [music_metrics.flashes(times, music_metrics.lightness(levels[:, band])) for band in range(3)]


def test_the_page_over_https_signs_in_and_plain_http_is_redirected(page_host, browser, check):
    process, key = page_host.receiver("https")
    base = page_host.base
    context = ssl._create_unverified_context()
    with urllib.request.urlopen(f"{base}/", context=context, timeout=10) as response:
        csp = response.headers.get("Content-Security-Policy", "")
        body = response.read().decode()
    page = browser("https")
    open_page(page, base, key)
    facts = page.js("return {secure: isSecureContext, media: !!navigator.mediaDevices, "
                    "control: window.lightorgan.control, hash: location.hash, "
                    "files: performance.getEntriesByType('resource').map(e => e.name)}")
    errors = [entry for entry in page.console_log() if entry.get("level") == "SEVERE"]
    ok = ("script-src 'self'" in csp and "<script" in body and facts["secure"] and facts["media"]
          and facts["control"] and facts["hash"] == "" and all(f.startswith(base) for f in facts["files"]) and not errors)
    check("the page over HTTPS from a LAN address: secure context, microphone API there, the #key= link signs in "
          "and leaves the address bar, every file from the receiver", ok,
          f"secure {facts['secure']}, mediaDevices {facts['media']}, control {facts['control']}, hash "
          f"{facts['hash']!r}, files {facts['files']}, console errors {errors[:2]}")
    plain = http.client.HTTPConnection(page_host.address, 8443, timeout=10)
    try:
        plain.request("GET", "/?from=a-typed-address")
        answer = plain.getresponse()
        redirect = (answer.status, answer.getheader("Location"), answer.read())
    finally:
        plain.close()
    check("plain http to the page's port gets a redirect to the same address over HTTPS, nothing else",
          redirect == (301, f"{base}/?from=a-typed-address", b""), f"got {redirect}")


@pytest.mark.timing
def test_the_pages_lamps_follow_a_sender(page_host, browser, spawn, music, check, figure, tmp_path):
    process, key = page_host.receiver("follow")
    page = browser("follow")
    open_page(page, page_host.base, key)
    started = time.time()
    sender = spawn("follow-sender", "send", "--input", music, "--host", page_host.address, "--port", "8181",
                   "--fps", "50", "--delay", "0", "--stats-interval", "0")
    time.sleep(12)
    recorded = page.js("return window.__recorded.lamps")
    status = page.js("return window.lightorgan.status")
    # The README's picture: the phone-sized page with the lamps lit.
    page.wait_for("window.lightorgan.levels.filter((level) => level > 120).length >= 2", 10, interval=0.005)
    viewport = page.js("return [innerWidth, innerHeight, devicePixelRatio]")
    size = page.screenshot(str(tmp_path / "page-phone.png"))
    sender.stop()
    page.close()
    check("phone_viewport() + screenshot() give a 1170×2532 PNG (CSS 390×844 at 3×)",
          size == (1170, 2532) and viewport == [390, 844, 3], f"{size[0]}×{size[1]}, CSS {viewport}")
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
    ok = len(lags) > 200 and percentile(lags, 0.95) <= 2 and len(lit) > 50 and rate >= 30
    check("the page's lamps follow a sender playing a WAV: each lamp message equals one of the receiver's "
          "last three shown frames (within two frames at 50 frames/s), 30+ updates a second", ok,
          f"{len(lags)} messages, lag p50 {percentile(lags, 0.5)} p95 {percentile(lags, 0.95)} max {max(lags, default=None)} "
          f"frames, {rate:.0f} updates/s, sender kind {status and status.get('sender') and status['sender'].get('kind')}")
    figure(f"page lamp updates {rate:.0f}/s with a sender at 50 frames/s; lag p95 {percentile(lags, 0.95)} frames")


def test_the_microphone_button_makes_the_browser_a_sender(page_host, browser, lightorgan, music, check, figure):
    process, key = page_host.receiver("microphone")
    page = browser("mic", fake_audio=music)
    open_page(page, page_host.base, key)
    page.click("#mic")
    page.wait_for("window.__recorded.sent.length > 10", 20)
    first_sent = page.js("return window.__recorded.sent[0][0]") / 1000
    time.sleep(16)
    sent = page.js("return window.__recorded.sent")
    page.click("#stop-audio")
    time.sleep(1.5)
    page.close()
    frames = shown(process, first_sent - 0.5)
    analysed = subprocess.run([lightorgan, "analyze", "--fps", "100", music], capture_output=True, text=True,
                              check=True).stdout
    times, levels = music_metrics.read_frames(analysed)
    reference = [music_metrics.flashes(times, music_metrics.lightness(levels[:, band])) for band in range(3)]
    # On the audio's own time line: the page sends ~8.7 ms messages at 44.1 kHz, so each 10 ms of its
    # audio completes one frame, shown as it completes; the n-th frame shown is audio time n × 10 ms.
    # (A busy machine delays and bunches the page's messages; that moves wall times, not frames.)
    frames = [(index * 0.01, levels) for index, (_, levels) in enumerate(frames)]
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
    time.sleep(9)
    page.click("#stop-audio")
    time.sleep(1.5)
    page.close()
    frames = shown(process, first_sent - 0.5)
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


def setting_rows(page):
    return {row["key"]: row for row in page.js("return window.lightorgan.status.settings")}


def test_a_setting_from_the_page_applies_at_once_and_survives_a_restart(page_host, browser, spawn, check, tmp_path):
    original = "# my receiver\nreceiver:\n  timeout: 2  # long\n"
    settings_file = tmp_path / "lightorgan.yaml"
    settings_file.write_text(original)
    state = str(tmp_path / "state-setting")
    process, key = page_host.receiver("setting", "--config", settings_file, state=state)
    page = browser("setting")
    open_page(page, page_host.base, key)
    row = '[data-key="receiver.max_brightness"]'
    slide(page, "receiver.max_brightness", 40)
    page.wait_for(f"document.querySelector('{row} .message').textContent === 'applied'", 10)
    shown_value = page.js(f"return document.querySelector('{row} .shown').textContent")
    slide(page, "receiver.max_brightness", 150, typed=True)
    page.wait_for(f"document.querySelector('{row} .message').textContent.includes('out of range')", 10)
    refused = page.js(f"return document.querySelector('{row} .message').textContent")
    page.js(f"const i = document.querySelector('{row} .value'); i.value = '1'.repeat(5000); "
            "i.dispatchEvent(new Event('input'))")
    page.wait_for(f"document.querySelector('{row} .message').textContent.startsWith('too long')", 10)
    too_long = page.js(f"return [document.querySelector('{row} .message').textContent, window.lightorgan.control]")
    rows_now = page.js("return window.lightorgan.status.settings")
    page.close()
    started = time.time()
    sender = counter_sender(spawn, "setting-sender", page_host)
    time.sleep(2)
    sender.stop()
    limited = [levels for _, levels in shown(process, started)]
    process.stop()
    process, key = page_host.receiver("setting-again", "--config", settings_file, state=state)
    page = browser("setting-again")
    open_page(page, page_host.base, key)
    rows = page.js("return window.lightorgan.status.settings")
    page.close()
    process.stop()
    kept = next((r for r in rows if r["key"] == "receiver.max_brightness"), {})
    before = next((r for r in rows_now if r["key"] == "receiver.max_brightness"), {})
    untouched = settings_file.read_text() == original
    ok = (limited and max(max(levels) for levels in limited) <= 102 and kept.get("value") == "40"
          and kept.get("source") == "page" and untouched and "receiver.max_brightness = 150 is out of range 1…100" in refused
          and shown_value == "40 %" and before.get("value") == "40" and too_long[1] is True)
    check("a setting moved on the page's slider (brightness 40 %) applies without a button, shows '40 %', limits the "
          "lamps at once, is still 40 % (from the page) after a restart, the settings file keeps its comments; a bad "
          "value typed shows the settings file's message and changes nothing; a value over 4 KiB is 'too long', "
          "the connection kept", ok,
          f"highest level {max((max(l) for l in limited), default=None)} of {len(limited)} frames, shown {shown_value!r}, "
          f"after the refusal {before.get('value')}, after restart {kept}, file untouched {untouched}, refusal {refused!r}; "
          f"a 5000-character value: {too_long[0]!r}, still connected with control {too_long[1]}")


def test_garbage_a_wrong_key_and_foreign_origins_are_refused_and_change_nothing(page_host, browser, check, tmp_path):
    process, key = page_host.receiver("refusals")
    address, base = page_host.address, page_host.base
    foreign = websocket(address, "/live", "https://evil.example")
    no_origin = websocket(address, "/audio", "null")
    wrong = websocket(address, "/live", base, json.dumps({"type": "hello", "key": "not-the-key-at-all-1234"}))
    garbage = websocket(address, "/live", base, b"\xff\x00{not json")
    unkeyed = websocket(address, "/live", base, json.dumps({"type": "set", "id": 1, "key": "receiver.timeout", "value": "9"}))
    rate = websocket(address, "/audio", base, json.dumps({"type": "start", "key": key, "sampleRate": 5}))
    nan = websocket(address, "/audio", base, json.dumps({"type": "start", "key": key, "sampleRate": 48000}),
                    [b"\x00\x00\xc0\x7f" * 512])
    huge = websocket(address, "/audio", base, json.dumps({"type": "start", "key": key, "sampleRate": 48000}),
                     [b"\x00" * 200_000])
    page = browser("refusals")
    open_page(page, base, "wrong-key-wrong-key-00")
    page.wait_for("window.lightorgan.control === false && !localStorage.getItem('lightorgan.key')", 10)
    said = page.js("return document.body.innerText")
    page.close()
    changed = (tmp_path / "state-refusals" / "page-settings.yaml").exists()
    process.stop()
    ok = (foreign[0] == 403 and no_origin[0] == 403 and wrong[1] and wrong[1][0] == 4001 and garbage[1]
          and garbage[1][0] in (1003, 1007) and unkeyed[1] and unkeyed[1][0] in (1008, 4001) and rate[1] and rate[1][0] == 1008
          and nan[1] and nan[1][0] == 1007 and huge[1] and huge[1][0] == 1009 and "not accepted" in said and not changed)
    check("refused with a reason, nothing changed: a foreign Origin (403), Origin null (403), a wrong key (4001), "
          "garbage (1003/1007), a setting without hello and key (1008/4001), a 5 Hz sample rate (1008), NaN samples (1007), "
          "a 200 kB message (1009); the page says the key was not accepted", ok,
          f"foreign {foreign}, null {no_origin}, wrong {wrong}, garbage {garbage}, unkeyed {unkeyed}, rate {rate}, "
          f"nan {nan}, huge {huge}, page file written {changed}")


@pytest.mark.timing
def test_pages_that_stop_reading_leave_the_frame_age_as_it_was(page_host, spawn, check, figure):
    process, key = page_host.receiver("stalled")
    sender = counter_sender(spawn, "stalled-sender", page_host)
    time.sleep(1)
    quiet_from = time.monotonic()
    time.sleep(6)
    stalled_from = time.monotonic()
    pages = stalled_pages(page_host.address, 10)
    try:
        time.sleep(6)
        sender.stop()
    finally:
        for connection in pages:
            connection.close()
    ages = ages_ms(process, sender)
    without = [age for at, age in ages if quiet_from <= at < stalled_from]
    with_pages = [age for at, age in ages if at >= stalled_from + 0.5]
    base, loaded = percentile(without, 0.99), percentile(with_pages, 0.99)
    ok = len(without) > 400 and len(with_pages) > 400 and loaded <= base + 3
    check("10 pages that stop reading leave the lamps' frame age as it was (p99 within 3 ms)", ok,
          f"p99 {base:.2f} ms without, {loaded:.2f} ms with; p50 {percentile(without, 0.5):.2f} / "
          f"{percentile(with_pages, 0.5):.2f} ms; {len(without)} / {len(with_pages)} frames")
    figure(f"frame age p99 {base:.2f} ms without, {loaded:.2f} ms with 10 stalled pages")


def test_a_later_edit_of_the_file_wins_and_use_the_files_value_goes_back(page_host, browser, check, tmp_path):
    settings_file = tmp_path / "lightorgan.yaml"
    settings_file.write_text("receiver:\n  max_brightness: 80  # the owner's\n")
    state = str(tmp_path / "state-file-edit")
    page_file = os.path.join(state, "page-settings.yaml")
    key_row = '[data-key="receiver.max_brightness"]'

    def start(name):
        process, key = page_host.receiver(name, "--config", settings_file, state=state)
        page = browser(name)
        open_page(page, page_host.base, key)
        return process, page

    process, page = start("edit-1")
    slide(page, "receiver.max_brightness", 40)
    page.wait_for(f"document.querySelector('{key_row} .message').textContent === 'applied'", 10)
    page.wait_for("window.lightorgan.status.settings.some((r) => r.key === 'receiver.max_brightness' && r.source === 'page')", 5)
    words = page.js(f"const r = document.querySelector('{key_row}'); return [r.querySelector('.source').textContent, "
                    "r.querySelector('.use-file').textContent, r.querySelector('.use-file').hidden]")
    page.close()
    process.stop()
    # The owner edits the file afterwards (80 → 90) and restarts: the newer change wins.
    settings_file.write_text("receiver:\n  max_brightness: 90  # the owner's\n")
    process, page = start("edit-2")
    after_edit = setting_rows(page)["receiver.max_brightness"]
    logged = [line for line in process.log().splitlines() if "from 80 to 90 since the page set 40" in line]
    page_file_after_edit = open(page_file).read() if os.path.exists(page_file) else ""
    # Set on the page again, then back with "use the file's value".
    slide(page, "receiver.max_brightness", 30)
    page.wait_for("window.lightorgan.status.settings.some((r) => r.key === 'receiver.max_brightness' && r.value === '30')", 10)
    page.click(f"{key_row} .use-file")
    page.wait_for("window.lightorgan.status.settings.some((r) => r.key === 'receiver.max_brightness' && r.source === 'file')", 10)
    back = setting_rows(page)["receiver.max_brightness"]
    button_hidden = page.js(f"return document.querySelector('{key_row} .use-file').hidden")
    page.close()
    process.stop()
    process, page = start("edit-3")
    restarted = setting_rows(page)["receiver.max_brightness"]
    page.close()
    process.stop()
    ok = (words[0] == "From set on this page" and words[1] == "Use the file’s value (80 %)" and not words[2]
          and after_edit["value"] == "90" and after_edit["source"] == "file" and logged
          and "max_brightness" not in page_file_after_edit
          and back["value"] == "90" and back["source"] == "file" and button_hidden
          and restarted["value"] == "90" and restarted["source"] == "file")
    check("a page value (40) shows its source and a way back; a later edit of the file (80 → 90) wins at the restart, "
          "logged, and leaves the page's file; 'use the file's value' drops a new page value (30) at once and for good",
          ok, f"row said {words}; after the edit {after_edit} (log {logged[:1]}, page file {page_file_after_edit!r}); "
          f"after 'use the file's value' {back}, button hidden {button_hidden}; after a restart {restarted}")


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
    time.sleep(3)
    said = page.js("return document.querySelector('#audio-msg').textContent")
    sent = page.js("return window.__recorded.sent.length")
    page.close()
    ok = said.startswith("Not sending") and "audio engine has not started" in said and sent == 0
    check("with an audio engine that never starts and nothing sent, the page says why instead of 'Sending'", ok,
          f"said {said!r}, {sent} sound messages sent")


@pytest.mark.timing
@pytest.mark.parametrize("name", ["chromium", "webkit"])
def test_the_owner_gets_in_while_strangers_flood_the_page(name, page_host, engine, spawn, music, check, figure,
                                                          tmp_path):
    """Strangers on the LAN (16 addresses of this namespace) hold 64 keyless view-only page sockets and 64 idle
    TCP connections, reopening each one the receiver closes, while the owner's browser (Chromium, and WebKitGTK
    as an iPhone's Safari) opens the key link and its microphone drives the lamps."""
    settings_file = tmp_path / "lightorgan.yaml"
    settings_file.write_text("analysis:\n  response: level\n")  # WebKit's mock microphone is a steady sound
    process, key = page_host.receiver(f"flood-{name}", "--config", settings_file)
    strangers_at = [f"10.77.1.{100 + i}" for i in range(16)]
    for address in strangers_at:
        subprocess.run(["ip", "address", "add", f"{address}/24", "dev", page_host.peer.test_veth], check=True)
    # The lamps' frame age before and during the flood: the pages share the receiver's event loop.
    counter = counter_sender(spawn, f"flood-{name}-counter", page_host)
    time.sleep(1)
    quiet_from = time.monotonic()
    time.sleep(3)
    flood_from = time.monotonic()
    strangers = Strangers(page_host.address, strangers_at, pages=64, idle=64).start()
    try:
        time.sleep(8)
        counter.stop()
        held_before = strangers.held()
        page = engine(name, music)
        opened_at = time.monotonic()
        page.open(f"{page_host.base}/#key={key}")
        page.wait_for("window.lightorgan && window.lightorgan.control === true", 30)
        signed_in = time.monotonic() - opened_at
        tap(page, "#mic")
        page.wait_for("window.lightorgan.audio && window.lightorgan.audio.sent > 10", 20)
        first_sent = time.time()
        time.sleep(10)
        said = page.js("return document.querySelector('#audio-msg').textContent")
        control = page.js("return window.lightorgan.control")
        tap(page, "#stop-audio")
        time.sleep(1)
        page.close()
    finally:
        strangers.stop()
    frames = shown(process, first_sent)
    lit = [levels for _, levels in frames if max(levels) >= 40]
    ages = ages_ms(process, counter)
    quiet = [age for at, age in ages if quiet_from <= at < flood_from]
    flooded = [age for at, age in ages if at >= flood_from + 3]
    age_p99 = (percentile(quiet, 0.99), percentile(flooded, 0.99))
    samples = strangers.samples[len(strangers.samples) // 4:]
    held = (sum(p for p, _ in samples) / max(1, len(samples)), sum(i for _, i in samples) / max(1, len(samples)))
    log = process.log().splitlines()
    refusals = [line for line in log if "page: refused" in line or "to make room" in line or "page: closed" in line]
    info = [line for line in refusals if " info " in line]
    # Three kinds (refused, evicted, overdue), a line each per 10 s, over the ~30 s of the flood.
    ok = (len(frames) > 300 and len(lit) > 20 and control and said.startswith("Sending") and refusals
          and len(info) == len(refusals) and len(refusals) <= 3 * (40 // 10 + 2)
          and len(quiet) > 200 and len(flooded) > 300 and age_p99[1] <= age_p99[0] + 10)
    check(f"{name}: 64 keyless page sockets and 64 idle connections from strangers do not keep the owner out: the "
          "key link signs in, the microphone drives the lamps, a sender's frames keep their age (p99 within 10 ms); "
          "the refusals are logged, a line per kind per 10 s", ok,
          f"strangers held {held_before} (pages, idle) before, {held[0]:.0f} / {held[1]:.0f} on average after, opened "
          f"{strangers.opened}; signed in after {signed_in:.1f} s; {len(frames)} frames, {len(lit)} lit; page said "
          f"{said!r}; frame age p99 {age_p99[0]:.2f} ms before, {age_p99[1]:.2f} ms in the flood ({len(quiet)} / "
          f"{len(flooded)} frames); {len(refusals)} refusal lines ({len(info)} at info), e.g. {refusals[:2]}")
    figure(f"flood, {name}: owner signed in after {signed_in:.1f} s with strangers holding {held[0]:.0f} page sockets "
           f"and {held[1]:.0f} idle connections (opened {strangers.opened}); {len(lit)} lit frames from the microphone; "
           f"frame age p50 {percentile(quiet, 0.5):.2f} → {percentile(flooded, 0.5):.2f} ms, "
           f"p99 {age_p99[0]:.2f} → {age_p99[1]:.2f} ms")


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
    time.sleep(0.6)
    idle = page.js("return [document.querySelector('#st-fps').textContent, document.querySelector('#st-age').textContent]")
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
    ok = (all(size == (1170, 2532) for size in sizes) and strip and idle == ["–", "–"] and banner[0]
          and banner[1].startswith("Connection to the receiver lost") and gone == "–")
    check("on a phone: the lamp strip stays on screen while the settings are scrolled to, the frame rate and age show "
          "'–' once nobody sends, a lost connection is said at the bottom of the screen wherever the person is", ok,
          f"screenshots {sizes}, strip in view {strip}, idle figures {idle}, banner {banner}, fps when lost {gone!r}")


@pytest.fixture
def engine(netns, tmp_path):
    """engine(name): the page's browser in one of the three engines, quit when the test ends: `chromium`
    (support.browser.Browser, its fake microphone playing the recording), `webkit` (MiniBrowser under Xvfb,
    its mock microphone) or `firefox` (Firefox ESR over WebDriver BiDi, its fake microphone, its sound into a
    private PulseAudio server's null sink)."""
    opened, servers = [], []

    def open_engine(name, music):
        log_dir = str(tmp_path / f"engine-{name}")
        if name == "chromium":
            started = Browser(log_dir=log_dir, fake_audio=music)
            started.name = name
        elif name == "webkit":
            started = WebKit(log_dir)
        else:
            pulse = sound_servers.pulseaudio(str(tmp_path / "pulse"), "module-null-sink sink_name=speakers")
            servers.append(pulse)
            started = Firefox(log_dir, pulse_server=sound_servers.socket_of(pulse))
        opened.append(started)
        return started
    yield open_engine
    quit_all(opened)
    for server in servers:
        server.stop()


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
    time.sleep(1)
    first = page.js("return window.lightorgan.updates")
    time.sleep(5)
    rate = (page.js("return window.lightorgan.updates") - first) / 5
    sender.stop()
    slide(page, "receiver.max_brightness", 40)
    page.wait_for("window.lightorgan.status.settings.some((r) => r.key === 'receiver.max_brightness' && r.value === '40')", 10)
    page.wait_for("window.lightorgan.status.sender === null", 10)  # the counter's frames timed out: dark
    tap(page, "#mic")
    page.wait_for("document.querySelector('#audio-msg').textContent.startsWith('Sending')", 20)
    started = time.time()
    time.sleep(6)
    said = page.js("return document.querySelector('#audio-msg').textContent")
    page.screenshot(str(tmp_path / f"{name}-microphone.png"))
    tap(page, "#stop-audio")
    time.sleep(2)
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
