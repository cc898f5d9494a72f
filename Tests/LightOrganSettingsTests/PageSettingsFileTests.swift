import Foundation
import LightOrganCore
import LightOrganSettings
import Testing

/// The page's file in the order of precedence: above the settings file, below variables and options;
/// what the page writes reads back the same, and the person's file is left alone.
@Suite struct PageSettingsFileTests {
    @Test func pageValuesWinOverTheFileAndLoseToOptions() async throws {
        let file = try TemporarySettingsFile(
            """
            # my receiver
            receiver:
              mode: onoff   # relays
              delay: 80
              timeout: 2
            """)
        let pageFile = file.directory + "/page-settings.yaml"
        var raw: [String: RawSetting] = [:]
        for key in SettingsCatalog.keys { raw[key.name] = RawSetting(key.defaultValue, from: .builtInDefault) }
        var live = LiveSettings(raw: raw, settings: try SettingsCatalog.resolve(raw), pageFile: pageFile)
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

    @Test func aForeignKeyOrBadValueInThePageFileNamesIt() async throws {
        let directory = try TemporarySettingsFile("").directory
        let pageFile = directory + "/page-settings.yaml"
        try "receiver:\n  port: 9\n".write(toFile: pageFile, atomically: true, encoding: .utf8)
        await #expect(throws: SettingsError.self) { try await SettingsLoader(environment: [:]).load(pageFile: pageFile) }
        try "receiver:\n  max_brightness: 300\n".write(toFile: pageFile, atomically: true, encoding: .utf8)
        do {
            _ = try await SettingsLoader(environment: [:]).load(pageFile: pageFile)
            Issue.record("a brightness of 300 was accepted")
        } catch {
            #expect(error.description.contains(pageFile) && error.description.contains("receiver.max_brightness = 300"))
        }
    }
}
