/// The receiver's settings as the page sees and changes them while it runs.
///
/// Precedence, lowest first: built-in defaults, the settings file, the page's file
/// (`page-settings.yaml` in the ``StateDirectory``), `LIGHTORGAN_…` variables, command-line
/// options. A change from the page is checked by the same rules, with the same messages, as the
/// settings file (``SettingsCatalog/resolve(_:)``); only ``PageSettings/tunableKeys`` may change,
/// and not one an option or variable sets (it would win again at the next start). The person's
/// own settings file is never written: its comments and other keys stay as they are.
public struct LiveSettings: Sendable {
    /// Every catalog key's raw value and source.
    public private(set) var raw: [String: RawSetting]
    /// The settings those values make.
    public private(set) var settings: Settings
    /// The page's file.
    public let pageFile: String

    public init(raw: [String: RawSetting], settings: Settings, pageFile: String) {
        self.raw = raw
        self.settings = settings
        self.pageFile = pageFile
    }

    /// Checks and applies `value` for `key`; returns the new settings.
    ///
    /// - Throws: ``SettingsError`` in the settings file's words (`… receiver.mode = x is not
    ///   allowed; allowed: pwm, onoff, bar`), or why the page cannot change the key.
    @discardableResult
    public mutating func set(_ key: String, to value: String) throws(SettingsError) -> Settings {
        guard PageSettings.tunableKeys.contains(key) else {
            throw SettingsError("\(key) cannot be changed from the page; it can change \(PageSettings.tunableKeys.joined(separator: ", "))")
        }
        if let locked = lockReason(key) { throw SettingsError(locked) }
        var changed = raw
        let source = SettingSource.page(pageFile)
        changed[key] = RawSetting(value.trimmingWhitespace(), from: source)
        let resolved: Settings
        do {
            resolved = try SettingsCatalog.resolve(changed)
        } catch {
            // The page shows the rule without naming its own file: `receiver.mode = x is not allowed; …`.
            let prefix = "\(source): "
            throw error.description.hasPrefix(prefix) ? SettingsError(String(error.description.dropFirst(prefix.count))) : error
        }
        raw = changed
        settings = resolved
        return resolved
    }

    /// The values the page has set, key → text: what its file holds.
    public var pageValues: [(key: String, value: String)] {
        PageSettings.tunableKeys.compactMap { key in
            guard let setting = raw[key], case .page = setting.source else { return nil }
            return (key, setting.value)
        }
    }

    /// Why the page may not change `key` (an option or a variable sets it), nil when it may.
    public func lockReason(_ key: String) -> String? {
        switch raw[key]?.source {
        case .option(let option)?: "\(key) is set by the option \(option); the page cannot change it"
        case .environment(let variable)?: "\(key) is set by \(variable) in the environment; the page cannot change it"
        default: nil
        }
    }

    /// The rows the page shows, one per tunable key.
    public var rows: [ReceiverStatus.Setting] {
        PageSettings.tunableKeys.compactMap { key in
            guard let entry = SettingsCatalog.key(named: key) else { return nil }
            let setting = raw[key] ?? RawSetting(entry.defaultValue, from: .builtInDefault)
            let source: String =
                switch setting.source {
                case .builtInDefault: "default"
                case .file: "file"
                case .page: "page"
                case .environment: "environment"
                case .option: "option"
                }
            return ReceiverStatus.Setting(
                key: key, value: setting.value, allowed: entry.allowed, summary: entry.summary, source: source,
                locked: lockReason(key))
        }
    }

    /// The page's file as YAML: a header saying what it is, then its values under `receiver:`.
    public var pageFileText: String {
        var text = """
            # Settings changed on the lightorgan receiver's page. Written by the receiver; read after
            # the settings file (these win), before LIGHTORGAN_ variables and options (those win).
            # Delete a line (or this file) to go back to the settings file's value.

            """
        var section = ""
        for (key, value) in pageValues {
            let parts = key.split(separator: ".", maxSplits: 1).map(String.init)
            if parts[0] != section {
                section = parts[0]
                text += "\(section):\n"
            }
            text += "  \(parts[1]): \(Self.yamlScalar(value))\n"
        }
        return text
    }

    /// `value` as a YAML scalar that reads back as the same text.
    static func yamlScalar(_ value: String) -> String {
        let plain = value.unicodeScalars.allSatisfy {
            ("a"..."z").contains($0) || ("A"..."Z").contains($0) || ("0"..."9").contains($0) || $0 == "." || $0 == "_"
        }
        if plain, !value.isEmpty { return value }
        var escaped = "\""
        for scalar in value.unicodeScalars {
            switch scalar {
            case "\"": escaped += "\\\""
            case "\\": escaped += "\\\\"
            case _ where scalar.value < 0x20 || scalar.value == 0x7f:
                escaped += "\\x" + String(scalar.value, radix: 16).leftPadded(to: 2)
            default: escaped.unicodeScalars.append(scalar)
            }
        }
        return escaped + "\""
    }
}

extension String {
    fileprivate func leftPadded(to width: Int) -> String {
        String(repeating: "0", count: max(0, width - count)) + self
    }
}
