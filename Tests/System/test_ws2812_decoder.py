"""The strip tests' reader of SPI bytes (support/ws2812_spi.py), checked without a VM: on hand-made 3-bit bytes, on
frames from Adafruit's neopixel_spi (an independent encoder, support/neopixel_reference.py), on a hand-made QEMU
trace, and its datasheet timing at the dividers spi-bcm2835 programs on a real Pi's core clocks.
"""
import pytest

from support import neopixel_reference, ws2812_spi

# Hand-made: 0xFF is 110 eight times (DB 6D B6), 0x00 is 100 eight times (92 49 24).
FULL, ZERO = bytes.fromhex("db6db6"), bytes.fromhex("924924")
COLOURS = [(255, 0, 0), (0, 255, 0), (0, 0, 255), (200, 100, 50), (1, 128, 254), (0, 0, 0)]


def test_hand_made_3bit_bytes_decode_to_their_pixels():
    # One red pixel on the wire in G, R, B order, then 90 zero bytes.
    decoded = ws2812_spi.decode_3bit(ZERO + FULL + ZERO + bytes(90))
    assert decoded.problem is None
    assert decoded.data == bytes([0, 255, 0])
    assert ws2812_spi.pixels(decoded.data) == [(255, 0, 0)]
    assert decoded.reset_bits == 720
    # 0xA5 = 10100101: 110 100 110 100 100 110 100 110 = 11010011 01001001 10100110 = D3 49 A6
    decoded = ws2812_spi.decode_3bit(bytes.fromhex("d349a6") + bytes(3))
    assert decoded.data == b"\xa5"


@pytest.mark.parametrize("broken, says", [
    (bytes.fromhex("ff6db6") + bytes(9), "neither 110 nor 100"),   # 111 at the first LED bit
    (bytes.fromhex("00db6db6") + bytes(9), "starts low"),
    (bytes.fromhex("db6db6db") + bytes(9), "not whole bytes"),      # a ninth LED bit
    (bytes(12), "all zeros"),
])
def test_broken_3bit_frames_say_what_broke(broken, says):
    assert says in ws2812_spi.decode_3bit(broken).problem


def test_the_decoder_reads_adafruits_bytes_as_the_pixels_it_was_given():
    data, baudrate = neopixel_reference.frame(COLOURS)
    assert baudrate == 6_400_000
    decoded = ws2812_spi.decode_8bit(data)
    assert decoded.problem is None
    assert ws2812_spi.pixels(decoded.data) == COLOURS
    assert decoded.data == ws2812_spi.wire_bytes(COLOURS)  # G, R, B
    # 80 µs of zeros before and after at 6.4 MHz: 64 bytes.
    assert data[:64] == bytes(64) and data[-64:] == bytes(64) and data[64] in (0xC0, 0xF0)
    # Its RGB order puts R first on the wire.
    rgb, _ = neopixel_reference.frame(COLOURS, order="RGB")
    assert ws2812_spi.decode_8bit(rgb).data == ws2812_spi.wire_bytes(COLOURS, "rgb")


def test_3bit_and_adafruits_8bit_encodings_of_the_same_pixels_decode_alike():
    adafruit = ws2812_spi.decode_8bit(neopixel_reference.frame(COLOURS)[0]).data
    three = ws2812_spi.decode_3bit(ws2812_spi.encode_3bit(ws2812_spi.wire_bytes(COLOURS)) + bytes(90)).data
    assert three == adafruit


def test_transfers_and_markers_from_a_qemu_trace():
    def write(offset, value):
        return (f"memory_region_ops_write cpu 0 mr 0xffff addr 0x3f2040{offset:02x} value 0x{value:x} size 4 "
                "name 'bcm2835-spi'")
    lines = [write(0x08, 106), write(0x00, 0x03), write(0x04, 0x55),  # a stray write: TA clear
             "memory_region_ops_write cpu 0 mr 0x1 addr 0x3f201000 value 0x41 size 4 name 'pl011'",
             write(0x00, 0x83)]
    lines += [write(0x04, byte) for byte in b"MARK:route"] + [write(0x00, 0x30 | 0x03 | 0x10000)]
    lines += [write(0x08, 104), write(0x00, 0x83), write(0x00, 0x683)]  # interrupt mode sets TA twice
    lines += [write(0x04, byte) for byte in (1, 2, 3)] + [write(0x00, 0x30)]
    trace = ws2812_spi.parse_trace(lines)
    assert trace.stray == 1
    assert [transfer.data for transfer in trace.transfers] == [b"MARK:route", b"\x01\x02\x03"]
    assert trace.transfers[1].divider == 104
    assert trace.phases() == {"": [], "route": [trace.transfers[1]]}


@pytest.mark.parametrize("core_hz", [250e6, 400e6, 500e6])
def test_the_receivers_2_4_mhz_meets_the_datasheet_at_a_real_pis_core_clocks(core_hz):
    # A Pi 3 with core_freq=250 (rpi_ws281x's advice), its default 400 MHz, a Pi 4 with core_freq=500.
    divider = ws2812_spi.driver_divider(core_hz, 2_400_000)
    frame = ws2812_spi.encode_3bit(ws2812_spi.wire_bytes(COLOURS)) + bytes(90)
    timing = ws2812_spi.timing(frame, ws2812_spi.spi_clock(core_hz, divider))
    assert timing.problems() == [], str(timing)


def test_the_datasheet_check_catches_a_clock_too_slow_or_a_reset_too_short():
    frame = ws2812_spi.encode_3bit(ws2812_spi.wire_bytes(COLOURS))
    slow = ws2812_spi.timing(frame + bytes(90), 1_600_000)   # T0H 0.625 µs, T1H 1.25 µs
    assert any(problem.startswith("T0H") for problem in slow.problems())
    assert any(problem.startswith("T1H") for problem in slow.problems())
    short = ws2812_spi.timing(frame + bytes(20), 2_400_000)  # 67 µs of low
    assert [problem for problem in short.problems() if problem.startswith("reset")]
