import LightOrganCore
import Testing

/// Settings changed on the page: the settings file's rules and messages, what may change, the file kept.
@Suite struct LiveSettingsTests {
    private func live(_ extra: [String: RawSetting] = [:]) throws -> LiveSettings {
        var raw: [String: RawSetting] = [:]
        for key in SettingsCatalog.keys { raw[key.name] = RawSetting(key.defaultValue, from: .builtInDefault) }
        raw.merge(extra) { _, new in new }
        return LiveSettings(raw: raw, settings: try SettingsCatalog.resolve(raw), pageFile: "/state/page-settings.yaml")
    }

    @Test func aChangeIsCheckedLikeTheFile() throws {
        var settings = try live()
        let applied = try settings.set("receiver.mode", to: "onoff")
        #expect(applied.receiver.mode == .onoff)
        #expect(throws: SettingsError("receiver.mode = blink is not allowed; allowed: pwm, onoff, bar")) {
            try settings.set("receiver.mode", to: "blink")
        }
        #expect(settings.settings.receiver.mode == .onoff)  // a refused value changes nothing
        #expect(throws: SettingsError.self) { try settings.set("receiver.max_brightness", to: "0") }
        #expect(throws: SettingsError.self) { try settings.set("receiver.timeout", to: "soon") }
        try settings.set("receiver.delay", to: "250")
        #expect(settings.settings.receiver.delayMilliseconds == 250)
    }

    @Test func onlyTunableKeysAndNotThoseAnOptionSets() throws {
        var settings = try live(["receiver.timeout": RawSetting("2", from: .option("--timeout"))])
        #expect(throws: SettingsError.self) { try settings.set("receiver.port", to: "9000") }
        #expect(throws: SettingsError.self) { try settings.set("receiver.timeout", to: "3") }
        #expect(settings.lockReason("receiver.timeout")?.contains("--timeout") == true)
        #expect(settings.rows.first { $0.key == "receiver.timeout" }?.locked != nil)
        #expect(settings.rows.map(\.key) == PageSettings.tunableKeys)
    }

    @Test func thePageFileHoldsThePageValuesOnly() throws {
        var settings = try live(["receiver.delay": RawSetting("80", from: .file("lightorgan.yaml"))])
        #expect(settings.pageValues.isEmpty)
        try settings.set("receiver.max_brightness", to: "40")
        try settings.set("receiver.mode", to: "bar")
        #expect(settings.pageValues.map(\.key) == ["receiver.mode", "receiver.max_brightness"])
        let text = settings.pageFileText
        #expect(text.contains("receiver:\n  mode: bar\n  max_brightness: 40\n"))
        #expect(!text.contains("delay"))
        #expect(settings.rows.first { $0.key == "receiver.delay" }?.source == "file")
        #expect(settings.rows.first { $0.key == "receiver.mode" }?.source == "page")
    }
}
