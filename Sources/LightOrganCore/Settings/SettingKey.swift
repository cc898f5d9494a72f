/// One key of the settings file, e.g. `sender.port`: its default, what it allows, how it applies.
public struct SettingKey: Sendable {
    /// Dotted name as written in the settings file (`sender.port`).
    public let name: String
    /// The built-in default, as it would be written in the file.
    public let defaultValue: String
    /// What is allowed, for messages and help (`1…65535`).
    public let allowed: String
    /// One sentence for the example file and `--help`.
    public let summary: String
    /// True for keys that take a list (GPIO lines): a YAML sequence is read as comma-separated text.
    public let acceptsList: Bool
    private let applyValue: @Sendable (inout Settings, String) -> SettingProblem?

    init(
        _ name: String, default defaultValue: String, allowed: String, summary: String, acceptsList: Bool = false,
        apply: @escaping @Sendable (inout Settings, String) -> SettingProblem?
    ) {
        (self.name, self.defaultValue, self.allowed, self.summary) = (name, defaultValue, allowed, summary)
        (self.acceptsList, applyValue) = (acceptsList, apply)
    }

    /// The environment variable that sets this key: `LIGHTORGAN_` and the name in capitals with
    /// `_` for `.` (`sender.port` → `LIGHTORGAN_SENDER_PORT`).
    public var environmentVariable: String {
        SettingsCatalog.environmentPrefix + name.uppercased().replacing(".", with: "_")
    }

    /// Parses `raw` and stores it in `settings`, or says what is wrong with it.
    func apply(_ raw: String, to settings: inout Settings) -> SettingProblem? {
        applyValue(&settings, raw.trimmingWhitespace())
    }
}

/// What is wrong with a value, as the end of `key = value …`.
struct SettingProblem: Error {
    var text: String
    static func outOfRange(_ allowed: String) -> SettingProblem { .init(text: "is out of range \(allowed)") }
    static func notAllowed(_ allowed: String) -> SettingProblem { .init(text: "is not allowed; allowed: \(allowed)") }
}

extension SettingKey {
    /// A whole number in `range`.
    static func integer(
        _ name: String, default defaultValue: Int, range: ClosedRange<Int>, summary: String,
        store: @escaping @Sendable (inout Settings, Int) -> Void
    ) -> SettingKey {
        let allowed = "\(range.lowerBound)…\(range.upperBound)"
        return SettingKey(name, default: String(defaultValue), allowed: allowed, summary: summary) { settings, raw in
            guard let value = Int(raw) else {
                return SettingProblem(text: "is not a whole number; allowed: \(allowed)")
            }
            guard range.contains(value) else { return .outOfRange(allowed) }
            store(&settings, value)
            return nil
        }
    }

    /// A number (decimals allowed) in `range`.
    static func decimal(
        _ name: String, default defaultValue: Double, range: ClosedRange<Double>, unit: String, summary: String,
        store: @escaping @Sendable (inout Settings, Double) -> Void
    ) -> SettingKey {
        let allowed = "\(range.lowerBound.compact)…\(range.upperBound.compact) \(unit)"
        return SettingKey(name, default: defaultValue.compact, allowed: allowed, summary: summary) { settings, raw in
            guard let value = Double(raw), value.isFinite else {
                return SettingProblem(text: "is not a number; allowed: \(allowed)")
            }
            guard range.contains(value) else { return .outOfRange(allowed) }
            store(&settings, value)
            return nil
        }
    }

    /// Non-empty text without spaces (or empty too, with `allowsEmpty`).
    static func text(
        _ name: String, default defaultValue: String, allowed: String, summary: String, allowsEmpty: Bool = false,
        store: @escaping @Sendable (inout Settings, String) -> Void
    ) -> SettingKey {
        SettingKey(name, default: defaultValue, allowed: allowed, summary: summary) { settings, raw in
            guard raw.isEmpty ? allowsEmpty : !raw.contains(where: \.isWhitespace) else { return .notAllowed(allowed) }
            store(&settings, raw)
            return nil
        }
    }

    /// A DNS-SD instance name: empty (the built-in choice), or up to 63 UTF-8 bytes, spaces
    /// allowed, no control characters.
    static func serviceName(
        _ name: String, summary: String, store: @escaping @Sendable (inout Settings, String) -> Void
    ) -> SettingKey {
        let allowed = "empty, or a name of up to \(ServiceName.maximumLength) bytes without control characters"
        return SettingKey(name, default: "", allowed: allowed, summary: summary) { settings, raw in
            let trimmed = raw.trimmingWhitespace()
            guard trimmed.utf8.count <= ServiceName.maximumLength,
                !trimmed.unicodeScalars.contains(where: { $0.properties.generalCategory == .control })
            else { return .notAllowed(allowed) }
            store(&settings, trimmed)
            return nil
        }
    }

    /// A value `parse` reads (nil: not one of the forms `allowed` names).
    static func parsed<Value: Sendable>(
        _ name: String, default defaultValue: String, allowed: String, summary: String,
        parse: @escaping @Sendable (String) -> Value?, store: @escaping @Sendable (inout Settings, Value) -> Void
    ) -> SettingKey {
        SettingKey(name, default: defaultValue, allowed: allowed, summary: summary) { settings, raw in
            guard let value = parse(raw) else { return .notAllowed(allowed) }
            store(&settings, value)
            return nil
        }
    }

    /// One of a fixed set of words.
    static func choice<Choice: RawRepresentable & CaseIterable & Sendable>(
        _ name: String, default defaultValue: Choice, summary: String,
        store: @escaping @Sendable (inout Settings, Choice) -> Void
    ) -> SettingKey where Choice.RawValue == String {
        let allowed = Choice.allCases.map(\.rawValue).joined(separator: ", ")
        return SettingKey(name, default: defaultValue.rawValue, allowed: allowed, summary: summary) { settings, raw in
            guard let value = Choice(rawValue: raw.lowercased()) else { return .notAllowed(allowed) }
            store(&settings, value)
            return nil
        }
    }
}

extension SettingKey {
    /// GPIO line offsets of one band: `5` or `5, 17` (a YAML list arrives as that text too).
    static func lineList(_ name: String, default defaultValue: [Int], band: Band) -> SettingKey {
        let allowed = "BCM line numbers 0…511, separated by commas"
        return SettingKey(
            name, default: defaultValue.map(String.init).joined(separator: ", "), allowed: allowed,
            summary: "GPIO lines (BCM numbers) that show \(band).", acceptsList: true
        ) { settings, raw in
            let parts = raw.split(separator: ",").map { String($0).trimmingWhitespace() }
            let offsets = parts.compactMap { Int($0) }
            guard !parts.isEmpty, offsets.count == parts.count, offsets.allSatisfy({ (0...511).contains($0) }) else {
                return .notAllowed(allowed)
            }
            settings.receiver.lines[band] = offsets
            return nil
        }
    }

    /// A comma-separated list, possibly empty (a YAML list arrives as that text too), whose items
    /// `parse` accepts; a bad item is named in the message.
    static func list<Item: Sendable>(
        _ name: String, default defaultValue: String, allowed: String, summary: String,
        parse: @escaping @Sendable (String) -> Item?, store: @escaping @Sendable (inout Settings, [Item]) -> Void
    ) -> SettingKey {
        SettingKey(name, default: defaultValue, allowed: allowed, summary: summary, acceptsList: true) {
            settings, raw in
            let parts = raw.split(separator: ",").map { String($0).trimmingWhitespace() }.filter { !$0.isEmpty }
            var items: [Item] = []
            for part in parts {
                guard let item = parse(part) else {
                    return SettingProblem(text: "has `\(part)`, which is not allowed; allowed: \(allowed)")
                }
                items.append(item)
            }
            store(&settings, items)
            return nil
        }
    }

    /// A list of receivers (`host[:port]`, where `allowsReceivers`) and lighting targets
    /// (`sacn://…`, `artnet://…`, `ddp://…`); a bad entry is named with what is wrong with it.
    static func targets(
        _ name: String, allowsReceivers: Bool, summary: String,
        store: @escaping @Sendable (inout Settings, [Endpoint], [LightingTarget]) -> Void
    ) -> SettingKey {
        let allowed =
            allowsReceivers
            ? "receivers as host names or addresses, each optionally with :port ([::1]:8181 for IPv6), and lighting targets: \(LightingTarget.allowedForm)"
            : "lighting targets: \(LightingTarget.allowedForm)"
        return SettingKey(name, default: "", allowed: allowed, summary: summary, acceptsList: true) { settings, raw in
            let parts = raw.split(separator: ",").map { String($0).trimmingWhitespace() }.filter { !$0.isEmpty }
            var receivers: [Endpoint] = []
            var targets: [LightingTarget] = []
            for part in parts {
                if LightingTarget.looksLikeTarget(part) {
                    do throws(SettingProblemText) {
                        targets.append(try LightingTarget(parsing: part))
                    } catch {
                        return SettingProblem(text: "is not allowed: \(error.text)")
                    }
                } else if allowsReceivers, let receiver = Endpoint(parsing: part) {
                    receivers.append(receiver)
                } else {
                    return SettingProblem(text: "has `\(part)`, which is not allowed; allowed: \(allowed)")
                }
            }
            for (index, target) in targets.enumerated()
            where targets[..<index].contains(where: { $0.address == target.address }) {
                return SettingProblem(
                    text: "has \(target.address) twice; list each device once (fixtures: puts several lights on one)")
            }
            store(&settings, receivers, targets)
            return nil
        }
    }

    /// A delay: whole milliseconds 0…``LightDelay/maximumMilliseconds`` (a trailing `ms` allowed),
    /// or `auto` where `allowsAuto`.
    static func delay(
        _ name: String, default defaultValue: String, allowsAuto: Bool, summary: String,
        store: @escaping @Sendable (inout Settings, LightDelay) -> Void
    ) -> SettingKey {
        let range = "0…\(LightDelay.maximumMilliseconds) milliseconds"
        let allowed = allowsAuto ? "auto or \(range)" : range
        return SettingKey(name, default: defaultValue, allowed: allowed, summary: summary) { settings, raw in
            guard let value = LightDelay(parsing: raw), allowsAuto || value != .auto else {
                return .notAllowed(allowed)
            }
            store(&settings, value)
            return nil
        }
    }

    /// Empty, or an absolute path without line breaks.
    static func absolutePath(
        _ name: String, allowed: String, summary: String, store: @escaping @Sendable (inout Settings, String) -> Void
    ) -> SettingKey {
        SettingKey(name, default: "", allowed: allowed, summary: summary) { settings, raw in
            guard raw.isEmpty || (raw.hasPrefix("/") && !raw.contains(where: { $0.isNewline || $0 == "\0" })) else {
                return .notAllowed(allowed)
            }
            store(&settings, raw)
            return nil
        }
    }

    /// true or false (also yes/no, on/off).
    static func flag(
        _ name: String, default defaultValue: Bool, summary: String,
        store: @escaping @Sendable (inout Settings, Bool) -> Void
    ) -> SettingKey {
        SettingKey(name, default: String(defaultValue), allowed: "true or false", summary: summary) { settings, raw in
            switch raw.lowercased() {
            case "true", "yes", "on", "1": store(&settings, true)
            case "false", "no", "off", "0": store(&settings, false)
            default: return .notAllowed("true or false")
            }
            return nil
        }
    }
}

extension Double {
    /// `1` for 1.0, `0.05` for 0.05: how a person would write it.
    var compact: String {
        self == rounded() && abs(self) < 1e15 ? String(Int(self)) : String(self)
    }
}

extension String {
    func trimmingWhitespace() -> String {
        String(drop(while: \.isWhitespace).reversed().drop(while: \.isWhitespace).reversed())
    }
}
