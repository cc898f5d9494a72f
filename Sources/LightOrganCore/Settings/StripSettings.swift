/// Settings of the LED strip wired to the receiver itself (`receiver.strip.*`).
public struct StripSettings: Sendable, Equatable {
    /// Where the strip is: empty for none; `/dev/spidev0.0` (SPI0, MOSI on GPIO 10: every Pi); a
    /// Pi 5's `/dev/leds0` (`dtoverlay=ws2812-pio`); `virtual` for a strip that exists only on the
    /// page and in the terminal (to choose an effect before wiring one).
    public var device = ""
    /// Pixels of the strip, 1…``maximumPixels``.
    public var pixels = 60
    /// The chip of each pixel.
    public var led = StripLED.ws2812b
    /// The colours' order on the wire; nil: the chip's own (``StripLED/defaultOrder``).
    public var order: ColorOrder?
    /// How the levels become pixels.
    public var effect = StripEffect.scroll
    /// Brightness limit, percent of full (1…100): a 5 V supply gives about 60 mA a pixel at full white.
    public var brightness = 50
    /// Exponent from level to light, 1…4.
    public var gamma = 2.2
    /// The colour of each band.
    public var palette = Palette.standard

    /// Pixels a strip may have.
    public static let maximumPixels = 10_000
    /// `receiver.strip.device`'s word for a strip that exists only on the page and in the terminal.
    public static let virtualDevice = "virtual"

    public init() {}

    /// Whether a strip is set.
    public var isEnabled: Bool { !device.isEmpty }

    /// The order the wire takes.
    public var wireOrder: ColorOrder { order ?? led.defaultOrder }
}
