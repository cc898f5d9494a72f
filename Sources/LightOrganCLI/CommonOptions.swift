import ArgumentParser
import Glibc
import LightOrganAudio
import LightOrganCore
import LightOrganOutput
import LightOrganSettings
import Logging
import ServiceLifecycle
import UnixSignals

/// Options every command has: which settings file, how much to log.
struct CommonOptions: ParsableArguments {
    @Option(
        name: .customLong("config"),
        help:
            "Settings file (default: the first found of $LIGHTORGAN_CONFIG, ./lightorgan.yaml, ~/.config/lightorgan/lightorgan.yaml, /etc/lightorgan/lightorgan.yaml)."
    )
    var configPath: String?

    @Flag(name: .shortAndLong, help: "Log more (every connection detail).")
    var verbose = false

    @Flag(name: .shortAndLong, help: "Log only warnings and errors.")
    var quiet = false

    /// Sets up logging to stderr and makes a closed stdout pipe harmless.
    func prepareProcess() -> Logger {
        Self.prepareProcess(level: verbose ? .debug : quiet ? .warning : .info)
    }

    /// Sets up logging to stderr at `level` and makes a closed stdout pipe harmless.
    static func prepareProcess(level: Logger.Level) -> Logger {
        signal(SIGPIPE, SIG_IGN)
        // A shell starts background jobs with SIGINT ignored; we handle SIGINT as a graceful stop,
        // so take it back, or `kill -INT` from a script would be lost.
        signal(SIGINT, SIG_DFL)
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = level
            return handler
        }
        return Logger(label: "lightorgan")
    }

    /// Loads settings with the options that were given on top, or fails with status 2.
    ///
    /// - Parameter overrides: each option's value (nil when not given), its name and the key it sets.
    func loadSettings(_ overrides: [(value: String?, option: String, key: String)], logger: Logger) async throws
        -> Settings
    {
        try await loadSettingsWithSources(overrides, pageFile: nil, logger: logger).settings
    }

    /// ``loadSettings(_:logger:)`` with every value's source, and the page's file read after the
    /// settings file (the receiver).
    func loadSettingsWithSources(
        _ overrides: [(value: String?, option: String, key: String)], pageFile: String?, logger: Logger
    ) async throws -> SettingsLoader.Loaded {
        var options: [String: (value: String, option: String)] = [:]
        for override in overrides {
            if let value = override.value { options[override.key] = (value, override.option) }
        }
        do {
            let loaded = try await SettingsLoader(options: options).load(configPath: configPath, pageFile: pageFile)
            if let file = loaded.file {
                logger.info("settings file: \(file)")
            } else {
                let searched = SettingsFileLocator().searchPath.joined(separator: ", ")
                logger.info("no settings file (looked for \(searched)); using defaults, environment and options")
            }
            for dropped in loaded.superseded { logger.info("settings: \(dropped)") }
            if let pageFile, loaded.raw.values.contains(where: \.source.isPage) {
                logger.info(
                    "settings changed on the page: \(pageFile) (they override the settings file until its value changes)"
                )
            }
            return loaded
        } catch {
            throw Failure.badSetting(error.description)
        }
    }

    /// Help text for an option that overrides a settings key: its summary, default and key.
    static func help(_ key: String) -> ArgumentHelp {
        let entry = SettingsCatalog.key(named: key)!
        let shownDefault = entry.defaultValue.isEmpty ? "none" : entry.defaultValue
        return ArgumentHelp("\(entry.summary) Default: \(shownDefault). Setting: \(key); allowed: \(entry.allowed).")
    }
}

/// Opens the audio input the settings name: a bad file is a bad setting (status 2), a missing
/// device or server is a runtime failure (status 1); both are one line.
func openAudioInput(_ settings: SenderSettings) throws -> any AudioSource {
    do {
        return try AudioInputs.open(settings)
    } catch let error as WAVFileError {
        throw Failure.badSetting("sender.input: \(error)")
    } catch {
        throw Failure.runtime("\(error)")
    }
}

/// How a command fails: one line on stderr and an exit status.
enum Failure: Error {
    /// A setting is not allowed: exit status 2.
    case badSetting(String)
    /// Something outside failed (network, device): exit status 1.
    case runtime(String)
}

extension AsyncParsableCommand {
    /// Runs `body`, turning ``Failure`` into one `lightorgan: …` line on stderr and its exit status.
    func reportingFailures(_ body: () async throws -> Void) async throws {
        do {
            try await body()
        } catch let failure as Failure {
            switch failure {
            case .badSetting(let message):
                StandardError.write("lightorgan: \(message)\n")
                throw ExitCode(2)
            case .runtime(let message):
                StandardError.write("lightorgan: \(message)\n")
                throw ExitCode(1)
            }
        }
    }
}

/// Runs `services` until they end or SIGINT/SIGTERM stops them gracefully.
func runUntilStopped(_ services: [ServiceGroupConfiguration.ServiceConfiguration], logger: Logger) async throws {
    let group = ServiceGroup(
        configuration: .init(services: services, gracefulShutdownSignals: [.sigterm, .sigint], logger: logger))
    try await group.run()
}

/// The strip's options, shared by `receive` and `test-leds`.
struct StripOptions: ParsableArguments {
    @Option(help: CommonOptions.help("receiver.strip.device")) var stripDevice: String?
    @Option(help: CommonOptions.help("receiver.strip.pixels")) var stripPixels: String?
    @Option(help: CommonOptions.help("receiver.strip.type")) var stripType: String?
    @Option(help: CommonOptions.help("receiver.strip.order")) var stripOrder: String?
    @Option(help: CommonOptions.help("receiver.strip.effect")) var stripEffect: String?
    @Option(help: CommonOptions.help("receiver.strip.brightness")) var stripBrightness: String?
    @Option(help: CommonOptions.help("receiver.strip.gamma")) var stripGamma: String?
    @Option(help: CommonOptions.help("receiver.strip.palette")) var stripPalette: String?

    /// (value, flag, key) of each option, as `CommonOptions.loadSettings` takes them.
    var overrides: [(String?, String, String)] {
        [
            (stripDevice, "--strip-device", "receiver.strip.device"),
            (stripPixels, "--strip-pixels", "receiver.strip.pixels"),
            (stripType, "--strip-type", "receiver.strip.type"), (stripOrder, "--strip-order", "receiver.strip.order"),
            (stripEffect, "--strip-effect", "receiver.strip.effect"),
            (stripBrightness, "--strip-brightness", "receiver.strip.brightness"),
            (stripGamma, "--strip-gamma", "receiver.strip.gamma"),
            (stripPalette, "--strip-palette", "receiver.strip.palette"),
        ]
    }
}
