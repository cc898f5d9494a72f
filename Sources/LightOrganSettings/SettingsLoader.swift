public import FoundationEssentials
public import LightOrganCore

/// Reads ``Settings`` from command-line options, environment, the page's file, the settings file and
/// defaults, in that order of precedence (the files read with libyaml, ``YAMLDocument``).
///
/// Each key takes its value from the first ``SettingLayer`` that holds it, so a value that is present
/// but bad is always reported, never replaced by one beneath it. Keys the catalog does not know, in
/// the file or as `LIGHTORGAN_…` variables, are errors with the closest known key.
public struct SettingsLoader: Sendable {
    /// Settings and where they came from.
    public struct Loaded: Sendable {
        public var settings: Settings
        /// The settings file that was read, nil when none was found.
        public var file: String?
        /// Where each key's value came from.
        public var sources: [String: SettingSource]
        /// Every key's value and source, as ``SettingsCatalog/resolve(_:)`` took them (for ``LiveSettings``).
        public var raw: [String: RawSetting]
        /// Each page-tunable key's value beneath the page: the settings file's, else the default.
        public var beneathPage: [String: RawSetting] = [:]
        /// What the page's file records under `replaced:` for the values it still holds.
        public var pageReplaced: [String: String] = [:]
        /// The page's values dropped because the settings file changed beneath them since (to log,
        /// and to remove from the page's file).
        public var superseded: [LiveSettings.Superseded] = []

        /// The settings the receiver's page sees and changes, its own kept in `pageFile`.
        public func live(pageFile: String) -> LiveSettings {
            LiveSettings(raw: raw, settings: settings, pageFile: pageFile, beneath: beneathPage, replaced: pageReplaced)
        }
    }

    /// Options given on the command line: key → (value, option name such as `--port`).
    public var options: [String: (value: String, option: String)]
    /// The process environment.
    public var environment: [String: String]
    /// Where to look for the file.
    public var locator: SettingsFileLocator

    public init(
        options: [String: (value: String, option: String)] = [:],
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) {
        self.options = options
        self.environment = environment
        self.locator = SettingsFileLocator(environment: environment)
    }

    /// Loads and validates everything.
    ///
    /// - Parameter configPath: the path given with `--config`, if any.
    /// - Throws: ``SettingsError``, one line naming the source, key, value and what is allowed.
    /// - Parameter pageFile: the file the receiver's page writes (``LiveSettings``), read after the
    ///   settings file when it exists; nil for the commands that have no page.
    public func load(configPath: String? = nil, pageFile: String? = nil) async throws(SettingsError) -> Loaded {
        let file = try locator.locate(explicitPath: configPath)
        var layers = [optionsLayer(), try environmentLayer()]
        var pageReplaced: [String: String] = [:]
        if let pageFile, FileManager.default.fileExists(atPath: pageFile),
            let contents = try Self.read(file: pageFile, onlyThese: PageSettings.tunableKeys)
        {
            pageReplaced = contents.replaced
            layers.append(contents.layer)
        }
        // An empty file (or only comments) sets nothing.
        var fixtures: [String: RawSetting] = [:]
        var fileLayer: SettingLayer?
        if let file, let contents = try Self.read(file: file) {
            fixtures = contents.fixtures
            fileLayer = contents.layer
            layers.append(contents.layer)
        }
        var raw: [String: RawSetting] = [:]
        var sources: [String: SettingSource] = [:]
        for key in SettingsCatalog.keys {
            let found = layers.lazy.compactMap { layer in layer.value(of: key.name) }.first
            let (value, source) = found ?? (.single(key.defaultValue), .builtInDefault)
            // A single value, or a list (line numbers) as comma-separated text.
            let text: String
            switch value {
            case .single(let single): text = single
            case .list(let list) where key.acceptsList: text = list.joined(separator: ", ")
            case .list: throw SettingsError("\(source): \(key.name) must be a single value; allowed: \(key.allowed)")
            }
            raw[key.name] = RawSetting(text, from: source)
            sources[key.name] = source
        }
        // Fixtures come from the file only (their names are the person's own, not catalog keys).
        raw.merge(fixtures) { catalog, _ in catalog }
        // Beneath the page: the file's value, else the default. A file edited since the page set a
        // value wins over it (the newer change wins).
        var beneath: [String: RawSetting] = [:]
        for name in PageSettings.tunableKeys {
            if let (value, source) = fileLayer?.value(of: name), case .single(let text) = value {
                beneath[name] = RawSetting(text, from: source)
            } else if let entry = SettingsCatalog.key(named: name) {
                beneath[name] = RawSetting(entry.defaultValue, from: .builtInDefault)
            }
        }
        let superseded = LiveSettings.supersede(&raw, beneath: beneath, replaced: pageReplaced)
        for dropped in superseded {
            sources[dropped.key] = dropped.now.source
            pageReplaced[dropped.key] = nil
        }
        var loaded = Loaded(settings: try SettingsCatalog.resolve(raw), file: file, sources: sources, raw: raw)
        loaded.beneathPage = beneath
        loaded.pageReplaced = pageReplaced
        loaded.superseded = superseded
        return loaded
    }

    /// The command-line options, each under the option's name (`--port`).
    private func optionsLayer() -> SettingLayer {
        SettingLayer(values: options.mapValues { .single($0.value) }) { key in .option(options[key]?.option ?? key) }
    }

    /// The `LIGHTORGAN_…` variables, under the keys they set (`LIGHTORGAN_SENDER_PORT` → `sender.port`).
    /// Unknown ones are errors.
    private func environmentLayer() throws(SettingsError) -> SettingLayer {
        let keys = Dictionary(uniqueKeysWithValues: SettingsCatalog.keys.map { ($0.environmentVariable, $0.name) })
        var values: [String: SettingLayer.Value] = [:]
        for (name, value) in environment where name.hasPrefix(SettingsCatalog.environmentPrefix) {
            guard name != SettingsCatalog.configEnvironmentVariable else { continue }
            guard let key = keys[name] else {
                throw SettingsError.unknownKey(
                    name, in: .environment(name), closest: SettingsCatalog.closestEnvironmentVariable(to: name))
            }
            values[key] = .single(value)
        }
        let variables = Dictionary(uniqueKeysWithValues: keys.map { ($0.value, $0.key) })
        return SettingLayer(values: values) { key in .environment(variables[key] ?? key) }
    }

    /// What a settings file holds: its catalog keys, and its fixtures.
    struct FileContents {
        /// Every catalog key in the file: a scalar's text, or a list of scalars.
        var layer: SettingLayer
        /// The fixtures' settings (`fixtures.wash.universe`, each with its file and line).
        var fixtures: [String: RawSetting]
        /// The page's file only: under `replaced:`, the value each page value replaced.
        var replaced: [String: String] = [:]
    }

    /// The page's file's section of the values its own replaced (``LiveSettings``).
    static let replacedSection = "replaced."

    /// Reads the file, checks its syntax and that every key in it is known; nil when it holds nothing.
    /// With `onlyThese`, any other key is an error (the page's file holds the tunable keys alone).
    static func read(file path: String, onlyThese: [String]? = nil) throws(SettingsError) -> FileContents? {
        let text: String
        do {
            text = try String(contentsOfFile: path, encoding: .utf8)
        } catch {
            throw SettingsError("\(path): cannot be read (\(SystemErrorText.reason(of: error)))")
        }
        let root: YAMLNode?
        do {
            root = try YAMLDocument.parse(text)
        } catch {
            throw SettingsError("\(path): not valid YAML: \(error)")
        }
        guard let root else { return nil }
        guard case .mapping(let mapping, _) = root else {
            throw SettingsError("\(path): must hold sections such as `sender:` and `receiver:` with keys under them")
        }
        let leaves = leafKeys(of: mapping, prefix: "")
        var values: [String: SettingLayer.Value] = [:]
        var fixtures: [String: RawSetting] = [:]
        var replaced: [String: String] = [:]
        for (name, line, node) in leaves {
            let place = "\(path):\(line)"
            if let onlyThese, name.hasPrefix(Self.replacedSection),
                onlyThese.contains(String(name.dropFirst(Self.replacedSection.count))),
                let text = node.scalarText
            {
                replaced[String(name.dropFirst(Self.replacedSection.count))] = text
                continue
            }
            if let onlyThese, !onlyThese.contains(name) {
                throw SettingsError(
                    "\(place): \(name) does not belong in the page's file (it holds \(onlyThese.joined(separator: ", "))); delete the line"
                )
            }
            let value = Self.text(of: node)
            if let key = SettingsCatalog.key(named: name) {
                if let text = node.scalarText {
                    values[name] = .single(text)
                } else if let texts = node.scalarList {
                    values[name] = .list(texts)
                } else {
                    throw SettingsError(
                        "\(SettingSource.file(place)): \(name) must be a single value; allowed: \(key.allowed)")
                }
                continue
            }
            let source = SettingSource.file(place)
            if let (fixture, field) = FixtureSettings.split(name) {
                guard FixtureSettings.isField(field) else {
                    let closest = FixtureSettings.closestField(to: field)
                    throw SettingsError(
                        "\(source): unknown key \(name); did you mean fixtures.\(fixture).\(closest)? (a fixture has \(FixtureSettings.fields.map(\.name).joined(separator: ", ")))"
                    )
                }
                guard let value else {
                    throw SettingsError(
                        "\(source): \(name) must be a single value; allowed: \(FixtureSettings.fields.first { $0.name == field }!.allowed)"
                    )
                }
                fixtures[name] = RawSetting(value, from: source)
                continue
            }
            if name.hasPrefix("fixtures") {
                throw SettingsError(
                    "\(source): \(name) is not a fixture setting; write fixtures.NAME.target: sacn://… with NAME of your choice (see the example file)"
                )
            }
            throw SettingsError.unknownKey(name, in: source, closest: SettingsCatalog.closestKey(to: name))
        }
        let source: SettingSource = onlyThese == nil ? .file(path) : .page(path)
        return FileContents(
            layer: SettingLayer(values: values) { _ in source }, fixtures: fixtures, replaced: replaced)
    }

    /// A scalar's text, or a list of scalars as comma-separated text; nil for anything else.
    private static func text(of node: YAMLNode) -> String? {
        node.scalarText ?? node.scalarList?.joined(separator: ", ")
    }

    /// Dotted names of every value in the mapping with their 1-based lines (the key's) and their nodes.
    private static func leafKeys(of mapping: [(key: YAMLNode, value: YAMLNode)], prefix: String) -> [(
        String, Int, YAMLNode
    )] {
        mapping.flatMap { key, value -> [(String, Int, YAMLNode)] in
            let name = prefix + (key.scalarText ?? "?")
            switch value {
            case .mapping(let inner, _): return leafKeys(of: inner, prefix: name + ".")
            case .scalar(let text, _) where text.isEmpty || text == "~" || text == "null":
                // `sender:` (or `fixtures:`) with nothing under it is an empty section, not a value.
                let isSection = name == "fixtures" || SettingsCatalog.keys.contains { $0.name.hasPrefix(name + ".") }
                return isSection ? [] : [(name, key.line, value)]
            default: return [(name, key.line, value)]
            }
        }
    }
}
