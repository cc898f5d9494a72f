import Foundation
import LightOrganCore
import Testing

/// The receiver's place in Home Assistant: the discovery configs it publishes, the commands it takes from a
/// shared broker (and the ones it refuses), the state it reports and how often, and the `mqtt.*` settings.
@Suite("Home Assistant over MQTT: discovery, commands, paced reports, settings")
struct HomeAssistantTests {
    static let topics = HomeTopics(base: "lightorgan/living-room")
    static let identity = HomeIdentity(
        id: "0123456789ab", name: "Living room", version: "0.2.0", hardware: "Raspberry Pi 4 Model B Rev 1.5",
        pageURL: "https://livingroom.local:8443/")

    static func discovery() -> HomeAssistantDiscovery {
        HomeAssistantDiscovery(
            identity: identity, topics: topics, prefix: "homeassistant",
            soundOptions: HomeOptions.sounds(captureDevices: ["hw:CARD=Mic,DEV=0"], current: "pipe:/run/spotify"),
            paletteOptions: HomeOptions.palettes(current: "red, green, blue"))
    }

    static func object(_ text: String) throws -> [String: Any] {
        try #require(JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
    }

    @Test(
        "every entity's config sits on <prefix>/<component>/lightorgan_<id>/<object>/config with the keys Home Assistant requires"
    )
    func configs() throws {
        let configs = Self.discovery().configs
        #expect(
            configs.map(\.topic) == [
                "homeassistant/light/lightorgan_0123456789ab/lights/config",
                "homeassistant/select/lightorgan_0123456789ab/sound/config",
                "homeassistant/select/lightorgan_0123456789ab/palette/config",
                "homeassistant/sensor/lightorgan_0123456789ab/driver/config",
                "homeassistant/sensor/lightorgan_0123456789ab/fps/config",
                "homeassistant/sensor/lightorgan_0123456789ab/bpm/config",
                "homeassistant/sensor/lightorgan_0123456789ab/bass/config",
                "homeassistant/sensor/lightorgan_0123456789ab/mid/config",
                "homeassistant/sensor/lightorgan_0123456789ab/treble/config",
                "homeassistant/button/lightorgan_0123456789ab/check/config",
            ])
        var uniqueIDs = Set<String>()
        for config in configs {
            let payload = try Self.object(config.payload)
            let uniqueID = try #require(payload["unique_id"] as? String)
            #expect(uniqueID == "lightorgan_0123456789ab_\(config.object)")
            uniqueIDs.insert(uniqueID)
            #expect(payload["availability_topic"] as? String == "lightorgan/living-room/availability")
            let device = try #require(payload["device"] as? [String: Any])
            #expect(device["identifiers"] as? [String] == ["lightorgan_0123456789ab"])
            #expect(device["name"] as? String == "Living room")
            #expect(device["sw_version"] as? String == "0.2.0")
            #expect(device["model"] as? String == "lightorgan receiver on Raspberry Pi 4 Model B Rev 1.5")
            #expect(device["configuration_url"] as? String == "https://livingroom.local:8443/")
            #expect((payload["origin"] as? [String: Any])?["name"] as? String == "lightorgan")
            switch config.component {
            case "light", "select", "button": #expect(payload["command_topic"] is String, "\(config.object)")
            default: #expect(payload["state_topic"] is String, "\(config.object)")
            }
        }
        #expect(uniqueIDs.count == configs.count)
        let light = try Self.object(configs[0].payload)
        #expect(light["schema"] as? String == "json")
        #expect(light["brightness_scale"] as? Int == 100)
        #expect(
            light["effect_list"] as? [String] == [
                "segments", "blend", "scroll", "energy", "flash", "bpm_strobe", "bar_step", "beat_pulse",
            ])
        #expect(light["supported_color_modes"] as? [String] == ["brightness"])
        #expect(light["color_mode"] as? Bool == true, "Home Assistant 2024.3 refuses the light without it")
        #expect(light["name"] is NSNull, "the light is the device: no name of its own")
        let sound = try Self.object(configs[1].payload)
        #expect(
            sound["options"] as? [String] == [
                "network", "airplay", "bluetooth", "snapcast", "hw:CARD=Mic,DEV=0", "pipe:/run/spotify",
            ])
        let tempo = try Self.object(configs[5].payload)
        #expect(tempo["value_template"] as? String == "{{ value_json.bpm }}")
        #expect(tempo["unit_of_measurement"] as? String == "BPM")
        #expect(tempo["state_topic"] as? String == "lightorgan/living-room/status")
        let bass = try Self.object(configs[6].payload)
        #expect(bass["value_template"] as? String == "{{ value_json.bass }}")
        #expect(bass["unit_of_measurement"] as? String == "%")
    }

    @Test("the same receiver makes the same bytes: a config re-sent after Home Assistant restarts is the same message")
    func stable() {
        #expect(Self.discovery().configs == Self.discovery().configs)
        var renamed = Self.discovery()
        renamed.identity.name = "Kitchen"
        #expect(zip(renamed.configs, Self.discovery().configs).allSatisfy { $0.topic == $1.topic })
    }

    static func parse(_ topic: String, _ payload: String) throws(HomeCommandError) -> HomeCommand? {
        let discovery = discovery()
        return try HomeCommand.parse(
            topic: topic, payload: Array(payload.utf8), topics: topics, soundOptions: discovery.soundOptions,
            paletteOptions: discovery.paletteOptions)
    }

    @Test("Home Assistant's own commands become settings changes and the wiring check")
    func commands() throws {
        let light = Self.topics.lightCommand
        #expect(
            try Self.parse(light, #"{"state":"ON","effect":"flash"}"#)
                == .light(on: true, brightness: nil, effect: .flash))
        #expect(
            try Self.parse(light, #"{"state":"ON","brightness":77,"effect":"blend"}"#)
                == .light(on: true, brightness: 77, effect: .blend))
        #expect(try Self.parse(light, #"{"state":"OFF"}"#) == .light(on: false, brightness: nil, effect: nil))
        #expect(
            try Self.parse(light, #"{"state":"ON","brightness":0}"#) == .light(on: false, brightness: nil, effect: nil))
        #expect(try Self.parse(Self.topics.soundCommand, "airplay") == .select(key: "receiver.sound", value: "airplay"))
        #expect(
            try Self.parse(Self.topics.paletteCommand, "red, amber, white")
                == .select(key: "receiver.strip.palette", value: "red, amber, white"))
        #expect(try Self.parse(Self.topics.check, "PRESS") == .check)
        #expect(try Self.parse("lightorgan/kitchen/light/set", #"{"state":"ON"}"#) == nil, "another receiver's topic")
    }

    @Test(
        "a payload that is too long, not JSON, or names a value the setting does not allow or a device that does not exist changes nothing, in one line",
        arguments: [
            ("light/set", String(repeating: "x", count: 513), "a payload of 513 bytes is too long (at most 512)"),
            ("light/set", "ON", "\"ON\" is not a JSON light command"),
            ("light/set", "{\"state\":\"ON\"", "is not a JSON light command"),
            ("light/set", "{\"state\":\"MAYBE\"}", "state \"MAYBE\" is not allowed; allowed: ON, OFF"),
            ("light/set", "{\"brightness\":300}", "brightness 300.0 is out of range 0…100"),
            ("light/set", "{\"effect\":\"rainbow\"}", "effect \"rainbow\" is not allowed; allowed: segments, blend"),
            ("light/set", "{\"color\":{\"r\":255}}", "asks for nothing"),
            ("sound/set", "hw:7,0", "\"hw:7,0\" is not one of the options; allowed: network | airplay"),
            ("sound/set", "pipe:/etc/shadow", "is not one of the options"),
            ("palette/set", "red", "\"red\" is not one of the options"),
            ("check/press", "rm -rf /", "\"rm -rf /\" is not allowed; allowed: PRESS"),
            ("check/press", "PRESS\n\u{1b}[2J", "\"PRESS??[2J\" is not allowed"),
        ])
    func refused(suffix: String, payload: String, reason: String) throws {
        let topic = "lightorgan/living-room/\(suffix)"
        let error = try #require(throws: HomeCommandError.self) { try Self.parse(topic, payload) }
        #expect(error.description.contains(reason), "\(error)")
        #expect(error.description.hasPrefix("mqtt: \(topic): ") && error.description.hasSuffix("; nothing changed"))
        #expect(!error.description.contains("\n"))
    }

    @Test("bytes that are not UTF-8 are refused")
    func notText() throws {
        let error = try #require(throws: HomeCommandError.self) {
            try HomeCommand.parse(
                topic: Self.topics.soundCommand, payload: [0xff, 0xfe, 0x00], topics: Self.topics, soundOptions: [],
                paletteOptions: [])
        }
        #expect(error.reason == "the payload is not UTF-8 text")
    }

    static func snapshot(driver: String = "laptop.local", fps: Double = 100, levels: LevelFrame = .off)
        -> HomeReports.Snapshot
    {
        HomeReports.Snapshot(
            lightsOn: true, brightness: 80, effect: .scroll, sound: "network", palette: "red, green, blue",
            driver: driver, framesPerSecond: fps, levels: levels)
    }

    @Test("reports: every state once, then only what changes; levels at most twice a second, the frame rate every 5 s")
    func pacing() {
        var reports = HomeReports(topics: Self.topics)
        let first = reports.messages(for: Self.snapshot(), now: .zero)
        #expect(
            first.map(\.topic) == [
                Self.topics.lightState, Self.topics.soundState, Self.topics.paletteState, Self.topics.status,
                Self.topics.levels,
            ])
        #expect(first[0].payload == #"{"brightness":80,"color_mode":"brightness","effect":"scroll","state":"ON"}"#)
        #expect(first[3].payload == #"{"bpm":0,"driver":"laptop.local","fps":100}"#)
        #expect(first.filter(\.retain).count == 4, "the levels alone are not retained")
        // Music at 100 frames a second for 10 s, a tick every 50 ms: levels change every tick, the rate jitters.
        var sent: [HomeReports.Message] = []
        for tick in 1...200 {
            let level = UInt8(tick * 37 % 256)
            let snapshot = Self.snapshot(
                fps: 99.6 + Double(tick % 3) * 0.5, levels: LevelFrame(bass: level, mid: 9, treble: 0))
            sent += reports.messages(for: snapshot, now: .milliseconds(50 * tick))
        }
        let levels = sent.filter { $0.topic == Self.topics.levels }.count
        let status = sent.filter { $0.topic == Self.topics.status }.count
        #expect((19...20).contains(levels), "\(levels) level messages in 10 s")
        #expect(status <= 2, "\(status) status messages in 10 s")
        #expect(Double(sent.count) / 10 <= 3, "\(sent.count) messages in 10 s")
        // A new driver goes at once; nothing changing sends nothing.
        let driver = reports.messages(for: Self.snapshot(driver: "AirPlay: playing"), now: .milliseconds(10_010))
        #expect(driver.contains { $0.topic == Self.topics.status && $0.payload.contains("AirPlay: playing") })
        var quiet = 0
        for tick in 1...100 {
            quiet +=
                reports.messages(for: Self.snapshot(driver: "AirPlay: playing"), now: .milliseconds(20_000 + 50 * tick))
                .count
        }
        #expect(quiet <= 1, "\(quiet) messages while nothing changed")
        reports.resend()
        #expect(reports.messages(for: Self.snapshot(), now: .seconds(30)).count == 5)
    }

    @Test("the tempo: a beat found or lost goes at once, a tempo that drifts at most every 5 s with the frame rate")
    func tempoReports() {
        var reports = HomeReports(topics: Self.topics)
        func snapshot(bpm: Int) -> HomeReports.Snapshot {
            var snapshot = Self.snapshot()
            snapshot.bpm = bpm
            return snapshot
        }
        _ = reports.messages(for: snapshot(bpm: 0), now: .zero)
        let found = reports.messages(for: snapshot(bpm: 124), now: .milliseconds(100))
        #expect(found.contains { $0.topic == Self.topics.status && $0.payload.contains(#""bpm":124"#) })
        let drift = reports.messages(for: snapshot(bpm: 125), now: .milliseconds(200))
        #expect(!drift.contains { $0.topic == Self.topics.status })
        let later = reports.messages(for: snapshot(bpm: 125), now: .milliseconds(5_200))
        #expect(later.contains { $0.topic == Self.topics.status && $0.payload.contains(#""bpm":125"#) })
        let lost = reports.messages(for: snapshot(bpm: 0), now: .milliseconds(5_300))
        #expect(lost.contains { $0.topic == Self.topics.status && $0.payload.contains(#""bpm":0"#) })
    }

    @Test("levels are reported in percent of full")
    func percent() {
        var reports = HomeReports(topics: Self.topics)
        let messages = reports.messages(
            for: Self.snapshot(levels: LevelFrame(bass: 255, mid: 128, treble: 1)), now: .zero)
        #expect(messages.last?.payload == #"{"bass":100,"mid":50,"treble":0}"#)
    }

    @Test(
        "mqtt.broker: empty, auto, mqtt:// and mqtts:// with their ports",
        arguments: [
            ("", MQTTBroker.none), ("auto", .auto),
            ("mqtt://homeassistant.local", .address(host: "homeassistant.local", port: 1883, tls: false)),
            ("mqtts://broker:8884", .address(host: "broker", port: 8884, tls: true)),
            ("mqtt://[fd00::5]:1884/", .address(host: "fd00::5", port: 1884, tls: false)),
            ("MQTT://10.0.0.2", .address(host: "10.0.0.2", port: 1883, tls: false)),
        ])
    func broker(text: String, broker: MQTTBroker) {
        #expect(MQTTBroker(parsing: text) == broker)
    }

    @Test(
        "mqtt.broker refuses what is not a broker's address",
        arguments: ["http://x", "mqtt://", "mqtt://a:0", "mqtt://u:p@host", "host:1883", "mqtt://a b"])
    func badBroker(text: String) {
        #expect(MQTTBroker(parsing: text) == nil)
    }

    @Test("topics: the default from the receiver's name, and what a prefix may hold")
    func topicNames() {
        #expect(MQTTTopic.defaultBase(name: "Living Room (Pi 4)") == "lightorgan/living-room-pi-4")
        #expect(MQTTTopic.defaultBase(name: "Küche") == "lightorgan/k-che")
        #expect(MQTTTopic.defaultBase(name: "!!!") == "lightorgan/receiver")
        #expect(MQTTTopic.isPrefix("home/lights/organ"))
        for bad in [
            "", "a/+/b", "a/#", "a//b", "/a", "a/", "$SYS/x", "a b", "a\u{0}b", String(repeating: "a", count: 201),
        ] {
            #expect(!MQTTTopic.isPrefix(bad), "\(bad)")
        }
    }

    @Test("the settings file's mqtt keys: a wrong value names the key, the value and what is allowed")
    func settings() throws {
        let settings = try SettingsCatalog.resolve([
            "mqtt.broker": RawSetting("mqtt://127.0.0.1:1884", from: .builtInDefault),
            "mqtt.password_file": RawSetting("/etc/lightorgan/mqtt-password", from: .builtInDefault),
        ])
        #expect(settings.mqtt.broker == .address(host: "127.0.0.1", port: 1884, tls: false))
        #expect(settings.mqtt.isEnabled)
        #expect(settings.mqtt.discoveryPrefix == "homeassistant")
        #expect(!Settings().mqtt.isEnabled, "off unless configured")
        for (key, value, allowed) in [
            ("mqtt.broker", "tcp://x", "allowed: empty (no MQTT), auto"),
            ("mqtt.password_file", "secret", "absolute path"),
            ("mqtt.topic", "a/#", "without +, #"), ("mqtt.discovery_prefix", "", "topic levels"),
            ("receiver.lights", "dim", "allowed: on (the lights dance), off"),
        ] {
            let error = try #require(throws: SettingsError.self) {
                try SettingsCatalog.resolve([key: RawSetting(value, from: .builtInDefault)])
            }
            #expect(error.description.contains(key) && error.description.contains(allowed), "\(error)")
        }
    }

    @Test("ids: 12 hex digits, made from random bits")
    func ids() {
        #expect(HomeIdentity.makeID(random: 0x1234) == "000000001234")
        #expect(HomeIdentity.makeID(random: .max).count == 12)
        #expect(HomeIdentity.isID("0123456789ab"))
        #expect(!HomeIdentity.isID("0123456789AB") && !HomeIdentity.isID("../../etc") && !HomeIdentity.isID(""))
    }
}
