/// The receiver's settings as the page sees and changes them while it runs.
///
/// Precedence, lowest first: built-in defaults, the settings file, the page's file
/// (`page-settings.yaml` in the ``StateDirectory``), `LIGHTORGAN_…` variables, command-line
/// options. A change from the page is checked by the same rules, with the same messages, as the
/// settings file (``SettingsCatalog/resolve(_:)``); only ``PageSettings/tunableKeys`` may change,
/// and not one an option or variable sets (it would win again at the next start). The person's
/// own settings file is never written: its comments and other keys stay as they are.
///
/// **The newer change wins.** The page's file keeps, beside each value the page set, the value it
/// replaced (the settings file's, or the default: ``beneath``). When the settings file is edited
/// later, so that the value beneath is no longer the one the page replaced, the file's new value
/// applies at the next start and the page's is dropped (``supersede(_:beneath:replaced:)``).
/// ``useFileValue(_:)`` drops the page's value at once ("use the file's value" on the page).
public struct LiveSettings: Sendable {
    /// Every catalog key's raw value and source.
    public private(set) var raw: [String: RawSetting]
    /// The settings those values make.
    public private(set) var settings: Settings
    /// The page's file.
    public let pageFile: String
    /// Each tunable key's value beneath the page: the settings file's, else the built-in default.
    public let beneath: [String: RawSetting]
    /// For each key the page set, the value beneath it when it did (what its file records).
    public private(set) var replaced: [String: String]

    /// - Parameters:
    ///   - beneath: the settings file's value of each tunable key, or its default; taken from `raw`
    ///     for the keys it leaves out (then the page has set nothing, or nothing is known of the file).
    ///   - replaced: what the page's file recorded under `replaced:`.
    public init(
        raw: [String: RawSetting], settings: Settings, pageFile: String, beneath: [String: RawSetting] = [:],
        replaced: [String: String] = [:]
    ) {
        self.raw = raw
        self.settings = settings
        self.pageFile = pageFile
        var below = beneath
        for key in PageSettings.tunableKeys where below[key] == nil {
            if let setting = raw[key], !setting.source.isPage {
                below[key] = setting
            } else if let entry = SettingsCatalog.key(named: key) {
                below[key] = RawSetting(entry.defaultValue, from: .builtInDefault)
            }
        }
        self.beneath = below
        self.replaced = replaced.filter { key, _ in raw[key]?.source.isPage == true }
    }

    /// A page value that a later edit of the settings file replaced.
    public struct Superseded: Sendable, Equatable, CustomStringConvertible {
        public var key: String
        /// What the page had set.
        public var pageValue: String
        /// The value beneath when the page set it, and now.
        public var was: String
        public var now: RawSetting

        public var description: String {
            "\(key): \(now.source) changed it from \(was.isEmpty ? "(empty)" : was) to \(now.value) since the page set "
                + "\(pageValue); the newer value applies and the page's is dropped"
        }
    }

    /// Drops from `raw` each page value whose value beneath changed since the page set it (the
    /// settings file was edited later: the newer change wins). A page value with no record of what
    /// it replaced (a file from before it was kept) stays.
    ///
    /// - Returns: what was dropped, for the log.
    public static func supersede(
        _ raw: inout [String: RawSetting], beneath: [String: RawSetting], replaced: [String: String]
    ) -> [Superseded] {
        var dropped: [Superseded] = []
        for key in PageSettings.tunableKeys {
            guard let setting = raw[key], setting.source.isPage, let was = replaced[key], let now = beneath[key],
                now.value != was
            else { continue }
            raw[key] = now
            dropped.append(Superseded(key: key, pageValue: setting.value, was: was, now: now))
        }
        return dropped
    }

    /// Checks and applies `value` for `key`; returns the new settings.
    ///
    /// - Throws: ``SettingsError`` in the settings file's words (`… receiver.mode = x is not
    ///   allowed; allowed: pwm, onoff, bar`), or why the page cannot change the key.
    @discardableResult
    public mutating func set(_ key: String, to value: String) throws(SettingsError) -> Settings {
        guard PageSettings.tunableKeys.contains(key) else {
            throw SettingsError(
                "\(key) cannot be changed from the page; it can change \(PageSettings.tunableKeys.joined(separator: ", "))"
            )
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
            throw error.description.hasPrefix(prefix)
                ? SettingsError(String(error.description.dropFirst(prefix.count))) : error
        }
        raw = changed
        settings = resolved
        replaced[key] = beneath[key]?.value ?? ""
        return resolved
    }

    /// Drops the page's value of `key`: the settings file's value (or the default) applies again.
    ///
    /// - Throws: ``SettingsError`` when the page cannot change `key`, or when the value beneath no
    ///   longer makes valid settings with the others (it is then left as it is).
    @discardableResult
    public mutating func useFileValue(_ key: String) throws(SettingsError) -> Settings {
        guard PageSettings.tunableKeys.contains(key), let below = beneath[key] else {
            throw SettingsError(
                "\(key) cannot be changed from the page; it can change \(PageSettings.tunableKeys.joined(separator: ", "))"
            )
        }
        if let locked = lockReason(key) { throw SettingsError(locked) }
        var changed = raw
        changed[key] = below
        let resolved = try SettingsCatalog.resolve(changed)
        raw = changed
        settings = resolved
        replaced[key] = nil
        return resolved
    }

    /// The values the page has set, key → text: what its file holds (beside ``replaced``).
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
            let below = beneath[key] ?? RawSetting(entry.defaultValue, from: .builtInDefault)
            return ReceiverStatus.Setting(
                key: key, value: setting.value, allowed: entry.allowed, summary: entry.summary, source: source,
                locked: lockReason(key), fileValue: below.value, fileSource: below.source.isFile ? "file" : "default")
        }
    }

    /// The page's file as YAML: a header saying what it is, then its values under `receiver:`.
    public var pageFileText: String {
        var text = """
            # Settings changed on the lightorgan receiver's page. Written by the receiver; read after
            # the settings file (these win), before LIGHTORGAN_ variables and options (those win).
            # Under `replaced:`, the value each one replaced: when the settings file's value changes
            # later, the file's new value applies (the newer change wins). "Use the file's value" on
            # the page, or deleting a line here, goes back to the settings file's value.

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
        let kept = pageValues.compactMap { key, _ in replaced[key].map { (key, $0) } }
        if !kept.isEmpty {
            text += "replaced:\n"
            for (key, value) in kept { text += "  \(key): \(Self.yamlScalar(value))\n" }
        }
        return text
    }

    /// `value` as a YAML scalar that reads back as the same text: plain when it is letters, digits,
    /// `.` and `_` alone, else double-quoted with every scalar YAML may not hold as it is escaped.
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
            case _ where needsEscape(scalar):  // all at most U+FFFF
                let (prefix, digits) = scalar.value <= 0xff ? ("\\x", 2) : ("\\u", 4)
                escaped += prefix + String(scalar.value, radix: 16).leftPadded(to: digits)
            default: escaped.unicodeScalars.append(scalar)
            }
        }
        return escaped + "\""
    }

    /// Whether a double-quoted YAML scalar must hold `scalar` escaped: what YAML does not allow in a stream
    /// (C0 and C1 controls, DEL, U+FFFE, U+FFFF), what it reads as a line break and folds (NEL, U+2028,
    /// U+2029), and the byte order mark, which a reader may drop.
    private static func needsEscape(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0..<0x20, 0x7f...0x9f, 0x2028, 0x2029, 0xfeff, 0xfffe, 0xffff: true
        default: false
        }
    }
}

extension SettingSource {
    /// Whether the value came from the page's file.
    public var isPage: Bool { if case .page = self { true } else { false } }
    /// Whether the value came from a settings file.
    public var isFile: Bool { if case .file = self { true } else { false } }
}

extension String {
    fileprivate func leftPadded(to width: Int) -> String {
        String(repeating: "0", count: max(0, width - count)) + self
    }
}
