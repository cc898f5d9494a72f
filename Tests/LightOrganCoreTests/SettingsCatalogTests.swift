import LightOrganCore
import Testing

@Suite("Settings catalog")
struct SettingsCatalogTests {
    @Test(
        "suggests the key a typo meant",
        arguments: [
            ("sender.prot", "sender.port"), ("sendr.host", "sender.host"), ("receiver.ouptut", "receiver.output"),
            ("Sender.FPS", "sender.fps"),
        ])
    func closestKey(typo: String, meant: String) {
        #expect(SettingsCatalog.closestKey(to: typo) == meant)
    }

    @Test("suggests nothing for a word that is no typo")
    func noSuggestionForStrangers() {
        #expect(SettingsCatalog.closestKey(to: "volume") == nil)
    }

    @Test("names environment variables after keys")
    func environmentNames() {
        #expect(SettingsCatalog.key(named: "sender.port")?.environmentVariable == "LIGHTORGAN_SENDER_PORT")
    }

    @Test(
        "rejects values outside what each key allows",
        arguments: [
            ("sender.port", "0", "is out of range 1…65535"),
            ("sender.port", "8.5", "is not a whole number; allowed: 1…65535"),
            ("sender.fps", "251", "is out of range 10…250"),
            ("receiver.timeout", "0", "is out of range 0.05…3600 seconds"),
            ("receiver.timeout", "nan", "is not a number; allowed: 0.05…3600 seconds"),
            ("receiver.output", "lamps", "is not allowed; allowed: terminal, stdout, gpio"),
            ("receiver.lines.mid", "6, x", "is not allowed; allowed: BCM line numbers 0…511, separated by commas"),
            ("receiver.active_low", "maybe", "is not allowed; allowed: true or false"),
            (
                "sender.host", "",
                "is not allowed; allowed: auto (find the receiver by DNS-SD), a host name or an IPv4/IPv6 address"
            ),
            (
                "receiver.name", String(repeating: "x", count: 64),
                "is not allowed; allowed: empty, or a name of up to 63 bytes without control characters"
            ),
            (
                "sender.receiver_name", "stage\u{7}",
                "is not allowed; allowed: empty, or a name of up to 63 bytes without control characters"
            ),
        ])
    func rejectsBadValues(key: String, value: String, problem: String) {
        let raw = RawSetting(value, from: .file("x.yaml"))
        #expect(throws: SettingsError("x.yaml: \(key) = \(value) \(problem)")) {
            try SettingsCatalog.resolve([key: raw])
        }
    }

    @Test("keeps defaults for keys that are not set, and applies those that are")
    func resolves() throws {
        let settings = try SettingsCatalog.resolve([
            "sender.input": RawSetting("music/song.wav", from: .option("--input")),
            "receiver.output": RawSetting(" STDOUT ", from: .builtInDefault),
        ])
        #expect(settings.sender.input == .wavFile(path: "music/song.wav"))
        #expect(settings.receiver.output == .stdout)
        #expect(
            settings.sender.port == 8181 && settings.receiver.port == 8181 && settings.sender.framesPerSecond == 100)
    }

    @Test("the sender finds its receiver by DNS-SD unless a host or hosts are set")
    func discoveryByDefault() throws {
        let defaults = try SettingsCatalog.resolve([:])
        #expect(defaults.sender.discoversReceiver && defaults.sender.receivers.isEmpty)
        #expect(defaults.receiver.name.isEmpty && defaults.sender.receiverName.isEmpty)
        let named = try SettingsCatalog.resolve([
            "sender.host": RawSetting("pi.local", from: .option("--host")),
            "receiver.name": RawSetting(" Stage left ", from: .file("x.yaml")),
        ])
        #expect(!named.sender.discoversReceiver && named.sender.receivers == [Endpoint(host: "pi.local", port: 8181)])
        #expect(named.receiver.name == "Stage left")
        let several = try SettingsCatalog.resolve(["sender.hosts": RawSetting("a, b:9000", from: .builtInDefault)])
        #expect(!several.sender.discoversReceiver && several.sender.receivers.count == 2)
    }
}
