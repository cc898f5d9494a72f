import Foundation
import LightOrganCore
import LightOrganSettings
import Testing

/// The page's file in the order of precedence: above the settings file, below variables and options;
/// what the page writes reads back the same, and the person's file is left alone.
@Suite struct PageSettingsFileTests {
    @Test func pageValuesWinOverTheFileAndLoseToOptions() async throws {
        let (file, pageFile, initial) = try await Self.started(
            """
            # my receiver
            receiver:
              mode: onoff   # relays
              delay: 80
              timeout: 2
            """)
        var live = initial
        try live.set("receiver.delay", to: "150")
        try live.set("receiver.timeout", to: "0.5")
        try StateDirectory.writePrivate(live.pageFileText, to: pageFile)
        let attributes = try FileManager.default.attributesOfItem(atPath: pageFile)
        #expect((attributes[.posixPermissions] as? Int) == 0o600)

        let loader = SettingsLoader(options: ["receiver.timeout": (value: "3", option: "--timeout")], environment: [:])
        let loaded = try await loader.load(configPath: file.path, pageFile: pageFile)
        #expect(loaded.settings.receiver.mode == .onoff)  // the file's
        #expect(loaded.settings.receiver.delayMilliseconds == 150)  // the page's
        #expect(loaded.settings.receiver.timeout == 3)  // the option's
        #expect(loaded.sources["receiver.delay"] == .page(pageFile))
        #expect(try String(contentsOfFile: file.path, encoding: .utf8).contains("mode: onoff   # relays"))
    }

    /// A receiver started with a settings file holding `yaml` and no page values yet: the file, the
    /// page's file beside it, and the live settings.
    static func started(_ yaml: String) async throws -> (
        file: TemporarySettingsFile, pageFile: String, live: LiveSettings
    ) {
        let file = try TemporarySettingsFile(yaml)
        let pageFile = file.directory + "/page-settings.yaml"
        let loaded = try await SettingsLoader(environment: [:]).load(configPath: file.path, pageFile: pageFile)
        return (file, pageFile, loaded.live(pageFile: pageFile))
    }

    /// A value with what YAML may not hold as it is (C1 controls, a byte order mark, U+FFFE, DEL) is
    /// written escaped and reads back as the same text (the fuzzer found `receiver.play` with U+009A
    /// written bare, which libyaml refused as a control character). Whitespace, NEL and the line
    /// separators among them, is no device name's, and the same escapes cover it.
    @Test func valuesWithControlsAndLineSeparatorsReadBackTheSame() async throws {
        let (_, pageFile, initial) = try await Self.started("receiver:\n  mode: pwm\n")
        var live = initial
        let awkward = "\u{FFFD}\u{534}3\u{9A}|\u{80}|\u{9F}|\u{FEFF}|\u{FFFE}|\u{7F}|é\u{1F3B5}"
        try live.set("receiver.play", to: awkward)
        try StateDirectory.writePrivate(live.pageFileText, to: pageFile)
        let loaded = try await SettingsLoader(environment: [:]).load(pageFile: pageFile)
        #expect(loaded.settings == live.settings, "\(live.pageFileText)")
        #expect(live.pageFileText.contains(#"3\x9a|\x80|\x9f|\ufeff|\ufffe|\x7f|é\#u{1F3B5}""#))
    }

    @Test func aLaterEditOfTheFileWinsOverThePagesValue() async throws {
        let (file, pageFile, initial) = try await Self.started("receiver:\n  max_brightness: 80\n  delay: 20\n")
        var live = initial
        try live.set("receiver.max_brightness", to: "40")
        try live.set("receiver.delay", to: "60")
        try live.set("receiver.timeout", to: "2")
        try StateDirectory.writePrivate(live.pageFileText, to: pageFile)
        #expect(
            live.pageFileText.contains(
                "replaced:\n  receiver.max_brightness: 80\n  receiver.delay: 20\n  receiver.timeout: 1\n"))

        // Restarted with the file as it was: the page's values.
        var loaded = try await SettingsLoader(environment: [:]).load(configPath: file.path, pageFile: pageFile)
        #expect(loaded.settings.receiver.maxBrightness == 40 && loaded.superseded.isEmpty)

        // The owner edits brightness in the file from 80 to 90 and restarts: the newer value, 90, wins;
        // the page's other values stay.
        try "receiver:\n  max_brightness: 90\n  delay: 20\n".write(toFile: file.path, atomically: true, encoding: .utf8)
        loaded = try await SettingsLoader(environment: [:]).load(configPath: file.path, pageFile: pageFile)
        #expect(loaded.settings.receiver.maxBrightness == 90)
        #expect(loaded.sources["receiver.max_brightness"] == .file(file.path))
        #expect(loaded.superseded.map(\.key) == ["receiver.max_brightness"])
        #expect(loaded.superseded.first?.description.contains("from 80 to 90 since the page set 40") == true)
        #expect(loaded.settings.receiver.delayMilliseconds == 60 && loaded.settings.receiver.timeout == 2)
        let restarted = loaded.live(pageFile: pageFile)
        #expect(!restarted.pageFileText.contains("max_brightness"))
        #expect(restarted.rows.first { $0.key == "receiver.max_brightness" }?.source == "file")
    }

    @Test func useTheFilesValueDropsThePagesValue() async throws {
        let (file, pageFile, initial) = try await Self.started("receiver:\n  max_brightness: 80\n")
        var live = initial
        try live.set("receiver.max_brightness", to: "40")
        try live.set("receiver.delay", to: "100")
        let brightness = live.rows.first { $0.key == "receiver.max_brightness" }
        #expect(brightness?.value == "40" && brightness?.source == "page")
        #expect(brightness?.fileValue == "80" && brightness?.fileSource == "file")
        #expect(live.rows.first { $0.key == "receiver.delay" }?.fileSource == "default")
        try live.useFileValue("receiver.max_brightness")
        try live.useFileValue("receiver.delay")
        #expect(live.settings.receiver.maxBrightness == 80 && live.settings.receiver.delayMilliseconds == 0)
        #expect(
            live.pageValues.isEmpty && !live.pageFileText.contains("receiver:\n")
                && !live.pageFileText.contains("\nreplaced:"))
        try StateDirectory.writePrivate(live.pageFileText, to: pageFile)
        let loaded = try await SettingsLoader(environment: [:]).load(configPath: file.path, pageFile: pageFile)
        #expect(loaded.sources["receiver.max_brightness"] == .file(file.path))
        #expect(throws: SettingsError.self) { try live.useFileValue("receiver.port") }
    }

    @Test func aForeignKeyOrBadValueInThePageFileNamesIt() async throws {
        let directory = try TemporarySettingsFile("").directory
        let pageFile = directory + "/page-settings.yaml"
        try "receiver:\n  port: 9\n".write(toFile: pageFile, atomically: true, encoding: .utf8)
        await #expect(throws: SettingsError.self) {
            try await SettingsLoader(environment: [:]).load(pageFile: pageFile)
        }
        try "receiver:\n  max_brightness: 300\n".write(toFile: pageFile, atomically: true, encoding: .utf8)
        do {
            _ = try await SettingsLoader(environment: [:]).load(pageFile: pageFile)
            Issue.record("a brightness of 300 was accepted")
        } catch {
            #expect(error.description.contains(pageFile) && error.description.contains("receiver.max_brightness = 300"))
        }
    }
}
