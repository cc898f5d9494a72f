"""WS2812B / SK6812 pixels read back from SPI: QEMU's trace of the BCM2835 SPI block's register writes → the
kernel's transfers → LED bits → pixels, and the wire timing of those bits at the SPI clock the driver programmed,
held against the WS2812B datasheet.

The trace: `qemu-system-aarch64 -trace memory_region_ops_write,file=F` logs every MMIO write, the SPI block's
named 'bcm2835-spi' (QEMU 10, hw/ssi/bcm2835_spi.c). Its registers (BCM2835 ARM Peripherals, SPI chapter): CS at
0x00 (TA, bit 7: transfer active), FIFO at 0x04 (a byte a write when not in DMA mode), CLK at 0x08 (the divider:
SPI clock = core clock / CDIV; CDIV is even, 0 means 65536). Linux's spi-bcm2835 writes CLK, then CS with TA
set, then the bytes to FIFO (polling or interrupt mode: QEMU has no DMA for it), then CS without TA when the
transfer is done: a transfer is the FIFO writes between those two CS writes. QEMU drops FIFO writes made while
TA is clear; the trace still shows them, counted as `stray`.

Encodings of an LED bit:
- 3 SPI bits (rpi_ws281x, lightorgan's receiver): 1 → 110, 0 → 100, most significant bit first, zeros after the
  frame for the reset (the latch).
- 8 SPI bits (Adafruit's neopixel_spi at 6.4 MHz): 0 → 0xC0, 1 → 0xF0, zero bytes before and after.

The guest marks its steps with transfers of ASCII text `MARK:name` (`Trace.phases`).
"""
import re
from dataclasses import dataclass, field

CS, FIFO, CLK = 0x00, 0x04, 0x08
TA = 0x80
MARK = b"MARK:"
_WRITE = re.compile(r"addr 0x([0-9a-f]+) value 0x([0-9a-f]+) size \d+ name 'bcm2835-spi'")

# WS2812B datasheet (Worldsemi, v1.0): T0H 0.4 µs, T1H 0.8 µs ± 150 ns; a bit (TH + TL) 1.25 µs ± 600 ns;
# the reset (latch) low ≥ 280 µs (the newer parts; 50 µs in the older WS2812 datasheet).
DATASHEET = {"T0H": (0.40e-6, 150e-9), "T1H": (0.80e-6, 150e-9), "bit": (1.25e-6, 600e-9)}
RESET_LOW = 280e-6


@dataclass
class Transfer:
    """One SPI transfer as the driver fed it to the FIFO: its bytes and the CLK divider in force."""
    data: bytes
    divider: int

    @property
    def marker(self):
        """The name of a `MARK:name` transfer, else None."""
        return self.data[len(MARK):].decode(errors="replace") if self.data.startswith(MARK) else None


@dataclass
class Trace:
    transfers: list = field(default_factory=list)
    stray: int = 0  # FIFO writes while TA was clear (QEMU drops them)
    writes: int = 0  # the SPI block's register writes in the trace

    def phases(self):
        """{marker name: [the transfers after it, up to the next marker]} ("" for those before the first)."""
        phases, name = {"": []}, ""
        for transfer in self.transfers:
            if transfer.marker is not None:
                name = transfer.marker
                phases[name] = []
            else:
                phases[name].append(transfer)
        return phases


def parse_trace(lines):
    """The SPI transfers in QEMU's trace lines (any other device's lines are skipped)."""
    trace, active, data, divider = Trace(), False, bytearray(), 0
    for line in lines:
        found = _WRITE.search(line)
        if not found:
            continue
        trace.writes += 1
        offset, value = int(found[1], 16) & 0xFF, int(found[2], 16)
        if offset == CLK:
            divider = value & 0xFFFF
        elif offset == CS:
            if value & TA and not active:
                active, data = True, bytearray()
            elif not value & TA and active:
                active = False
                trace.transfers.append(Transfer(bytes(data), divider))
        elif offset == FIFO:
            if active:
                data.append(value & 0xFF)
            else:
                trace.stray += 1
    if active:  # cut off by the end of the trace
        trace.transfers.append(Transfer(bytes(data), divider))
    return trace


def read_trace(path):
    with open(path, errors="replace") as file:
        return parse_trace(file)


# -- LED bits -------------------------------------------------------------------------------------

@dataclass
class Decoded:
    """A frame's LED bytes in wire order (G, R, B a pixel for a WS2812B), the low time after its last LED bit
    in SPI bits (the reset), and what broke the encoding (None when nothing did)."""
    data: bytes
    reset_bits: int
    problem: object = None
    bits: str = ""  # the LED bits, "0"/"1"


def _bit_string(data):
    return "".join(f"{byte:08b}" for byte in data)


def decode_3bit(data):
    """A frame of 3-SPI-bit LED bits (110 = 1, 100 = 0, MSB first) followed by zeros."""
    spi = _bit_string(data)
    last = spi.rfind("1")
    if last < 0:
        return Decoded(b"", len(spi), "no LED bit: all zeros")
    if spi[0] != "1":
        return Decoded(b"", 0, "starts low: an LED bit starts high")
    groups = last // 3 + 1
    body = spi[:groups * 3]
    if len(body) < groups * 3:
        return Decoded(b"", 0, f"ends inside an LED bit ({len(spi)} SPI bits)")
    bits = []
    for index in range(groups):
        group = body[3 * index:3 * index + 3]
        if group not in ("100", "110"):
            return Decoded(b"", 0, f"SPI bits {group} at LED bit {index} (byte {3 * index // 8}) are neither 110 "
                                   "nor 100", "".join(bits))
        bits.append(group[1])
    return _to_bytes("".join(bits), len(spi) - len(body))


def decode_8bit(data, bit0=0xC0, bit1=0xF0):
    """A frame of 8-SPI-bit LED bits (Adafruit's neopixel_spi: `bit0`, `bit1` a byte) between zero bytes."""
    body = bytes(data).strip(b"\0")
    if not body:
        return Decoded(b"", 8 * len(data), "no LED bit: all zeros")
    wrong = next((index for index, byte in enumerate(body) if byte not in (bit0, bit1)), None)
    if wrong is not None:
        return Decoded(b"", 0, f"byte 0x{body[wrong]:02x} at LED bit {wrong} is neither 0x{bit1:02x} nor "
                               f"0x{bit0:02x}")
    trailing = len(data) - len(bytes(data).rstrip(b"\0"))
    return _to_bytes("".join("1" if byte == bit1 else "0" for byte in body), 8 * trailing)


def _to_bytes(bits, reset_bits):
    if len(bits) % 8:
        return Decoded(b"", reset_bits, f"{len(bits)} LED bits: not whole bytes", bits)
    return Decoded(bytes(int(bits[i:i + 8], 2) for i in range(0, len(bits), 8)), reset_bits, None, bits)


def encode_3bit(data):
    """LED bytes as 3-SPI-bit LED bits (no reset): the reference encoding, for tests of the decoder's pairing."""
    spi = "".join("110" if bit == "1" else "100" for bit in _bit_string(data))
    spi += "0" * (-len(spi) % 8)
    return bytes(int(spi[i:i + 8], 2) for i in range(0, len(spi), 8))


def pixels(data, order="grb"):
    """[(r, g, b)] of LED bytes in wire `order` (a WS2812B's is grb)."""
    width = len(order)
    return [tuple(data[i + order.index(colour)] for colour in "rgb")
            for i in range(0, len(data) - width + 1, width)]


def wire_bytes(colours, order="grb"):
    """The LED bytes of [(r, g, b)] in wire `order`."""
    return bytes(colour[("rgb").index(channel)] for colour in colours for channel in order)


# -- wire timing ----------------------------------------------------------------------------------

def spi_clock(core_hz, divider):
    """The SPI clock, Hz, of a CLK divider at the core clock (divider 0 means 65536)."""
    return core_hz / (divider or 65536)


def driver_divider(core_hz, requested_hz):
    """The CLK divider spi-bcm2835 programs for a transfer at `requested_hz` (its transfer_one: the smallest
    even divider not faster than asked, at least 2; 0, the slowest, when it would not fit 16 bits)."""
    if requested_hz >= core_hz / 2:
        return 2
    divider = -(-int(core_hz) // int(requested_hz))
    divider += divider % 2
    return 0 if divider >= 65536 else divider


@dataclass
class Timing:
    """The high and period times (seconds, (least, most)) of a 3-bit frame's LED bits at `spi_hz`, and its reset
    low. The driver's FIFO feeding (polling or interrupt) leaves an idle clock after each byte on real silicon;
    DMA, which a Pi uses for transfers of 96 bytes and more, does not: these times are DMA's, gapless."""
    spi_hz: float
    t0h: tuple
    t1h: tuple
    bit: tuple
    reset: float

    def problems(self):
        """What falls outside the datasheet's tolerances, in words; empty when nothing does."""
        found = []
        for name, measured in (("T0H", self.t0h), ("T1H", self.t1h), ("bit", self.bit)):
            nominal, tolerance = DATASHEET[name]
            if measured and (measured[0] < nominal - tolerance or measured[1] > nominal + tolerance):
                found.append(f"{name} {_us(measured)} outside {nominal * 1e6:.2f} µs ± {tolerance * 1e9:.0f} ns")
        if self.reset < RESET_LOW:
            found.append(f"reset low {self.reset * 1e6:.0f} µs < {RESET_LOW * 1e6:.0f} µs")
        return found

    def __str__(self):
        return (f"SPI {self.spi_hz / 1e6:.4f} MHz: T0H {_us(self.t0h)}, T1H {_us(self.t1h)}, bit {_us(self.bit)}, "
                f"reset low {self.reset * 1e6:.0f} µs")


def _us(span):
    if not span:
        return "–"
    low, high = (value * 1e6 for value in span)
    return f"{low:.3f} µs" if abs(high - low) < 5e-4 else f"{low:.3f}–{high:.3f} µs"


def timing(data, spi_hz):
    """The wire timing of a 3-bit frame at `spi_hz`, from the runs of its SPI bits (each LED bit is a high run
    and the low run after it; the low after the last LED bit is the reset). None if it does not decode."""
    decoded = decode_3bit(data)
    if decoded.problem:
        return None
    spi = _bit_string(data)
    runs = [len(run) for run in re.findall(r"1+|0+", spi)]  # high, low, high, low, …, the last low
    highs, lows = runs[0::2], runs[1::2]
    second = 1 / spi_hz
    t0 = [highs[i] for i, bit in enumerate(decoded.bits) if bit == "0"]
    t1 = [highs[i] for i, bit in enumerate(decoded.bits) if bit == "1"]
    periods = [high + low for high, low in zip(highs[:-1], lows)]

    def span(values):
        return (min(values) * second, max(values) * second) if values else ()
    return Timing(spi_hz, span(t0), span(t1), span(periods), decoded.reset_bits * second)
