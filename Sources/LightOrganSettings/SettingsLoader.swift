import Configuration
public import FoundationEssentials
public import LightOrganCore

/// Reads ``Settings`` from command-line options, environment, settings file and defaults, in that
/// order of precedence, through swift-configuration (the file read with libyaml, ``YAMLDocument``).
///
/// Every key is read with a `required` reader over a provider of the built-in defaults, so a value
/// that is present but bad is always reported, never replaced by the default. Keys the catalog
/// does not know, in the file or as `LIGHTORGAN_…` variables, are errors with the closest known key.
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
        let fileSource = file.map { SettingSource.file($0) }

        var providers: [(provider: any ConfigProvider, source: (String) -> SettingSource)] = []
        providers.append((optionsProvider(), { key in .option(options[key]?.option ?? key) }))
        providers.append(
            (try environmentProvider(), { key in .environment(SettingsCatalog.key(named: key)!.environmentVariable) }))
        var pageReplaced: [String: String] = [:]
        if let pageFile, FileManager.default.fileExists(atPath: pageFile),
            let contents = try Self.read(file: pageFile, onlyThese: PageSettings.tunableKeys)
        {
            pageReplaced = contents.replaced
            providers.append((contents.provider, { _ in .page(pageFile) }))
        }
        // An empty file (or only comments) sets nothing.
        var fixtures: [String: RawSetting] = [:]
        var fileProvider: InMemoryProvider?
        if let file, let fileSource, let contents = try Self.read(file: file) {
            fixtures = contents.fixtures
            fileProvider = contents.provider
            providers.append((contents.provider, { _ in fileSource }))
        }
        providers.append((Self.defaultsProvider, { _ in .builtInDefault }))

        let reader = ConfigReader(providers: providers.map(\.provider))
        var raw: [String: RawSetting] = [:]
        var sources: [String: SettingSource] = [:]
        for key in SettingsCatalog.keys {
            let absoluteKey = AbsoluteConfigKey(ConfigKey(key.name))
            let origin = providers.first { entry in
                (try? entry.provider.value(forKey: absoluteKey, type: .string).value) != nil
                    || (try? entry.provider.value(forKey: absoluteKey, type: .stringArray).value) != nil
            }
            let source = origin?.source(key.name) ?? .builtInDefault
            // A single value, or a list (line numbers) as comma-separated text.
            let value: String
            if let single = try? reader.requiredString(forKey: ConfigKey(key.name)) {
                value = single
            } else if key.acceptsList, let list = try? reader.requiredStringArray(forKey: ConfigKey(key.name)) {
                value = list.joined(separator: ", ")
            } else {
                throw SettingsError("\(source): \(key.name) must be a single value; allowed: \(key.allowed)")
            }
            raw[key.name] = RawSetting(value, from: source)
            sources[key.name] = source
        }
        // Fixtures come from the file only (their names are the person's own, not catalog keys).
        raw.merge(fixtures) { catalog, _ in catalog }
        // Beneath the page: the file's value, else the default. A file edited since the page set a
        // value wins over it (the newer change wins).
        var beneath: [String: RawSetting] = [:]
        for name in PageSettings.tunableKeys {
            let key = AbsoluteConfigKey(ConfigKey(name))
            if let fileSource,
                case .string(let text)? = (try? fileProvider?.value(forKey: key, type: .string))?.value?.content
            {
                beneath[name] = RawSetting(text, from: fileSource)
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

    /// The built-in defaults, one per catalog key.
    static let defaultsProvider = InMemoryProvider(
        name: "defaults",
        values: Dictionary(
            uniqueKeysWithValues: SettingsCatalog.keys.map {
                (AbsoluteConfigKey(ConfigKey($0.name)), ConfigValue(.string($0.defaultValue), isSecret: false))
            })
    )

    private func optionsProvider() -> InMemoryProvider {
        InMemoryProvider(
            name: "options",
            values: Dictionary(
                uniqueKeysWithValues: options.map {
                    (AbsoluteConfigKey(ConfigKey($0.key)), ConfigValue(.string($0.value.value), isSecret: false))
                }))
    }

    /// The `LIGHTORGAN_…` variables, with the prefix removed so that the provider's own key mapping
    /// (`sender.port` → `SENDER_PORT`) finds them. Unknown ones are errors.
    private func environmentProvider() throws(SettingsError) -> EnvironmentVariablesProvider {
        let known = Set(SettingsCatalog.keys.map(\.environmentVariable))
        var stripped: [String: String] = [:]
        for (name, value) in environment where name.hasPrefix(SettingsCatalog.environmentPrefix) {
            guard name != SettingsCatalog.configEnvironmentVariable else { continue }
            guard known.contains(name) else {
                throw SettingsError.unknownKey(
                    name, in: .environment(name), closest: SettingsCatalog.closestEnvironmentVariable(to: name))
            }
            stripped[String(name.dropFirst(SettingsCatalog.environmentPrefix.count))] = value
        }
        return EnvironmentVariablesProvider(environmentVariables: stripped)
    }

    /// What a settings file holds: its catalog keys for swift-configuration, and its fixtures.
    struct FileContents {
        /// Every catalog key in the file: a scalar's text, or a list of scalars.
        var provider: InMemoryProvider
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
        var values: [AbsoluteConfigKey: ConfigValue] = [:]
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
                let content: ConfigContent
                if let text = node.scalarText {
                    content = .string(text)
                } else if let texts = node.scalarList {
                    content = .stringArray(texts)
                } else {
                    throw SettingsError(
                        "\(SettingSource.file(place)): \(name) must be a single value; allowed: \(key.allowed)")
                }
                values[AbsoluteConfigKey(ConfigKey(name))] = ConfigValue(content, isSecret: false)
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
        return FileContents(
            provider: InMemoryProvider(name: path, values: values), fixtures: fixtures, replaced: replaced)
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
