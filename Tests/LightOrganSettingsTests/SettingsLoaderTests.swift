import Foundation
import LightOrganCore
import LightOrganSettings
import Testing

/// A settings file in a fresh temporary directory.
struct TemporarySettingsFile {
    let directory: String
    let path: String

    init(_ yaml: String) throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("lightorgan-\(UUID())").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        path = directory + "/lightorgan.yaml"
        try yaml.write(toFile: path, atomically: true, encoding: .utf8)
    }
}

@Suite("Settings loader")
struct SettingsLoaderTests {
    func load(
        file: String? = nil, environment: [String: String] = [:], options: [String: (String, String)] = [:]
    ) async throws -> SettingsLoader.Loaded {
        let configPath = try file.map { try TemporarySettingsFile($0).path }
        let loader = SettingsLoader(
            options: options.mapValues { (value: $0.0, option: $0.1) }, environment: environment)
        return try await loader.load(configPath: configPath)
    }

    func expectError(
        _ message: String, file: String? = nil, environment: [String: String] = [:],
        options: [String: (String, String)] = [:], sourceLocation: SourceLocation = #_sourceLocation
    ) async {
        do {
            _ = try await load(file: file, environment: environment, options: options)
            Issue.record("no error; expected \(message)", sourceLocation: sourceLocation)
        } catch {
            #expect("\(error)".hasSuffix(message), "got: \(error)", sourceLocation: sourceLocation)
        }
    }

    @Test("uses the built-in defaults when nothing is set")
    func defaults() async throws {
        let loaded = try await load()
        #expect(loaded.settings == Settings())
        #expect(loaded.file == nil)
        #expect(loaded.sources["sender.port"] == .builtInDefault)
    }

    @Test("takes options over environment over file over defaults")
    func precedence() async throws {
        let file = "sender:\n  port: 1001\n  fps: 50\n  host: pi.local\nreceiver:\n  output: stdout\n"
        let environment = ["LIGHTORGAN_SENDER_PORT": "1002", "LIGHTORGAN_SENDER_FPS": "60"]
        let loaded = try await load(file: file, environment: environment, options: ["sender.port": ("1003", "--port")])
        #expect(loaded.settings.sender.port == 1003)
        #expect(loaded.settings.sender.framesPerSecond == 60)
        #expect(loaded.settings.sender.host == "pi.local")
        #expect(loaded.settings.receiver.output == .stdout)
        #expect(loaded.settings.receiver.port == 8181)
        #expect(loaded.sources["sender.port"] == .option("--port"))
        #expect(loaded.sources["sender.fps"] == .environment("LIGHTORGAN_SENDER_FPS"))
        #expect(loaded.sources["sender.host"].map { "\($0)" }?.hasSuffix("lightorgan.yaml") == true)
    }

    @Test("reports a bad value in the file with the file, key, value and what is allowed")
    func badValueInFile() async {
        await expectError(
            "lightorgan.yaml: sender.port = 99999 is out of range 1…65535", file: "sender:\n  port: 99999\n")
        await expectError(
            "lightorgan.yaml: sender.fps = fast is not a whole number; allowed: 10…250", file: "sender:\n  fps: fast\n")
        await expectError(
            "lightorgan.yaml: receiver.output = lamps is not allowed; allowed: terminal, stdout, gpio",
            file: "receiver:\n  output: lamps\n")
        await expectError(
            "lightorgan.yaml: sender.port must be a single value; allowed: 1…65535", file: "sender:\n  port: [1, 2]\n")
    }

    @Test("reads the delays: auto or milliseconds for the sender, milliseconds only for the receiver")
    func delays() async throws {
        let defaults = try await load()
        #expect(defaults.settings.sender.delay == .auto)
        #expect(defaults.settings.sender.input == .auto)
        #expect(defaults.settings.receiver.delayMilliseconds == 0)
        let set = try await load(file: "sender:\n  delay: 120\nreceiver:\n  delay: 180ms\n")
        #expect(set.settings.sender.delay == .milliseconds(120))
        #expect(set.settings.receiver.delayMilliseconds == 180)
        await expectError(
            "lightorgan.yaml: sender.delay = soon is not allowed; allowed: auto or 0…2000 milliseconds",
            file: "sender:\n  delay: soon\n")
        await expectError(
            "option --delay: receiver.delay = auto is not allowed; allowed: 0…2000 milliseconds",
            options: ["receiver.delay": ("auto", "--delay")])
    }

    @Test("never falls back to the default when a higher source holds a bad value")
    func badValueIsNeverReplaced() async {
        await expectError(
            "environment LIGHTORGAN_SENDER_PORT: sender.port = 0 is out of range 1…65535",
            file: "sender:\n  port: 9000\n", environment: ["LIGHTORGAN_SENDER_PORT": "0"])
        await expectError(
            "option --timeout: receiver.timeout = -1 is out of range 0.05…3600 seconds",
            options: ["receiver.timeout": ("-1", "--timeout")])
    }

    @Test("reads GPIO lines as a number, a comma list or a YAML list")
    func gpioLines() async throws {
        let loaded = try await load(
            file: "receiver:\n  output: gpio\n  lines:\n    bass: [5, 17]\n    mid: 6\n  active_low: yes\n",
            environment: ["LIGHTORGAN_RECEIVER_LINES_TREBLE": "13, 19, 26"])
        #expect(loaded.settings.receiver.output == .gpio)
        #expect(loaded.settings.receiver.lines == [.bass: [5, 17], .mid: [6], .treble: [13, 19, 26]])
        #expect(loaded.settings.receiver.activeLow)
        await expectError(
            "lightorgan.yaml: receiver.lines.bass = 5, 600 is not allowed; allowed: BCM line numbers 0…511, separated by commas",
            file: "receiver:\n  lines:\n    bass: [5, 600]\n")
    }

    @Test("reads the analysis keys, in their units, and checks the crossovers against each other")
    func analysisKeys() async throws {
        let loaded = try await load(
            file: "analysis:\n  crossover_low: 200\n  crossover_high: 5000\n  attack: 2\n  release: 80\n")
        #expect(loaded.settings.analysis.bassMidCrossover == 200)
        #expect(loaded.settings.analysis.midTrebleCrossover == 5000)
        #expect(loaded.settings.analysis.attack == 0.002)
        #expect(loaded.settings.analysis.release == 0.08)
        await expectError(
            "lightorgan.yaml: analysis.crossover_high = 1200 leaves less than an octave between the crossovers (800 Hz and 1200 Hz); the high one must be at least twice the low one",
            file: "analysis:\n  crossover_low: 800\n  crossover_high: 1200\n")
        await expectError(
            "lightorgan.yaml: analysis.release = 5 is out of range 10…2000 ms", file: "analysis:\n  release: 5\n")
    }

    @Test("reads the dance keys and names the one that was set when dark and full leave no room")
    func danceKeys() async throws {
        let loaded = try await load(
            file: "analysis:\n  response: level\n  dark_below: 0.5\n  full_at: 2\n  fade: 150\n")
        #expect(loaded.settings.analysis.response == .level)
        #expect(loaded.settings.analysis.dance.darkAt == 0.5)
        #expect(loaded.settings.analysis.dance.fullAt == 2)
        #expect(loaded.settings.analysis.dance.fade == 0.15)
        await expectError(
            "lightorgan.yaml: analysis.dark_below = 3 leaves no room between dark (3) and full (1.5); analysis.full_at must be above analysis.dark_below",
            file: "analysis:\n  dark_below: 3\n")
        await expectError(
            "lightorgan.yaml: analysis.full_at = 1 leaves no room between dark (2) and full (1); analysis.full_at must be above analysis.dark_below",
            file: "analysis:\n  dark_below: 2\n  full_at: 1\n")
    }

    @Test("reports a misspelt key with its line and the closest known key")
    func misspeltKey() async {
        await expectError(
            "lightorgan.yaml:3: unknown key sender.prot; did you mean sender.port?",
            file: "sender:\n  host: pi.local\n  prot: 9000\n")
        await expectError(
            "environment LIGHTORGAN_RECEIVER_OUTPT: unknown key LIGHTORGAN_RECEIVER_OUTPT; did you mean LIGHTORGAN_RECEIVER_OUTPUT?",
            environment: ["LIGHTORGAN_RECEIVER_OUTPT": "stdout"])
        await expectError(
            "lightorgan.yaml:1: unknown key volume; known keys: \(SettingsCatalog.keys.map(\.name).joined(separator: ", "))",
            file: "volume: 11\n")
        #expect(
            SettingsCatalog.keys.map(\.name).starts(with: ["sender.host", "sender.port", "sender.fps", "sender.input"]))
    }

    @Test("reports broken YAML with its position")
    func brokenYAML() async {
        await expectError(
            "lightorgan.yaml: not valid YAML: mapping values are not allowed in this context at line 3, column 7",
            file: "sender:\n  port: 9000\n   fps: 3\n")
    }

    @Test("accepts an empty file and an empty section")
    func emptyFile() async throws {
        #expect(try await load(file: "").settings == Settings())
        #expect(try await load(file: "# nothing yet\nsender:\n").settings == Settings())
    }

    @Test("finds the file: --config, then LIGHTORGAN_CONFIG, then the search path")
    func locatesFile() throws {
        let existing: Set<String> = [
            "/home/pi/.config/lightorgan/lightorgan.yaml", "/etc/lightorgan/lightorgan.yaml", "/x.yaml",
        ]
        func locator(_ environment: [String: String]) -> SettingsFileLocator {
            SettingsFileLocator(environment: environment, fileExists: { existing.contains($0) })
        }
        #expect(
            try locator(["HOME": "/home/pi"]).locate(explicitPath: nil) == "/home/pi/.config/lightorgan/lightorgan.yaml"
        )
        #expect(try locator(["HOME": "/root"]).locate(explicitPath: nil) == "/etc/lightorgan/lightorgan.yaml")
        #expect(
            try locator(["HOME": "/home/pi", "LIGHTORGAN_CONFIG": "/x.yaml"]).locate(explicitPath: nil) == "/x.yaml")
        #expect(
            try locator(["LIGHTORGAN_CONFIG": "/x.yaml"]).locate(
                explicitPath: "/home/pi/.config/lightorgan/lightorgan.yaml")
                == "/home/pi/.config/lightorgan/lightorgan.yaml")
        #expect(throws: SettingsError("option --config: settings file /nope.yaml does not exist")) {
            try locator([:]).locate(explicitPath: "/nope.yaml")
        }
        #expect(throws: SettingsError("environment LIGHTORGAN_CONFIG: settings file /gone.yaml does not exist")) {
            try locator(["LIGHTORGAN_CONFIG": "/gone.yaml"]).locate(explicitPath: nil)
        }
        #expect(
            locator(["XDG_CONFIG_HOME": "/xdg", "HOME": "/home/pi"]).searchPath == [
                "lightorgan.yaml", "/xdg/lightorgan/lightorgan.yaml", "/etc/lightorgan/lightorgan.yaml",
            ])
    }

    @Test("the example file in scripts/ is valid and documents every key with its default")
    func exampleFile() async throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let example = root.appendingPathComponent("scripts/lightorgan.example.yaml").path
        let text = try String(contentsOfFile: example, encoding: .utf8)
        let loaded = try await SettingsLoader(environment: [:]).load(configPath: example)
        #expect(loaded.settings == Settings())
        for key in SettingsCatalog.keys {
            let leaf = String(key.name.split(separator: ".").last!)
            #expect(text.contains("  \(leaf): \(key.defaultValue)"), "\(key.name) missing from the example")
        }
    }
}
