"""The page's settings: one moved on the page applies at once, survives a restart and leaves the settings file as
it was; a bad value is refused in the settings file's words; a later edit of the file wins over the page, and
"use the file's value" goes back.

Rules: those of every page test, in support/browser.py (the receiver in its own namespace, frames on its stdout,
the recorder in the page, one time line).
"""
import os
import time

import pytest

from support.browser import counter_sender, open_page, shown, slide

pytestmark = [pytest.mark.browser]


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
    time.sleep(2)  # two seconds of the counter's frames, at the limit
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
