/// The settings of one fixture under `fixtures:` in the settings file
/// (`fixtures.wash.universe: 2`), or after `?` in a target (`sacn://10.0.0.9?universe=2`).
///
/// Every field but `target` has a default: universe 1, address 1, layout `dimmers` (DDP:
/// `segments`), 30 pixels, gamma 2.2, palette red, green, blue.
public enum FixtureSettings {
    /// A field of a fixture: its name, what it allows and what it means.
    public struct Field: Sendable {
        public let name: String
        public let allowed: String
        public let summary: String
    }

    /// The fields, in the order the example file lists them.
    public static let fields: [Field] = [
        Field(
            name: "target", allowed: LightingTarget.allowedForm,
            summary: "The device, as written in sender.hosts or receiver.forward."),
        Field(
            name: "universe", allowed: "sACN 1…63999, Art-Net 0…32767",
            summary: "Universe of the first channel (not used by DDP)."),
        Field(
            name: "address", allowed: "1…512 (DDP: the first byte, 1…\(LightingProtocol.ddpChannels))",
            summary: "First channel (start address)."),
        Field(
            name: "layout", allowed: FixtureLayout.allCases.map(\.rawValue).joined(separator: ", "),
            summary:
                "dimmers: bass, mid, treble on three channels; rgb/rgbw: one colour fixture; segments: a strip in three parts; blend: a strip in one mixed colour; scroll, energy, flash: a strip with that effect (as receiver.strip.effect)."
        ),
        Field(
            name: "pixels", allowed: "1…10000",
            summary: "segments and blend: pixels of the strip (170 RGB pixels fill a universe)."),
        Field(
            name: "gamma", allowed: "1…4",
            summary: "Level to light: 2.2 for linear LEDs and DMX dimmers, 1 where the device applies its own curve."),
        Field(
            name: "palette",
            allowed:
                "three colours for bass, mid, treble: #rrggbb or red, green, blue, white, amber, orange, yellow, cyan, magenta, purple",
            summary: "Colours of the bands on rgb, rgbw, segments and blend."),
    ]

    /// Whether `key` (`fixtures.wash.universe`) is a fixture setting; nil when it is not under
    /// `fixtures.`, else (fixture name, field name) with the field possibly unknown.
    public static func split(_ key: String) -> (fixture: String, field: String)? {
        guard key.hasPrefix("fixtures.") else { return nil }
        let rest = key.dropFirst("fixtures.".count)
        guard let dot = rest.lastIndex(of: "."), dot != rest.startIndex else { return nil }
        return (String(rest[..<dot]), String(rest[rest.index(after: dot)...]))
    }

    /// The known field closest to `field` (a likely typo).
    public static func closestField(to field: String) -> String {
        fields.map(\.name).min {
            EditDistance.between($0, field.lowercased()) < EditDistance.between($1, field.lowercased())
        }!
    }

    /// Whether `field` is a known field name.
    public static func isField(_ field: String) -> Bool { fields.contains { $0.name == field } }

    /// A fixture on `target` with the defaults of its protocol.
    static func defaultFixture(named name: String, on target: LightingTarget) -> Fixture {
        var fixture = Fixture(name: name, target: target.address)
        if target.kind == .ddp { fixture.layout = .segments }
        return fixture
    }

    /// What is wrong with having set `field` on `fixture` on a `kind` target, once all its fields
    /// are read: a setting that would mean nothing there is refused, not ignored.
    static func inapplicable(_ field: String, to fixture: Fixture, on kind: LightingProtocol) -> SettingProblemText? {
        switch field {
        case "universe" where kind == .ddp:
            SettingProblemText(
                "does not apply to DDP, which has one byte space per device; address says where the fixture starts")
        case "pixels" where !fixture.layout.isStrip:
            SettingProblemText(
                "applies to the strip layouts (segments, blend) only; the \(fixture.layout) layout has \(fixture.channelCount) channels"
            )
        case "palette" where fixture.layout == .dimmers:
            SettingProblemText(
                "applies to the colour layouts (rgb, rgbw, segments, blend) only; dimmers are three plain channels")
        default:
            nil
        }
    }

    /// Parses `raw` as `field` into `fixture`, or says what is wrong with it.
    static func apply(field: String, raw: String, to fixture: inout Fixture) -> SettingProblemText? {
        let value = raw.trimmingWhitespace()
        let allowed = fields.first { $0.name == field }?.allowed ?? ""
        switch field {
        case "universe":
            guard let number = Int(value) else {
                return SettingProblemText("is not a whole number; allowed: \(allowed)")
            }
            fixture.universe = number  // its range depends on the protocol: checked by LightingPatch
        case "address":
            guard let number = Int(value) else {
                return SettingProblemText("is not a whole number; allowed: \(allowed)")
            }
            fixture.address = number
        case "layout":
            guard let layout = FixtureLayout(rawValue: value.lowercased()) else {
                return SettingProblemText("is not allowed; allowed: \(allowed)")
            }
            fixture.layout = layout
        case "pixels":
            guard let number = Int(value), (1...10_000).contains(number) else {
                return SettingProblemText("is out of range \(allowed)")
            }
            fixture.pixels = number
        case "gamma":
            guard let number = Double(value), number.isFinite, (1...4).contains(number) else {
                return SettingProblemText("is out of range \(allowed)")
            }
            fixture.gamma = number
        case "palette":
            guard let palette = Palette(parsing: value) else {
                return SettingProblemText("is not allowed; allowed: \(allowed)")
            }
            fixture.palette = palette
        default:
            let known = fields.map(\.name).joined(separator: ", ")
            return SettingProblemText("is not a fixture setting; allowed: \(known)")
        }
        return nil
    }
}
