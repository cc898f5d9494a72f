"""Who gets in, and what strangers cannot do: the page over HTTPS signs the owner in by the key link and plain http
is redirected; garbage, a wrong key and foreign origins are refused and change nothing; strangers flooding the page
do not keep the owner out; pages that stop reading leave the lamps' frame age as it was.

Rules: those of every page test, in support/browser.py (the receiver in its own namespace, frames on its stdout,
the recorder in the page, one time line).
"""
import http.client
import json
import os
import socket
import ssl
import subprocess
import time
import urllib.request

import pytest

from support.browser import PAGE_PORT, counter_sender, gone_dark, open_page, shown, stalled_pages, tap, websocket
from support.page_music import fetch_up_front  # noqa: F401 (conftest.py fetches the recording up front)
from support.processes import ages_ms, made, percentile
from support.strangers import Strangers

pytestmark = [pytest.mark.browser]


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


def tls_garbage(address):
    """Opens a TCP connection to the page, sends a TLS handshake record of random bytes and reads until the receiver
    closes it: the bytes it sent back, or None when it had not closed the connection 10 s later."""
    with socket.create_connection((address, PAGE_PORT), timeout=10) as connection:
        connection.sendall(b"\x16\x03\x01\x02\x00" + os.urandom(512))
        answer = b""
        try:
            while chunk := connection.recv(4096):
                answer += chunk
        except ConnectionResetError:
            pass
        except TimeoutError:
            return None
        return answer


def test_garbage_a_wrong_key_and_foreign_origins_are_refused_and_change_nothing(page_host, browser, check, tmp_path):
    process, key = page_host.receiver("refusals")
    address, base = page_host.address, page_host.base
    tls = tls_garbage(address)
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
    check("a TLS handshake of random bytes: the receiver closes the connection", tls is not None,
          "still open after 10 s")
    check("a TLS handshake of random bytes: answered with a TLS alert or nothing",
          tls is not None and (tls == b"" or tls[:1] == b"\x15"), f"answer {tls[:16] if tls else tls}")
    check("a foreign Origin is refused (403)", foreign[0] == 403, f"foreign {foreign}")
    check("Origin null is refused (403)", no_origin[0] == 403, f"null {no_origin}")
    check("a wrong key is refused (4001)", bool(wrong[1]) and wrong[1][0] == 4001, f"wrong {wrong}")
    check("garbage is refused (1003/1007)", bool(garbage[1]) and garbage[1][0] in (1003, 1007), f"garbage {garbage}")
    check("a setting without hello and key is refused (1008/4001)",
          bool(unkeyed[1]) and unkeyed[1][0] in (1008, 4001), f"unkeyed {unkeyed}")
    check("a 5 Hz sample rate is refused (1008)", bool(rate[1]) and rate[1][0] == 1008, f"rate {rate}")
    check("NaN samples are refused (1007)", bool(nan[1]) and nan[1][0] == 1007, f"nan {nan}")
    check("a 200 kB message is refused (1009)", bool(huge[1]) and huge[1][0] == 1009, f"huge {huge}")
    check("the page says the key was not accepted", "not accepted" in said, said[:200])
    check("nothing changed: no page settings file written", not changed, f"page file written {changed}")


# Seconds after pages stop reading from which the receiver skips their pushes: their buffers fill first (the kernel's
# send buffer, then NIO's up to its high-water mark), and until then it writes to them as to pages that read. A
# probe in sendLamps saw the first skip 11.5 s after they stopped reading.
STALLED_PAGES_SKIPPED_AFTER = 20


@pytest.mark.timing
def test_pages_that_stop_reading_leave_the_frame_age_as_it_was(page_host, spawn, check, figure):
    process, key = page_host.receiver("stalled")
    sender = counter_sender(spawn, "stalled-sender", page_host)
    time.sleep(1)  # the sender's first second is left out
    quiet_from = time.monotonic()
    time.sleep(6)  # 6 s of frame ages without stalled pages,
    stalled_from = time.monotonic()
    pages = stalled_pages(page_host.address, 10)
    try:
        time.sleep(STALLED_PAGES_SKIPPED_AFTER + 6)  # and 6 s once their pushes are skipped
        sender.stop()
    finally:
        for connection in pages:
            connection.close()
    ages = ages_ms(process, sender)
    without = [age for at, age in ages if quiet_from <= at < stalled_from]
    with_pages = [age for at, age in ages if at >= stalled_from + STALLED_PAGES_SKIPPED_AFTER]
    # Judged where a cost of the stalled pages would show and the machine's own noise does not decide: the p95 (30 of
    # 600 frames) within 1 ms, the p99 (6 frames) within one frame period. Beside a writer at idle priority (as the
    # roots made beside the tests are) the p99 of the same receiver with no page moved between 0.4 and 6.7 ms from
    # run to run, its p95 between 0.28 and 0.37 ms.
    p95 = (percentile(without, 0.95), percentile(with_pages, 0.95))
    p99 = (percentile(without, 0.99), percentile(with_pages, 0.99))
    ok = len(without) > 400 and len(with_pages) > 400 and p95[1] <= p95[0] + 1 and p99[1] <= p99[0] + 10
    check("10 pages that stop reading leave the lamps' frame age as it was (p95 within 1 ms, p99 within a frame "
          "period, 10 ms)", ok,
          f"p95 {p95[0]:.2f} ms without, {p95[1]:.2f} ms with; p99 {p99[0]:.2f} / {p99[1]:.2f} ms; p50 "
          f"{percentile(without, 0.5):.2f} / {percentile(with_pages, 0.5):.2f} ms; {len(without)} / {len(with_pages)} "
          "frames")
    figure(f"frame age p95 {p95[0]:.2f} ms without, {p95[1]:.2f} ms with 10 stalled pages; p99 {p99[0]:.2f} / "
           f"{p99[1]:.2f} ms")


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
    time.sleep(1)  # the counter's first second is left out
    quiet_from = time.monotonic()
    time.sleep(3)  # 3 s of frame ages before the flood,
    flood_from = time.monotonic()
    strangers = Strangers(page_host.address, strangers_at, pages=64, idle=64).start()
    try:
        time.sleep(8)  # and 8 s in it, before the owner comes
        counter_stopped = time.monotonic()
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
        time.sleep(10)  # 10 s of the microphone in the flood
        said = page.js("return document.querySelector('#audio-msg').textContent")
        control = page.js("return window.lightorgan.control")
        tap(page, "#stop-audio")
        gone_dark(page, process)
        page.close()
    finally:
        strangers.stop()
    frames = shown(process, first_sent)
    lit = [levels for _, levels in frames if max(levels) >= 40]
    ages = ages_ms(process, counter)
    quiet = [age for at, age in ages if quiet_from <= at < flood_from]
    flooded = [age for at, age in ages if at >= flood_from + 3]
    # On a busy machine the counter (100 frames/s) makes fewer frames, and the receiver may take several per read
    # and show the newest: the count says who was starved; the ages of 100 or more frames say what the lamps saw.
    made_at = made(counter).values()
    made_quiet = sum(1 for at in made_at if quiet_from <= at < flood_from)
    made_flooded = sum(1 for at in made_at if flood_from + 3 <= at < counter_stopped)
    age_p99 = (percentile(quiet, 0.99), percentile(flooded, 0.99))
    samples = strangers.samples[len(strangers.samples) // 4:]
    held = (sum(p for p, _ in samples) / max(1, len(samples)), sum(i for _, i in samples) / max(1, len(samples)))
    log = process.log().splitlines()
    refusals = [line for line in log if "page: refused" in line or "to make room" in line or "page: closed" in line]
    info = [line for line in refusals if " info " in line]
    # Three kinds (refused, evicted, overdue), a line each per 10 s, over the ~30 s of the flood.
    ok = (len(frames) > 300 and len(lit) > 20 and control and said.startswith("Sending") and refusals
          and len(info) == len(refusals) and len(refusals) <= 3 * (40 // 10 + 2)
          and len(quiet) >= 100 and len(flooded) >= 100 and age_p99[1] <= age_p99[0] + 10)
    check(f"{name}: 64 keyless page sockets and 64 idle connections from strangers do not keep the owner out: the "
          "key link signs in, the microphone drives the lamps, a sender's frames keep their age (p99 within 10 ms); "
          "the refusals are logged, a line per kind per 10 s", ok,
          f"strangers held {held_before} (pages, idle) before, {held[0]:.0f} / {held[1]:.0f} on average after, opened "
          f"{strangers.opened}; signed in after {signed_in:.1f} s; {len(frames)} frames, {len(lit)} lit; page said "
          f"{said!r}; frame age p99 {age_p99[0]:.2f} ms before, {age_p99[1]:.2f} ms in the flood ({len(quiet)} / "
          f"{len(flooded)} frames shown of {made_quiet} / {made_flooded} made); {len(refusals)} refusal lines "
          f"({len(info)} at info), e.g. {refusals[:2]}")
    figure(f"flood, {name}: owner signed in after {signed_in:.1f} s with strangers holding {held[0]:.0f} page sockets "
           f"and {held[1]:.0f} idle connections (opened {strangers.opened}); {len(lit)} lit frames from the microphone; "
           f"frame age p50 {percentile(quiet, 0.5):.2f} → {percentile(flooded, 0.5):.2f} ms, "
           f"p99 {age_p99[0]:.2f} → {age_p99[1]:.2f} ms ({len(quiet)} / {len(flooded)} frames shown of "
           f"{made_quiet} / {made_flooded} made)")
