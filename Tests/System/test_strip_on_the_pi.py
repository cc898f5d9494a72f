"""The receiver's LED strip (WS2812B on SPI0) on a real kernel: the packaged lightorgan on the emulated Raspberry Pi
3 and 4 writes its frames through spidev and the kernel's spi-bcm2835 driver into QEMU 10's BCM2835 SPI model. The
bytes the driver put in the FIFO (QEMU's trace of the SPI block's register writes) are decoded here into pixels
(support/ws2812_spi.py), held against the WS2812B datasheet at the SPI clock the driver programmed, and against
what Adafruit's neopixel_spi, an independent encoder from PyPI, makes of the expected pixels
(support/neopixel_reference.py).

Each model's whole boot and the Pi 3's counted boot are judged here (support/raspberry_pi.py's Boots; guests/raspi-strip.sh marks
its steps in the trace): the whole boot, after test_raspberry_pi.py's GPIO steps, with spidev's default transfer
limit (4096 bytes) for the route (busybox's own bytes back exactly), the receiver's frames, dark after a
disconnect, receiver.timeout and SIGTERM, test-leds' sequence and the errors; and the counted boot, after the cost
benchmark of test_strip_cost_on_the_pi.py, with `spidev.bufsiz=32768` on the kernel's command line, where a
600-pixel frame goes out as one transfer.

What the timing figures mean: QEMU's SPI model has no time of its own (a FIFO write moves at once); the times
are what the driver's CLK divider gives at the core clock the kernel's clock driver reports for QEMU's clock
model (found in the guest's clk_summary, not assumed). On a Pi the core clock is the firmware's (`core_freq`), and
without DMA the controller idles one clock after each byte, which the DMA a Pi uses for transfers of 96 bytes and
more does not: the figures check the divider and the encoding, not a real wire.
"""
import re

import pytest

from support import neopixel_reference, ws2812_spi
from support.raspberry_pi import COUNTED_MODELS, MODELS, SPI_DEVICE, fetch_up_front, prepare_beside  # noqa: F401 (conftest.py)
from support.strip_pi import RESET_BYTES, STRIP_HZ, strip_of

pytestmark = [pytest.mark.pi, pytest.mark.package, pytest.mark.slow, pytest.mark.timeout(1800)]

PALETTE = ((255, 0, 0), (0, 255, 0), (0, 0, 255))  # receiver.strip.palette's default: red, green, blue
# The route's hand-encoded pixels (guests/raspi-strip.sh) and the 384 bytes busybox writes.
ROUTE_PIXELS = [(255, 0, 0), (0, 255, 0), (0, 0, 255), (200, 100, 50)]
ROUTE_384 = bytes(i % 256 for i in range(384))
DARK = (0, 0, 0)


def segments(count, levels):
    """The receiver's `segments` effect at brightness 100 and gamma 1: pixel i shows band min(2, i*3/count) in its
    palette colour scaled by the band's level / 255."""
    bands = [min(2, i * 3 // count) for i in range(count)]
    return [tuple(round(channel * levels[band] / 255) for channel in PALETTE[band]) for band in bands]


def adafruit_wire(colours):
    """The G, R, B bytes of Adafruit's neopixel_spi frame for `colours`, decoded from its 8-bit encoding."""
    decoded = ws2812_spi.decode_8bit(neopixel_reference.frame(colours)[0])
    assert decoded.problem is None, decoded.problem
    return decoded.data


@pytest.fixture(scope="module", params=list(MODELS))
def strip_pi(request, pi_boots):
    """The Pi's whole boot (spidev's default transfer limit), guests/raspi-strip.sh's steps traced."""
    return strip_of(pi_boots.whole(request.param))


@pytest.fixture(scope="module", params=COUNTED_MODELS)
def large_strip_pi(request, pi_boots):
    """The Pi's counted boot, with spidev.bufsiz=32768, for the 600-pixel frame."""
    return strip_of(pi_boots.counted(request.param))


def _pixels_text(pixels):
    """Pixels as "r,g,b" with runs counted: "255,0,0 ×3, 0,0,0 ×3, 0,0,255 ×3"."""
    if pixels is None:
        return "no frame"
    runs = []
    for pixel in pixels:
        if runs and runs[-1][0] == pixel:
            runs[-1][1] += 1
        else:
            runs.append([pixel, 1])
    return ", ".join("{},{},{}".format(*pixel) + (f" ×{count}" if count > 1 else "") for pixel, count in runs)


def _difference(pixels, expected):
    """Where decoded pixels differ from the expected ones, in words (the first three pixels that differ)."""
    if len(pixels) != len(expected):
        return f"{len(pixels)} pixels, not {len(expected)}: {_pixels_text(pixels)}"
    wrong = [i for i, (got, want) in enumerate(zip(pixels, expected)) if got != want]
    return "; ".join(f"pixel {i} {pixels[i]}, expected {expected[i]}" for i in wrong[:3]) + \
        (f" (and {len(wrong) - 3} more)" if len(wrong) > 3 else "")


def _shows(strip, phase, expected, check, what):
    """Checks that a frame of `phase` shows `expected` and equals Adafruit's encoding of it; the frame found.
    When none does, says how the nearest decoded frame differs, or why the transfers did not decode."""
    frames = strip.frames(phase)
    found = next((frame for frame in frames if frame[1] == expected), None)
    detail = ""
    if not found:
        decoded = [pixels for _, pixels, _ in frames if pixels is not None]
        nearest = max(decoded, key=lambda pixels: sum(map(tuple.__eq__, pixels, expected)), default=None)
        problems = sorted({problem for _, _, problem in frames if problem})
        detail = (f"{len(frames)} transfers; nearest frame: {_difference(nearest, expected)}" if nearest else
                  f"{len(frames)} transfers, none decodes{': ' + '; '.join(problems[:2]) if problems else ''}")
    check(f"{strip.model.short}: {what}: a frame decodes to {_pixels_text(expected)}", found, detail)
    if found:
        decoded = ws2812_spi.decode_3bit(found[0].data).data
        check(f"{strip.model.short}: {what}: its G, R, B bytes equal Adafruit neopixel_spi "
              f"{neopixel_reference.VERSION}'s for the same pixels", decoded == adafruit_wire(expected),
              f"receiver {decoded.hex()} / Adafruit {adafruit_wire(expected).hex()}")
    return found


def test_spi_route_gives_back_busyboxs_bytes_exactly(strip_pi, check, figure):
    strip, said = strip_pi, strip_pi.pi.said
    short = strip.model.short
    figure(f"the emulated {short} booted, ran the route, the receiver's strip and its errors in "
           f"{strip.pi.seconds:.0f} s (QEMU 10, TCG, SPI traced: {strip.trace.writes} register writes)")
    check(f"{short}: /dev/spidev0.0 is there (built-in spidev on the tree's rohm,dh2228fv), bufsiz 4096",
          said(r"spidev crw\S* .*/dev/spidev0.0 bufsiz 4096$"), (said(r"spidev .*") or [""])[0])
    check(f"{short}: spi-bcm2835 runs without DMA (none in QEMU's model)", said(r"spi driver said .*not using dma"))
    check(f"{short}: the kernel's clock driver names spi-bcm2835's core clock", strip.core_hz > 0,
          (said(r"spi core clock.*") or ["no clock line"])[0])
    check(f"{short}: busybox's 3 bytes come back as one transfer, exactly",
          [transfer.data for transfer in strip.transfers("route-3")] == [b"\x01\x02\x03"],
          str([transfer.data[:8] for transfer in strip.transfers("route-3")]))
    check(f"{short}: busybox's 384 bytes (0…255, 0…127) come back as one transfer, exactly",
          [transfer.data for transfer in strip.transfers("route-384")] == [ROUTE_384],
          f"{[len(transfer.data) for transfer in strip.transfers('route-384')]} bytes")
    frame = _shows(strip, "route-pixels", ROUTE_PIXELS, check, "busybox's hand-encoded 4 pixels")
    if frame:
        transfer = frame[0]
        expected = ws2812_spi.driver_divider(strip.core_hz, SPI_DEVICE["spi-max-frequency"])
        check(f"{short}: CLK divider {transfer.divider} is the driver's for the device's 3 MHz at the core clock "
              f"found ({strip.core_hz / 1e6:g} MHz)", transfer.divider == expected, f"expected {expected}")
        timing = ws2812_spi.timing(transfer.data, strip.spi_hz(transfer))
        figure(f"{short} route: {strip.clock_name} {strip.core_hz / 1e6:g} MHz / CDIV {transfer.divider}: {timing}")
        check(f"{short}: the hand-encoded frame meets the WS2812B datasheet at that clock", not timing.problems(),
              "; ".join(timing.problems()))
    check(f"{short}: a 5000-byte write is refused whole (EMSGSIZE, spidev's 4096)",
          said(r"route 5000 bytes status 1 .*Message too long"), (said(r"route 5000 .*") or ["no line"])[0])
    check(f"{short}: nothing of the refused 5000-byte write on the wire", not strip.transfers("route-5000"),
          f"{len(strip.transfers('route-5000'))} transfers")
    check(f"{short}: no FIFO write outside a transfer", strip.trace.stray == 0, f"{strip.trace.stray}")


def test_receivers_frames_are_the_segments_pixels_in_one_transfer_each(strip_pi, check, figure):
    strip, short = strip_pi, strip_pi.model.short
    check(f"{short}: the receiver with a strip of 9 beside the GPIO lamps listens",
          strip.pi.said(r"strip-receiver listening"),
          f"{(strip.pi.said(r'strip-receiver .*') or [''])[0]}; {(strip.pi.said(r'lightorgan .*') or [''])[0]}")
    size = 9 * 9 + RESET_BYTES
    for phase, levels in (("full-255-0-255", (255, 0, 255)), ("levels-200-100-50", (200, 100, 50))):
        found = _shows(strip, phase, segments(9, levels), check, f"frames {list(levels)}")
        sizes = sorted({len(transfer.data) for transfer in strip.transfers(phase)})
        check(f"{short}: frames {list(levels)}: every frame one transfer of 9 × 9 + {RESET_BYTES} = {size} bytes",
              sizes == [size], f"transfer sizes {sizes}")
        if found and phase.startswith("full"):
            transfer = found[0]
            check(f"{short}: it ends in {RESET_BYTES} zero bytes", transfer.data.endswith(bytes(RESET_BYTES)))
            expected = ws2812_spi.driver_divider(strip.core_hz, STRIP_HZ)
            check(f"{short}: CLK divider {transfer.divider}: the receiver asked for 2.4 MHz (the driver's divider "
                  f"for it at {strip.core_hz / 1e6:g} MHz is {expected})", transfer.divider == expected)
            timing = ws2812_spi.timing(transfer.data, strip.spi_hz(transfer))
            figure(f"{short} receiver: {strip.clock_name} {strip.core_hz / 1e6:g} MHz / CDIV {transfer.divider}: "
                   f"{timing} (QEMU's clock model; see the module's docstring)")
            check(f"{short}: the receiver's frame decodes as WS2812B bits for its timing", timing is not None,
                  f"{len(transfer.data)} bytes")
            check(f"{short}: the receiver's frame meets the WS2812B datasheet at that clock (T0H, T1H, bit, reset "
                  "≥ 280 µs)", timing is not None and not timing.problems(),
                  "; ".join(timing.problems()) if timing else "")


def _last(strip, phase):
    frames = strip.frames(phase)
    return frames[-1][1] if frames else None


def test_strip_goes_dark_on_disconnect_timeout_and_sigterm(strip_pi, check):
    strip, short = strip_pi, strip_pi.model.short
    dark = [DARK] * 9
    for phase, what in (("full-255-0-255", "the sender disconnects"),
                        ("levels-200-100-50", "the sender disconnects again"),
                        ("timeout", "receiver.timeout (1 s) passes with the sender connected and silent"),
                        ("sigterm", "the receiver gets SIGTERM")):
        lit = any(pixels and pixels != dark for _, pixels, _ in strip.frames(phase))
        last = _last(strip, phase)
        check(f"{short}: lit before {what}", lit, f"{len(strip.frames(phase))} transfers")
        check(f"{short}: dark when {what}", last == dark, f"last frame {_pixels_text(last)}")
    check(f"{short}: the receiver listened", strip.pi.said(r"strip-receiver listening"),
          (strip.pi.said(r"strip-receiver .*") or ["no line"])[0])
    check(f"{short}: the receiver ends after SIGTERM", strip.pi.said(r"strip receiver ended after SIGTERM"),
          (strip.pi.said(r"strip receiver (ended|still).*") or ["no line"])[0])
    check(f"{short}: nothing written after it ended", not strip.transfers("after-sigterm"),
          f"{len(strip.transfers('after-sigterm'))} transfers")


def _leds_problem(frames, count):
    """What differs from test-leds' sequence (first red and last blue, one pixel running first to last, dark),
    or None. `frames`: the decoded pixels of each transfer, in order."""
    distinct = [pixels for index, pixels in enumerate(frames) if index == 0 or pixels != frames[index - 1]]
    dark = [DARK] * count
    while distinct and distinct[0] == dark:
        distinct.pop(0)
    ends = [PALETTE[0]] + [DARK] * (count - 2) + [PALETTE[2]]
    if not distinct or distinct[0] != ends:
        return f"first frame {_pixels_text(distinct[0] if distinct else None)}, not red … blue"
    running = []
    for pixels in distinct[1:]:
        lit = [index for index, pixel in enumerate(pixels or []) if pixel != DARK]
        if len(lit) != 1:
            break
        running.append(lit[0])
    if running != list(range(count)):
        return f"the running pixel went {running}, not 0…{count - 1}"
    if distinct[-1] != dark:
        return f"ends {_pixels_text(distinct[-1])}, not dark"
    return None


def test_test_leds_shows_the_strips_ends_then_runs_one_pixel(strip_pi, check):
    strip, short = strip_pi, strip_pi.model.short
    check(f"{short}: test-leds with a strip ends well", strip.pi.said(r"strip test-leds status 0"),
          (strip.pi.said(r"strip test-leds .*") or [""])[0])
    frames = [pixels for _, pixels, _ in strip.frames("test-leds")]
    problem = _leds_problem(frames, 9) if frames else "no frame"
    check(f"{short}: test-leds: first pixel red and last blue, then one pixel runs 0…8, then dark", problem is None,
          problem or "")


def test_strip_faults_are_one_line_with_their_fix(strip_pi, check):
    strip, said, short = strip_pi, strip_pi.pi.said, strip_pi.model.short

    def error(name, what, *patterns):
        line = said(rf"{name} status ([0-9]+) lines ([0-9]+) said (.*)")
        detail = line[0] if line else (said(rf"{name} .*") or ["no line"])[0]
        check(f"{short}: {what}: the guest ran it and said how it ended", line is not None, detail)
        check(f"{short}: {what}: exits non-zero", line is not None and line[1] != "0", detail)
        check(f"{short}: {what}: says it in one line", line is not None and line[2] == "1", detail)
        check(f"{short}: {what}: the line says {' and '.join(patterns)}",
              line is not None and all(re.search(pattern, line[3]) for pattern in patterns), detail)
    error("no-device", "no device", r"dtparam=spi=on")
    check(f"{short}: a missing device is never created", said(r"no-device created nothing"))
    error("plain-file", "a plain file where the device should be", r"dtparam=spi=on", r"not a (character )?device")
    check(f"{short}: … and the plain file is left alone", said(r"plain-file left regular empty file 0"))
    error("no-permission", "no permission on /dev/spidev0.0", r"\bspi\b.*group|group.*\bspi\b")
    line = said(r"too-large status ([0-9]+) said (.*)")
    check(f"{short}: 600 pixels (5490 bytes) over spidev's 4096: the guest said how it ended", line is not None,
          line[0] if line else "no line")
    check(f"{short}: 600 pixels (5490 bytes) over spidev's 4096: exits non-zero", line is not None and line[1] != "0",
          line[0] if line else "no line")
    check(f"{short}: 600 pixels over spidev's 4096: the line names spidev.bufsiz=",
          line is not None and "spidev.bufsiz=" in line[2], line[0] if line else "no line")
    check(f"{short}: 600 pixels over spidev's 4096: the line names the frame's 5490 bytes",
          line is not None and "5490" in line[2], line[0] if line else "no line")
    check(f"{short}: 600 pixels over spidev's 4096: the line names the limit, 4096",
          line is not None and "4096" in line[2], line[0] if line else "no line")
    check(f"{short}: … and never writes a chunked frame", not strip.transfers("too-large"),
          f"transfer sizes {[len(transfer.data) for transfer in strip.transfers('too-large')]}")


def test_spidev_bufsiz_on_the_command_line_lets_5000_bytes_through(large_strip_pi, check, figure):
    strip, said, short = large_strip_pi, large_strip_pi.pi.said, large_strip_pi.model.short
    figure(f"the emulated {short} booted with spidev.bufsiz=32768 (and -icount) and ran in {strip.pi.seconds:.0f} s")
    check(f"{short}: spidev.bufsiz=32768 on the kernel's command line is in force", said(r"spidev .* bufsiz 32768$"))
    check(f"{short}: busybox's 5000 bytes go out as one transfer, exactly",
          [transfer.data for transfer in strip.transfers("route-5000")] == [bytes(5000)],
          f"{[len(transfer.data) for transfer in strip.transfers('route-5000')]}")


def test_spidev_bufsiz_lets_600_pixels_out_in_one_transfer(large_strip_pi, check):
    strip, short = large_strip_pi, large_strip_pi.model.short
    check(f"{short}: the receiver with a strip of 600 listens", strip.pi.said(r"large listening"),
          (strip.pi.said(r"large .*") or [""])[0])
    size = 600 * 9 + RESET_BYTES
    _shows(strip, "large", segments(600, (255, 0, 255)), check, "600 pixels, frames [255, 0, 255]")
    sizes = [len(transfer.data) for transfer in strip.transfers("large")]
    cut = [bytes_ for bytes_ in sizes if bytes_ != size]
    # A transfer the SPI core timed out ends early (spi_transfer_wait: twice the wire time + 200 ms of the
    # guest's clock, which a starved TCG guest can overrun); the kernel counts each, and the receiver logs it.
    timeouts = strip.pi.said(r"large spi timedout (\d+) errors (\d+) output-failed (\d+)")
    timed_out = int(timeouts[1]) if timeouts else 0
    check(f"{short}: the 600-pixel frames reached SPI", bool(sizes), f"{len(sizes)} transfers")
    check(f"{short}: every 600-pixel frame is one transfer of {size} bytes, but those the kernel timed out",
          len(cut) <= timed_out,
          f"{len(sizes)} transfers, cut short {cut}; {timeouts[0] if timeouts else 'no statistics line'}")
    check(f"{short}: a transfer not of {size} bytes is one cut short, never longer",
          all(bytes_ < size for bytes_ in cut), f"not of {size} bytes: {cut}")
    last = _last(strip, "large")
    check(f"{short}: dark when the sender disconnects", last == [DARK] * 600,
          f"last frame: {_pixels_text(last)}")


def test_the_pages_wiring_check_runs_the_strips_sequence(strip_pi, check):
    """The page's check of the strip ({"type": "check", "strip": true} on /live, from openssl s_client in the
    guest), read back from the SPI bytes: the same sequence as test-leds."""
    strip, said, short = strip_pi, strip_pi.pi.said, strip_pi.model.short
    answer = said(r"page check key (\d+) chars, answered (.*), status checkingStrip (.*)")
    check(f"{short}: the guest's page asked for the strip's check", answer is not None,
          answer[0] if answer else "no page check line")
    check(f"{short}: the page asks with its key (22 chars)", answer is not None and answer[1] == "22",
          answer[0] if answer else "no page check line")
    check(f"{short}: the receiver answers ok", answer is not None and '"ok":true' in answer[2],
          answer[0] if answer else "no page check line")
    check(f"{short}: the status says the check runs", answer is not None and answer[3] == '"checkingStrip":true',
          answer[0] if answer else "no page check line")
    frames = [pixels for _, pixels, _ in strip.frames("page-check")]
    problem = _leds_problem(frames, 9) if frames else "no frame"
    check(f"{short}: the page's check on the SPI bytes: first pixel red and last blue, one pixel runs 0…8, dark",
          problem is None, problem or "")
