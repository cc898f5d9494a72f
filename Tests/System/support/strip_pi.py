"""A Raspberry Pi booted with an LED strip on SPI0 (guests/raspi-strip.sh's steps, QEMU tracing the SPI block's
register writes): the transfers between the guest's markers, decoded by support/ws2812_spi.py, and the core clock
the guest's clock driver reports. For test_strip_on_the_pi.py and test_strip_cost_on_the_pi.py."""
import functools

from support import ws2812_spi

STRIP_HZ = 2_400_000  # the receiver's requested clock: 3 SPI bits an LED bit, 1.25 µs a bit
RESET_BYTES = 90  # the zero bytes after a frame's pixels (WS2812Encoding.resetBytes): 300 µs low


class StripPi:
    """A booted Pi with its SPI trace read: the transfers between the guest's markers, and the core clock."""

    def __init__(self, pi):
        self.pi, self.model = pi, pi.model
        self.trace = ws2812_spi.read_trace(pi.trace)
        self.phases = self.trace.phases()
        clock = pi.said(r"spi core clock (\S+) ([0-9]+)")
        self.clock_name, self.core_hz = (clock[1], int(clock[2])) if clock else ("?", 0)

    def transfers(self, phase):
        return self.phases.get(phase, [])

    def frames(self, phase):
        """[(transfer, decoded pixels or None, problem)] of a phase's transfers, as 3-bit WS2812B frames."""
        frames = []
        for transfer in self.transfers(phase):
            decoded = ws2812_spi.decode_3bit(transfer.data)
            frames.append((transfer, None if decoded.problem else ws2812_spi.pixels(decoded.data), decoded.problem))
        return frames

    def spi_hz(self, transfer):
        return ws2812_spi.spi_clock(self.core_hz, transfer.divider) if self.core_hz else 0.0


@functools.cache
def strip_of(pi):
    """The StripPi of a booted Pi (support.raspberry_pi.Boots), its trace read once for the session."""
    return StripPi(pi)
