"""The receiver as a Bluetooth speaker (receiver.sound: bluetooth), in the boot of the kernel-device guest that
test_kernel_devices.py runs anyway (conftest.py's kernel_guest; support/bluetooth_guest.py, guests/bluetooth.sh):
Debian's kernel with hci_vhci, BlueZ's btvirt linking the Pi's controller (hci0) to a phone's (hci1) and a
stranger's (hci2), trixie's bluetoothd and BlueALSA, the tested executable. Only the radio is emulated.

In order, in the guest: the receiver starts before BlueZ and says, one line each, that bluetoothd is not running,
that there is no adapter, that BlueALSA is not running, and goes on once each has come; with no pairing window the
phone does not find the Pi; inside a short window (`lightorgan pair --seconds 20`) the phone and the stranger do,
and once the window has closed the phone's pairing is refused; inside a second window the phone pairs (and is
trusted) and connects; it plays a second of 1 kHz and pauses (the lamps go dark), then three tones (60 Hz, 1 kHz,
8 kHz, 1.5 s each, at 48 kHz) through its own BlueALSA, which the receiver plays on the loopback card and lights:
bass, then mid, then treble; the phone's Bluetooth goes off during the last tone and the lamps go dark within a
second; the stranger's pairing fails with no window open; bluetoothd restarts and the trusted phone connects again
with no window.
"""
import re

import pytest

from support import debian_roots, kernel_vm

pytestmark = [pytest.mark.vm, pytest.mark.slow, pytest.mark.timing]


def fetch_up_front():
    """trixie's root with BlueZ and BlueALSA (mmdebstrap, the first time) and gpio-sim, for the shared guest."""
    debian_roots.bluetooth_root()
    kernel_vm.gpio_sim_module()


# What guests/bluetooth.sh says, by the words its lines begin with (the longest that fits wins).
KEYS = ["controllers", "addresses", "set up in", "no window: discover", "window: discover",
        "window: discover again", "after the window: pair", "window: pair", "window: connect", "burst from",
        "pause from", "tones from", "phone leaves at", "after a restart: connect", "pair said",
        "stranger in the window: discover", "stranger after the windows: pair", "the Pi knows the stranger:", "ran in"]


class Said:
    """The guest's "VM: bt ..." lines: by the words they begin with, the receiver's log lines, the frames."""

    def __init__(self, console):
        self.lines, self.receiver, self.frames = {}, [], []
        for line in console.splitlines():
            if "VM: bt " not in line:
                continue
            text = line[line.index("VM: bt ") + len("VM: bt "):]
            if text.startswith("receiver said "):
                self.receiver.append(text[len("receiver said "):])
            elif text.startswith("frames"):
                self.frames = [tuple(float(value) for value in item.split(","))
                               for item in text[len("frames"):].split() if item.count(",") == 3]
            else:
                key = max((key for key in KEYS if text.startswith(key)), key=len, default=text)
                self.lines[key] = text[len(key):].strip()

    def get(self, key):
        return self.lines.get(key, "")

    def receiver_said(self, words):
        return [line for line in self.receiver if words in line]

    def receiver_lines(self):
        """The receiver's Bluetooth lines, without the log's prefix, for a check's detail."""
        return " | ".join(line.split("] ", 1)[-1] for line in self.receiver if "Bluetooth: " in line)


@pytest.fixture(scope="module")
def bt(kernel_guest):
    return Said(kernel_guest.console)


def _band(frame):
    """The band a frame lights alone (its level at least 150, the others at most 40), or None."""
    _, bass, mid, treble = frame
    levels = {"bass": bass, "mid": mid, "treble": treble}
    lit = [band for band, level in levels.items() if level >= 150]
    dark = [band for band, level in levels.items() if level <= 40]
    return lit[0] if len(lit) == 1 and len(dark) == 2 else None


def test_the_bluetooth_part_ran(kernel_guest, bt, check, figure):
    ran = re.match(r"([0-9.]+) s", bt.get("ran in"))
    figure(f"Bluetooth in the shared guest: {bt.get('ran in') or '?'} of its boot (set-up {bt.get('set up in')})")
    check("the guest ran the Bluetooth part to its end", ran is not None, kernel_guest.tail())
    check("btvirt made the Pi's, the phone's and a stranger's controllers",
          bt.get("controllers").split() == ["hci0", "hci1", "hci2"], bt.get("controllers"))


def test_the_receiver_says_what_is_missing_and_goes_on(bt, check):
    for missing, words in [("bluetoothd", "bluetoothd is not running: sudo apt install bluez"),
                           ("an adapter", "no Bluetooth adapter:"),
                           ("BlueALSA", "BlueALSA is not running: sudo systemctl enable --now bluealsa")]:
        check(f"without {missing} the receiver says so in one line with what to do", bt.receiver_said(words),
              bt.receiver_lines())
    check("once BlueZ is there, the adapter shows the receiver's name", bt.receiver_said('shows as "Organ Pi"'),
          bt.receiver_lines())


def test_no_phone_finds_or_pairs_outside_the_window(bt, check):
    check("with no window open the phone does not find the Pi", "not found" in bt.get("no window: discover"),
          bt.get("no window: discover"))
    check("after the window closed, the phone's pairing is refused", " failed " in bt.get("after the window: pair"),
          bt.get("after the window: pair"))
    check("a stranger finds the Pi inside the window", "found" in bt.get("stranger in the window: discover"),
          bt.get("stranger in the window: discover"))
    check("a stranger that found the Pi in a window does not pair once it has closed",
          " failed " in bt.get("stranger after the windows: pair"), bt.get("stranger after the windows: pair"))
    check("the Pi has not paired the stranger", "paired=True" not in bt.get("the Pi knows the stranger:"),
          bt.get("the Pi knows the stranger:"))


def test_a_phone_pairs_inside_the_window_and_is_trusted(bt, check, figure):
    found = re.search(r"found .* in ([0-9.]+) s", bt.get("window: discover"))
    paired = re.search(r"done in ([0-9.]+) s", bt.get("window: pair"))
    connected = re.search(r"done in ([0-9.]+) s", bt.get("window: connect"))
    figure(f"Bluetooth under TCG: found in {found[1] if found else '?'} s, paired in "
           f"{paired[1] if paired else '?'} s, A2DP connected in {connected[1] if connected else '?'} s")
    check("inside a window a device finds the Pi", found is not None, bt.get("window: discover"))
    check("inside the window the phone pairs", paired is not None, bt.get("window: pair"))
    check("the paired phone connects", connected is not None, bt.get("window: connect"))
    address = bt.get("addresses").split()[-1] if bt.get("addresses") else "?"
    check("lightorgan pair names the phone that paired, cleaned",
          f"paired: Evil Phone [31mred ({address})" in bt.get("pair said"), bt.get("pair said"))
    check("the receiver names the phone and its codec", bt.receiver_said("connected, codec SBC"),
          bt.receiver_lines())
    check("the phone's name is shown without its control characters (a tab, an escape sequence)",
          bt.receiver_said("Evil Phone [31mred (") and not any("\t" in line for line in bt.receiver),
          bt.receiver_lines())


def test_three_tones_light_bass_mid_treble_in_order(bt, check, figure):
    start = float(bt.get("tones from") or 0)
    frames = [frame for frame in bt.frames if frame[0] >= start]
    bands = [(frame[0], _band(frame)) for frame in frames]
    first = {band: next((at for at, lit in bands if lit == band), None) for band in ("bass", "mid", "treble")}
    counts = {band: sum(1 for _, lit in bands if lit == band) for band in ("bass", "mid", "treble")}
    shown = ", ".join(f"{band} from {at - start:.2f} s ({counts[band]} frames)" if at else f"{band} never"
                      for band, at in first.items())
    figure(f"Bluetooth: tones of 1.5 s from the phone's aplay: {shown}")
    for band in ("bass", "mid", "treble"):
        check(f"the {band} tone lights {band} alone in at least 40 frames ({counts[band]})", counts[band] >= 40, shown)
    check("bass, then mid, then treble", None not in first.values()
          and first["bass"] < first["mid"] < first["treble"], shown)
    check("the first lamp within 2 s of the phone's first write (its buffer, the link, the receiver's player)",
          first["bass"] is not None and first["bass"] - start < 2.0, shown)


def test_the_lamps_go_dark_when_the_phone_pauses_and_light_again(bt, check, figure):
    burst, paused = float(bt.get("burst from") or 0), float(bt.get("pause from") or 0)
    tones = float(bt.get("tones from") or 0)
    lit = [frame for frame in bt.frames if burst <= frame[0] < tones and max(frame[1:]) > 0]
    mid = sum(1 for frame in lit if _band(frame) == "mid")
    dark_at = max((frame[0] for frame in lit), default=paused)
    figure(f"Bluetooth: a 1 s burst lit mid alone in {mid} frames; the lamps dark {dark_at - paused:.2f} s after the "
           f"phone's player stopped (its last sound still to play here)")
    check(f"the phone's 1 kHz burst lights mid alone in at least 40 frames ({mid})", mid >= 40, f"{len(lit)} lit")
    check(f"the lamps dark within 1 s of the phone pausing ({dark_at - paused:.2f} s)", dark_at - paused <= 1.0,
          f"last lit frame at {dark_at:.2f}, paused at {paused:.2f}")
    check("the stream paused and began again (the receiver said playing twice before the phone left)",
          len(bt.receiver_said("Bluetooth: playing")) >= 2, bt.receiver_lines())


def test_the_lamps_go_dark_within_a_second_of_the_phone_leaving(bt, check, figure):
    left = re.match(r"([0-9.]+)", bt.get("phone leaves at"))
    check("the phone left during the last tone (its Bluetooth switched off)",
          left is not None and " off in " in bt.get("phone leaves at"), bt.get("phone leaves at"))
    if left is None:
        return
    at = float(left[1])
    lit_after = [frame for frame in bt.frames if frame[0] > at and max(frame[1:]) > 0]
    dark_at = max((frame[0] for frame in lit_after), default=at)
    figure(f"Bluetooth: the lamps dark {dark_at - at:.2f} s after the phone left")
    check(f"the lamps dark within 1 s of the phone leaving ({dark_at - at:.2f} s)", dark_at - at <= 1.0,
          f"{len(lit_after)} lit frames after it left")
    check("the receiver says the phone stopped streaming", bt.receiver_said("stopped streaming"),
          bt.receiver_lines())


def test_a_trusted_phone_connects_again_after_bluetoothd_restarts(bt, check):
    check("after bluetoothd restarts, the trusted phone connects with no window", "done" in
          bt.get("after a restart: connect"), bt.get("after a restart: connect"))
    check("the receiver opens its stream again", len(bt.receiver_said("connected, codec")) >= 2,
          bt.receiver_lines())
    check("lamps off at the end", bt.frames and max(bt.frames[-1][1:]) == 0, str(bt.frames[-1:]))

