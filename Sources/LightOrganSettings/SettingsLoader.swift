import Configuration
public import Foundation
public import LightOrganCore
import SystemPackage
import Yams

/// Reads ``Settings`` from command-line options, environment, settings file and defaults, in that
/// order of precedence, through swift-configuration.
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
        providers.append((try environmentProvider(), { key in .environment(SettingsCatalog.key(named: key)!.environmentVariable) }))
        if let pageFile, FileManager.default.fileExists(atPath: pageFile),
            try Self.checkKeys(inFile: pageFile, onlyThese: PageSettings.tunableKeys) != nil
        {
            do {
                let provider = try await FileProvider<YAMLSnapshot>(filePath: FilePath(pageFile))
                providers.append((provider, { _ in .page(pageFile) }))
            } catch {
                throw SettingsError("\(pageFile): cannot be read as YAML settings (\(error)); delete it to drop the page's changes")
            }
        }
        // An empty file (or only comments) sets nothing; swift-configuration wants a mapping.
        var fixtures: [String: RawSetting] = [:]
        if let file, let fileSource, let checked = try Self.checkKeys(inFile: file) {
            fixtures = checked
            do {
                let provider = try await FileProvider<YAMLSnapshot>(filePath: FilePath(file))
                providers.append((provider, { _ in fileSource }))
            } catch {
                throw SettingsError("\(file): cannot be read as YAML settings (\(error))")
            }
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
        return Loaded(settings: try SettingsCatalog.resolve(raw), file: file, sources: sources, raw: raw)
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

    /// Checks the file's syntax and that every key in it is known; nil when it holds nothing,
    /// else the fixtures' settings (`fixtures.wash.universe`, each with its file and line).
    /// With `onlyThese`, any other key is an error (the page's file holds the tunable keys alone).
    static func checkKeys(inFile path: String, onlyThese: [String]? = nil) throws(SettingsError) -> [String: RawSetting]? {
        let text: String
        do {
            text = try String(contentsOfFile: path, encoding: .utf8)
        } catch {
            throw SettingsError("\(path): cannot be read (\(error.localizedDescription))")
        }
        let root: Node?
        do {
            root = try Yams.compose(yaml: text)
        } catch let error as YamlError {
            throw SettingsError("\(path): not valid YAML: \(Self.oneLine(error))")
        } catch {
            throw SettingsError("\(path): not valid YAML: \(error)")
        }
        guard let root else { return nil }
        guard case .mapping(let mapping) = root else {
            throw SettingsError("\(path): must hold sections such as `sender:` and `receiver:` with keys under them")
        }
        var fixtures: [String: RawSetting] = [:]
        if let onlyThese {
            for (name, line, _) in leafKeys(of: mapping, prefix: "") where !onlyThese.contains(name) {
                throw SettingsError(
                    "\(line.map { "\(path):\($0)" } ?? path): \(name) does not belong in the page's file (it holds \(onlyThese.joined(separator: ", "))); delete the line")
            }
            return fixtures
        }
        for (name, line, value) in leafKeys(of: mapping, prefix: "") where SettingsCatalog.key(named: name) == nil {
            let source = SettingSource.file(line.map { "\(path):\($0)" } ?? path)
            if let (fixture, field) = FixtureSettings.split(name) {
                guard FixtureSettings.isField(field) else {
                    let closest = FixtureSettings.closestField(to: field)
                    throw SettingsError(
                        "\(source): unknown key \(name); did you mean fixtures.\(fixture).\(closest)? (a fixture has \(FixtureSettings.fields.map(\.name).joined(separator: ", ")))")
                }
                guard let value else {
                    throw SettingsError("\(source): \(name) must be a single value; allowed: \(FixtureSettings.fields.first { $0.name == field }!.allowed)")
                }
                fixtures[name] = RawSetting(value, from: source)
                continue
            }
            if name.hasPrefix("fixtures") {
                throw SettingsError(
                    "\(source): \(name) is not a fixture setting; write fixtures.NAME.target: sacn://… with NAME of your choice (see the example file)")
            }
            throw SettingsError.unknownKey(name, in: source, closest: SettingsCatalog.closestKey(to: name))
        }
        return fixtures
    }

    /// Dotted names of every value in the mapping, with their 1-based line numbers and their text
    /// (a list of scalars as comma-separated text; nil for anything else).
    private static func leafKeys(of mapping: Node.Mapping, prefix: String) -> [(String, Int?, String?)] {
        mapping.flatMap { key, value -> [(String, Int?, String?)] in
            let name = prefix + (key.string ?? "?")
            switch value {
            case .mapping(let inner): return leafKeys(of: inner, prefix: name + ".")
            case .scalar(let scalar) where scalar.string.isEmpty || scalar.string == "~" || scalar.string == "null":
                // `sender:` (or `fixtures:`) with nothing under it is an empty section, not a value.
                let isSection = name == "fixtures" || SettingsCatalog.keys.contains { $0.name.hasPrefix(name + ".") }
                return isSection ? [] : [(name, key.mark?.line, scalar.string)]
            case .scalar(let scalar): return [(name, key.mark?.line, scalar.string)]
            case .sequence(let items):
                let texts = items.compactMap(\.string)
                return [(name, key.mark?.line, texts.count == items.count ? texts.joined(separator: ", ") : nil)]
            default: return [(name, key.mark?.line, nil)]
            }
        }
    }

    private static func oneLine(_ error: YamlError) -> String {
        switch error {
        case .scanner(_, let problem, let mark, _), .parser(_, let problem, let mark, _),
            .composer(_, let problem, let mark, _):
            "\(problem) at line \(mark.line), column \(mark.column)"
        default:
            String(describing: error).split(separator: "\n").first.map(String.init) ?? "\(error)"
        }
    }
}
