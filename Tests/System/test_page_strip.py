"""The receiver's page with an LED strip: the live pixel row follows the frames, the strip's effect and brightness
set on the page apply at once, a phone shows the row readably, and without a strip nothing of one shows.

Rules: the receiver drives a virtual strip (`--strip-device virtual`: pixels only on the page and in the status, no
hardware) beside `--output stdout`, behind a veth (`page_host`); the browser (`browser`, headless Chromium) stays
in the test's namespace. Frames of known levels come from the test itself (`frames`, support/pixel_row.py), so
every pixel is known: with `segments`, gamma 1 and brightness 100, a third of the pixels per band. The recorder
injected before the page's scripts (web/recorder.js) keeps every binary message, its levels and its pixels; the
canvas is read back at each pixel's centre (support.pixel_row.READ_CANVAS).
"""
import time

import pytest

from support.browser import open_page, slide, tap
from support.pixel_row import LIT, PIXELS, READ_CANVAS, STRIP, canvas_matches, groove, segments, shows

pytestmark = [pytest.mark.browser]


def test_the_pixel_row_follows_the_frames(page_host, browser, frames, check):
    process, key = page_host.receiver("follow", *STRIP, "--strip-effect", "segments", "--strip-brightness", "100")
    page = browser("follow")
    open_page(page, page_host.base, key)
    page.wait_for("window.lightorgan.stripView", 10)
    facts = page.js("return [window.lightorgan.status.receiver.strip, "
                    "[...document.querySelectorAll('#sender dd.strip-fact')].map((n) => n.textContent), "
                    "!document.querySelector('#pixels').hidden, document.querySelector('#pixels-caption').textContent]")
    check("the status names the strip (virtual, 30 pixels, ws2812b, segments)",
          facts[0] == {"device": "virtual", "pixels": PIXELS, "type": "ws2812b", "effect": "segments"},
          f"status {facts[0]}")
    check("the page shows the strip's facts",
          facts[1] == ["virtual (only on this page)", "30", "WS2812B", "Segments"], f"facts {facts[1]}")
    check("the page shows a pixel row", facts[2], f"row shown {facts[2]}")
    check("the pixel row's caption says 30 pixels, Segments", facts[3] == "· 30 pixels · Segments",
          f"caption {facts[3]!r}")
    view = page.js("const v = window.lightorgan.stripView; return [v.count, v.columns, v.rows, v.cssCell, "
                   "document.querySelector('#pixel-row').getBoundingClientRect().width, innerWidth]")
    check("on a phone (390 CSS px) the 30 pixels are one row", view[:3] == [PIXELS, PIXELS, 1],
          f"{view[0]} pixels in {view[1]} columns, {view[2]} rows")
    check("…each at least 9 CSS px wide", view[3] >= 9, f"{view[3]:.1f} CSS px each")
    check("…the row as wide as the page (within 40 px)", view[4] >= view[5] - 40,
          f"row {view[4]:.0f} of {view[5]} px")
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
    check("every binary message on /live is three levels and then 30 pixels",
          len(lamps) == len(strip), f"{len(lamps)} messages, {len(strip)} with pixels")
    check("at least 80 messages with pixels recorded", len(strip) >= 80, f"{len(strip)} with pixels")
    check("each message's pixels are the segments of its levels", not wrong, f"wrong {wrong[:3]}")
    rows = page.js("return [...document.querySelectorAll('#strip-settings-list .setting')].map((r) => "
                   "[r.dataset.key, r.querySelector('.locked').textContent])")
    check("the strip's settings show under 'LED strip' (effect, brightness, palette)",
          [key for key, _ in rows] == ["receiver.strip.effect", "receiver.strip.brightness", "receiver.strip.palette"],
          f"rows {rows}")
    check("the effect is locked by --strip-effect", "--strip-effect" in dict(rows).get("receiver.strip.effect", ""),
          f"rows {rows}")
    check("the brightness is locked by --strip-brightness",
          "--strip-brightness" in dict(rows).get("receiver.strip.brightness", ""), f"rows {rows}")
    check("the palette is not locked (no option sets it)", not dict(rows).get("receiver.strip.palette", ""),
          f"rows {rows}")


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
    check("the effect row offers eight effects (scroll, energy, flash, segments, blend, and on the beat bpm_strobe, "
          "bar_step, beat_pulse)", [value for value, _ in choices] == ["scroll", "energy", "flash", "segments", "blend",
                                                                       "bpm_strobe", "bar_step", "beat_pulse"],
          f"choices {choices}")
    check("the effect chosen on the page (Blend) applies: the pixels change at once", pixels == blend,
          f"pixels 0, 15 {pixels[:3]}, {pixels[45:48]}")
    check("…the canvas shows them", canvas_matches(read, blend), f"canvas {read and read[:2]}")
    check("…the row shows Blend, checked", words[:2] == ["Blend", "blend"], f"row {words[:2]}")
    check("…its line says it is mixed", "mixed" in words[2], f"line {words[2]!r}")
    check("…the facts say Blend", words[3] == "Blend", f"facts {words[3]!r}")
    check("…the row says it is set on this page", words[4] == "From set on this page", f"source {words[4]!r}")
    check("…the receiver logs it", logged, process.log()[-300:])
    slide(page, "receiver.strip.brightness", 50)
    page.wait_for("window.lightorgan.status.settings.some((r) => r.key === 'receiver.strip.brightness' && r.value === '50')", 10)
    half = [100, 50, 25] * PIXELS
    shows(page, half)
    pixels = page.js("return Array.from(window.lightorgan.pixels || [])")
    read = page.js(READ_CANVAS)
    shown = page.js("return document.querySelector('[data-key=\"receiver.strip.brightness\"] .shown').textContent")
    sender.stop()
    check("the strip's brightness limit moved to 50 % on its slider halves the pixels (200, 100, 50 → 100, 50, 25) "
          "on the page", pixels == half, f"pixel 0 {pixels[:3]}")
    check("…and its canvas", canvas_matches(read, half), f"canvas {read and read[0]}")
    check("…the slider shows 50 %", shown == "50 %", f"shown {shown!r}")


def test_the_page_without_a_strip_shows_nothing_of_one_but_the_effect(page_host, browser, frames, check):
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
          note: document.querySelector('[data-key="receiver.mode"] .gpio-note').textContent,
          effect_in: document.querySelector('[data-key="receiver.strip.effect"]')?.parentElement.id}""")
    check("without a strip the status names none", seen["strip"] is None, f"strip {seen['strip']}")
    check("the page shows nothing of one: no pixel row, facts, settings or check",
          not any(seen[k] for k in ("pixels", "mini", "facts", "settings", "check")),
          f"shown {[k for k in ('pixels', 'mini', 'facts', 'settings', 'check') if seen[k]]}")
    check("no strip setting shows but the effect (the lamps follow its beat effects)",
          seen["rows"] == ["receiver.strip.effect"], f"rows {seen['rows']}")
    check("the effect shows among the lamps' settings", seen["effect_in"] == "settings-list", seen["effect_in"])
    check("no message carries pixels", seen["messages"] == 0, f"{seen['messages']} with pixels")
    check("the page gets lamp messages (three levels each)", seen["lengths"] > 0, f"{seen['lengths']} messages")
    check("the mode's GPIO note says nothing of a strip", "strip" not in seen["note"], f"note {seen['note']!r}")


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
    time.sleep(0.4)  # the compact bar slides in (a CSS transition) before the picture
    sizes.append(page.screenshot(str(tmp_path / "strip-settings.png")))
    sender.stop()
    page.wait_for("window.lightorgan.status && !window.lightorgan.status.sender", 10)  # the sender's gone: dark
    tap(page, "#check-strip")
    page.wait_for("window.lightorgan.status.checkingStrip === true", 5)
    time.sleep(3.2)  # the runner about half-way (the check's own pace: 2 s of ends, a 3-s run)
    page.wait_for("document.querySelector('#strip').classList.contains('shown')", 5)
    bar = page.js("const r = document.querySelector('#pixel-mini').getBoundingClientRect(); return [r.width, r.height, r.top]")
    sizes.append(page.screenshot(str(tmp_path / "strip-check.png")))
    page.close()
    process.stop()
    check("phone screenshots of the strip under the lamps, its settings and its check (1170 × 2532)",
          all(size == (1170, 2532) for size in sizes), f"screenshots {sizes[-3:]}, {lit} pixels lit")
    check("ThePage.md's picture is 520 × 889", docs == (520, 889), f"{docs}")
    check("the compact bar's pixel row on screen while the check's button is: at least 100 px wide", bar[0] >= 100,
          f"compact row {bar}")
    check("…at least 10 px high", bar[1] >= 10, f"compact row {bar}")
    check("…not above the top of the screen", bar[2] >= 0, f"compact row {bar}")
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
    check("a 300-pixel strip: the page gets 150 pixels and shows them on two rows", view[:3] == [150, 75, 2],
          f"{view[:3]}")
    check("…each pixel at least 4 CSS px wide", view[3] >= 4, f"{view[3]}")
    check("…and says so", view[4] == "300 pixels shown as 150, each the average of about 2.", f"{view[4]!r}")
