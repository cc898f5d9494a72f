/// The chip of each pixel of a strip (`receiver.strip.type`): its colours and the order it takes
/// them in on the wire.
///
/// All of them take 800 kbit/s, most significant bit first, and latch a frame on a low of at
/// least 280 µs (WS2812B clones; the datasheet says 50 µs).
public enum StripLED: String, Sendable, CaseIterable, CustomStringConvertible {
    /// WS2812B, WS2811, "NeoPixel": green, red, blue.
    case ws2812b
    /// SK6812 RGB: green, red, blue, as WS2812B.
    case sk6812
    /// SK6812 RGBW: green, red, blue, white.
    case sk6812Rgbw = "sk6812-rgbw"

    public var description: String { rawValue }

    /// Colour channels a pixel takes: 3, or 4 with white.
    public var channels: Int { self == .sk6812Rgbw ? 4 : 3 }

    /// The order its datasheet gives.
    public var defaultOrder: ColorOrder {
        self == .sk6812Rgbw ? ColorOrder(parsing: "grbw")! : ColorOrder(parsing: "grb")!
    }
}

/// The order of a pixel's colours on the wire (`receiver.strip.order`): `grb`, `rgb`, `grbw`, …
public struct ColorOrder: Sendable, Equatable, CustomStringConvertible {
    /// For each byte on the wire, which colour it carries: 0 red, 1 green, 2 blue, 3 white.
    public let channels: [Int]

    /// `rgb`, `grb`, `brg`, … (each of r, g, b once) or with `w` once as well; nil otherwise.
    public init?(parsing text: String) {
        let letters = Array(text.lowercased())
        let map: [Character: Int] = ["r": 0, "g": 1, "b": 2, "w": 3]
        let channels = letters.compactMap { map[$0] }
        guard channels.count == letters.count, Set(channels).count == channels.count,
            Set(channels) == [0, 1, 2] || Set(channels) == [0, 1, 2, 3]
        else { return nil }
        self.channels = channels
    }

    public var description: String { String(channels.map { Array("rgbw")[$0] }) }

    /// What `receiver.strip.order` allows, for messages.
    public static let allowed =
        "auto (the type's own: grb, or grbw for sk6812-rgbw), or r, g, b (and w) once each in wire order: rgb, grb, brg, grbw, …"
}
