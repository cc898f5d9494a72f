/// One light on a lighting target, patched at a universe and start address: how the three levels
/// become its channels.
///
/// Written in the settings file under `fixtures:`, one entry per fixture by a name of the
/// person's choice, or implied by a target written without one (`sacn://192.168.1.60`: dimmers
/// at universe 1, address 1).
public struct Fixture: Sendable, Equatable {
    /// The name under `fixtures:` (`wash`), or the target's text for the fixture a target implies.
    public var name: String
    /// ``LightingTarget/address`` of the device it is on.
    public var target: String
    /// The universe of its first channel (sACN 1…63999, Art-Net 0…32767; not used by DDP).
    public var universe = 1
    /// Its first channel, 1-based: 1…512 in a universe; DDP: the first byte of the device's pixel
    /// data (1 is pixel 0, 4 is pixel 1, …).
    public var address = 1
    /// How levels become channels.
    public var layout = FixtureLayout.dimmers
    /// Pixels of a `segments` or `blend` strip, 1…10000.
    public var pixels = 30
    /// Exponent from level to light, 1…4: 2.2 for LEDs and DMX dimmers driven linearly (WLED does
    /// not correct realtime data by default), 1 where the device applies its own curve.
    public var gamma = 2.2
    /// The colour of each band (bass, mid, treble) on colour layouts.
    public var palette = Palette.standard

    public init(name: String, target: String) {
        self.name = name
        self.target = target
    }

    /// Channels it takes: 3 for dimmers and rgb, 4 for rgbw, 3 a pixel for strips.
    public var channelCount: Int {
        switch layout {
        case .dimmers, .rgb: 3
        case .rgbw: 4
        case .segments, .blend, .scroll, .energy, .flash: 3 * pixels
        }
    }
}

/// How a fixture's channels show the three levels.
public enum FixtureLayout: String, Sendable, CaseIterable, CustomStringConvertible {
    /// Three dimmer channels: bass, mid, treble (three lamps, the classic light organ).
    case dimmers
    /// One colour fixture, red-green-blue: the bands' colours (``Palette``) mixed by their levels.
    case rgb
    /// One colour fixture, red-green-blue-white: as `rgb`, the white channel taking what the
    /// three colours share.
    case rgbw
    /// A pixel strip drawn with the ``StripEffect`` of the same name (``stripEffect``): segments,
    /// blend, scroll, energy, flash.
    case segments, blend, scroll, energy, flash

    public var description: String { rawValue }

    /// Whether the layout is a pixel strip (`pixels` applies).
    public var isStrip: Bool { stripEffect != nil }

    /// The strip effect the layout draws, for strip layouts: the effect of the same name.
    public var stripEffect: StripEffect? { StripEffect(rawValue: rawValue) }
}

/// The colour of each band on colour layouts, 8-bit RGB.
public struct Palette: Sendable, Equatable {
    /// Colours of bass, mid and treble, in that order.
    public var colors: [LampColor]

    /// Bass red, mid green, treble blue.
    public static let standard = Palette(colors: [
        .init(red: 255, green: 0, blue: 0), .init(red: 0, green: 255, blue: 0), .init(red: 0, green: 0, blue: 255),
    ])

    /// Parses three colours separated by commas, each `#rrggbb`, `rrggbb` or a name
    /// (``LampColor/names``); nil when it is not exactly three of those.
    public init?(parsing text: String) {
        let parts = text.split(separator: ",").map { String($0).trimmingWhitespace() }
        let colors = parts.compactMap(LampColor.init(parsing:))
        guard parts.count == 3, colors.count == 3 else { return nil }
        self.colors = colors
    }

    init(colors: [LampColor]) { self.colors = colors }

    /// What a palette allows, for messages.
    public static let allowed =
        "three colours for bass, mid, treble, separated by commas: #rrggbb or red, green, blue, white, amber, orange, yellow, cyan, magenta, purple"
}

/// An 8-bit RGB colour.
public struct LampColor: Sendable, Equatable {
    public var red: UInt8
    public var green: UInt8
    public var blue: UInt8

    /// Colours known by name.
    public static let names: [String: LampColor] = [
        "red": .init(red: 255, green: 0, blue: 0), "green": .init(red: 0, green: 255, blue: 0),
        "blue": .init(red: 0, green: 0, blue: 255), "white": .init(red: 255, green: 255, blue: 255),
        "amber": .init(red: 255, green: 191, blue: 0), "orange": .init(red: 255, green: 100, blue: 0),
        "yellow": .init(red: 255, green: 255, blue: 0), "cyan": .init(red: 0, green: 255, blue: 255),
        "magenta": .init(red: 255, green: 0, blue: 255), "purple": .init(red: 128, green: 0, blue: 255),
    ]
}

extension LampColor {
    /// `#ff8000`, `ff8000` or a name from ``names``.
    public init?(parsing text: String) {
        let lowered = text.lowercased()
        if let named = Self.names[lowered] {
            self = named
            return
        }
        let hex = lowered.hasPrefix("#") ? String(lowered.dropFirst()) : lowered
        guard hex.count == 6, let value = UInt32(hex, radix: 16) else { return nil }
        self.init(red: UInt8(value >> 16 & 0xff), green: UInt8(value >> 8 & 0xff), blue: UInt8(value & 0xff))
    }
}
