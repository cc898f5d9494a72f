"""An independent WS2812B encoder for the strip's tests: Adafruit's `neopixel_spi` (PyPI
adafruit-circuitpython-neopixel-spi, MIT, pure Python), the SPI NeoPixel driver of CircuitPython and Blinka.

It encodes each LED bit as one SPI byte at 6.4 MHz (0 → 0xC0, 1 → 0xF0), most significant bit first, the pixel
bytes in `pixel_order` (GRB by default), and writes the frame in one `spi.write()` between two runs of zero
bytes (80 µs each: the reset). It is built for a board: its package declares Adafruit-Blinka (the board's
`busio`, `digitalio`, `board`), which pulls in hardware libraries. Installed here with `pip --no-deps`
(Tests/System/requirements-no-deps.txt) beside adafruit-circuitpython-pixelbuf and -busdevice; it imports
`busio` and `digitalio` only for type names, so they are stubbed as modules with an empty class each, and the SPI bus passed in
is `CapturingSPI`, which keeps what it is asked to write.
"""
import sys
import types

# Blinka's modules, for the type names in the annotations that bus_device and neopixel_spi evaluate.
for _module, _type in (("busio", "SPI"), ("digitalio", "DigitalInOut")):
    if _module not in sys.modules:
        sys.modules[_module] = types.ModuleType(_module)
        setattr(sys.modules[_module], _type, type(_type, (), {}))

import neopixel_spi  # noqa: E402


class CapturingSPI:
    """What SPIDevice needs of a busio.SPI bus (try_lock, unlock, configure, write), keeping every write."""

    def __init__(self):
        self.writes, self.settings = [], {}

    def try_lock(self):
        return True

    def unlock(self):
        pass

    def configure(self, **settings):
        self.settings = settings

    def write(self, data, start=0, end=None):
        self.writes.append(bytes(data[start:end]))


def frame(colours, order="GRB"):
    """The bytes Adafruit's NeoPixel_SPI writes to its SPI bus for [(r, g, b)] at full brightness, and the
    baud rate it asked for."""
    bus = CapturingSPI()
    strip = neopixel_spi.NeoPixel_SPI(bus, len(colours), pixel_order=order, auto_write=False, brightness=1.0)
    for index, colour in enumerate(colours):
        strip[index] = colour
    strip.show()
    return bus.writes[-1], bus.settings.get("baudrate")


VERSION = neopixel_spi.__version__
