/// Every key the settings file knows, and the rules that turn raw values into ``Settings``.
///
/// The catalog is the single source of truth for names, defaults, allowed values, environment
/// variable names and the closest-key suggestion for a misspelt key.
public enum SettingsCatalog {
    /// Environment variables that set keys start with this.
    public static let environmentPrefix = "LIGHTORGAN_"
    /// The environment variable that names the settings file (not a key).
    public static let configEnvironmentVariable = "LIGHTORGAN_CONFIG"

    /// All keys, in the order the example file lists them.
    public static let keys: [SettingKey] = [
        .text(
            "sender.host", default: "auto",
            allowed: "auto (find the receiver by DNS-SD), a host name or an IPv4/IPv6 address",
            summary:
                "The receiver (the Raspberry Pi): auto finds it on the local network (DNS-SD), or a host name or address."
        ) { $0.sender.host = $1 },
        .integer(
            "sender.port", default: 8181, range: 1...65535, summary: "TCP port of the receiver."
        ) { $0.sender.port = $1 },
        .integer(
            "sender.fps", default: 100, range: 10...250, summary: "Frames sent per second."
        ) { $0.sender.framesPerSecond = $1 },
        .text(
            "sender.input", default: "auto",
            allowed: "auto, monitor, demo, - (stdin), a .wav file, or an ALSA capture device (default, hw:1,0, pulse…)",
            summary:
                "Audio to analyse: auto or monitor (what this machine plays, through PipeWire/PulseAudio), demo (built-in groove), - (raw PCM on stdin), a WAV file, or an ALSA device."
        ) { $0.sender.input = AudioInputChoice(parsing: $1) },
        .delay(
            "sender.delay", default: "auto", allowsAuto: true,
            summary:
                "Hold the lights back so they change when the sound leaves the speaker: auto (the playing sink's latency, with the monitor input), or milliseconds (0: none)."
        ) { $0.sender.delay = $1 },
        .integer(
            "sender.rate", default: 44_100, range: 8_000...192_000, summary: "Raw PCM on stdin: sample rate, Hz."
        ) { $0.sender.rawRate = $1 },
        .integer(
            "sender.channels", default: 2, range: 1...8, summary: "Raw PCM on stdin: interleaved channels."
        ) { $0.sender.rawChannels = $1 },
        .choice(
            "sender.format", default: SampleFormat.s16le, summary: "Raw PCM on stdin: sample format."
        ) { $0.sender.rawFormat = $1 },
        .targets(
            "sender.hosts", allowsReceivers: true,
            summary:
                "Several receivers and lighting devices to send the same frames to at once: host[:port] of a receiver (auto: found by DNS-SD), or sacn://, artnet://, ddp:// targets (empty: sender.host alone)."
        ) { settings, receivers, targets in
            settings.sender.hosts = receivers
            settings.sender.lightingTargets = targets
        },
        .serviceName(
            "sender.receiver_name",
            summary: "With sender.host auto: the receiver to stream to, by its published name (empty: the first found)."
        ) { $0.sender.receiverName = $1 },
        .decimal(
            "sender.stats_interval", default: 10, range: 0...86400, unit: "seconds",
            summary: "How often the sender logs frames sent and dropped and reconnects (0: never)."
        ) { $0.sender.statsInterval = $1 },
        .text(
            "receiver.bind", default: "0.0.0.0", allowed: "an IPv4/IPv6 address or host name",
            summary: "Address to listen on: 0.0.0.0 for every IPv4 interface, :: for all."
        ) { $0.receiver.bind = $1 },
        .delay(
            "receiver.delay", default: "0", allowsAuto: false,
            summary:
                "Hold each frame back this many milliseconds before showing it (for a sender that cannot delay itself, e.g. a 2016 app)."
        ) {
            if case .milliseconds(let value) = $1 { $0.receiver.delayMilliseconds = value }
        },
        .integer(
            "receiver.port", default: 8181, range: 0...65535,
            summary: "TCP port to listen on (0: any free port)."
        ) { $0.receiver.port = $1 },
        .serviceName(
            "receiver.name",
            summary:
                "Name published on the local network (DNS-SD _lightorgan._tcp) for senders to find (empty: the host name)."
        ) { $0.receiver.name = $1 },
        .parsed(
            "receiver.sound", default: "network", allowed: SoundChoice.allowed,
            summary:
                "The receiver's own sound, beside senders and pages: network (none), airplay (an AirPlay speaker, needs shairport-sync), bluetooth (a Bluetooth speaker phones pair with in a window, lightorgan pair; needs bluez and bluez-alsa-utils), snapcast or snapcast://HOST[:PORT] (one room of a Snapcast house, needs snapclient), pipe:PATH (raw PCM from a FIFO, e.g. Spotify Connect's librespot), or an ALSA capture device (a USB microphone).",
            parse: SoundChoice.init(parsing:)
        ) { $0.receiver.sound = $1 },
        .parsed(
            "receiver.play", default: "default", allowed: PlayChoice.allowed,
            summary:
                "The ALSA device the receiver plays its AirPlay, Bluetooth, Snapcast or pipe sound on (the lights follow when it is heard), or none.",
            parse: PlayChoice.init(parsing:)
        ) { $0.receiver.play = $1 },
        .integer(
            "receiver.airplay.port", default: 5000, range: 1...65535,
            summary: "With receiver.sound airplay: the TCP port the AirPlay speaker listens on."
        ) { $0.receiver.airplayPort = $1 },
        .choice(
            "receiver.output", default: OutputChoice.terminal,
            summary:
                "terminal: virtual lamps in the terminal; stdout: one line per frame, for scripts; gpio: LEDs on GPIO lines."
        ) { $0.receiver.output = $1 },
        .text(
            "receiver.chip", default: "auto", allowed: "auto, a chip name (gpiochip0), a path or a label",
            summary: "GPIO chip: auto finds the Raspberry Pi's controller (Pi 5 included) by its label."
        ) { $0.receiver.chip = $1 },
        .lineList("receiver.lines.bass", default: [5], band: .bass),
        .lineList("receiver.lines.mid", default: [6], band: .mid),
        .lineList("receiver.lines.treble", default: [13], band: .treble),
        .flag(
            "receiver.active_low", default: false, summary: "Lines are on when low (most relay boards)."
        ) { $0.receiver.activeLow = $1 },
        .decimal(
            "receiver.pwm_frequency", default: 200, range: 50...2000, unit: "Hz",
            summary: "Software PWM frequency for LED brightness."
        ) { $0.receiver.pwmFrequency = $1 },
        .parsed(
            "receiver.lights", default: "on",
            allowed: "on (the lights dance), off (dark while senders and sound go on)",
            summary:
                "on: the lights follow the music; off: every lamp, strip and lighting device dark while senders and sound go on (a switch for the home's hub).",
            parse: { raw in ["on": true, "off": false][raw.lowercased()] }
        ) { $0.receiver.lightsOn = $1 },
        .choice(
            "receiver.mode", default: LineDriver.Mode.pwm,
            summary:
                "pwm: brightness; onoff: on above a threshold (relay boards, classic light organ); bar: a band's lines as a level meter."
        ) { $0.receiver.mode = $1 },
        .integer(
            "receiver.onoff_threshold", default: 128, range: 1...255, summary: "onoff: level that switches a band on."
        ) { $0.receiver.onThreshold = $1 },
        .integer(
            "receiver.onoff_hysteresis", default: 32, range: 0...254,
            summary: "onoff: a band switches off only this many levels below the threshold."
        ) { $0.receiver.hysteresis = $1 },
        .decimal(
            "receiver.onoff_min_interval", default: 0.1, range: 0...10, unit: "seconds",
            summary: "onoff: shortest time between two switches, so relays do not chatter."
        ) { $0.receiver.minimumSwitchInterval = $1 },
        .decimal(
            "receiver.timeout", default: 1, range: 0.05...3600, unit: "seconds",
            summary: "With no frame for this long, every lamp goes off."
        ) { $0.receiver.timeout = $1 },
        .list(
            "receiver.allow", default: "all",
            allowed: "all, or IP addresses and CIDR ranges (192.168.1.0/24, fd00::/8)",
            summary: "Who may connect: all, or addresses and ranges.",
            parse: { $0.lowercased() == "all" ? AddressRange.everything : AddressRange($0) }
        ) { $0.receiver.allow = $1.contains(.everything) ? [] : $1 },
        .integer(
            "receiver.max_connections", default: 8, range: 1...1000,
            summary: "Open connections at most; when full, the longest-idle one (never the active sender) makes room."
        ) { $0.receiver.maxConnections = $1 },
        .decimal(
            "receiver.idle_timeout", default: 10, range: 0.1...86400, unit: "seconds",
            summary: "A connection that sends no complete frame for this long is closed."
        ) { $0.receiver.idleTimeout = $1 },
        .decimal(
            "receiver.stats_interval", default: 10, range: 0...86400, unit: "seconds",
            summary: "How often the receiver logs frames per second, dropped frames and the last frame (0: never)."
        ) { $0.receiver.statsInterval = $1 },
        .targets(
            "receiver.forward", allowsReceivers: false,
            summary:
                "Lighting devices that show the lamps too: sacn://, artnet://, ddp:// targets (fixtures: says how)."
        ) { settings, _, targets in settings.receiver.forwardTargets = targets },
        .integer(
            "receiver.max_brightness", default: 100, range: 1...100,
            summary: "Brightness limit of every lamp, percent of full (1…100)."
        ) { $0.receiver.maxBrightness = $1 },
        .text(
            "receiver.strip.device", default: "",
            allowed:
                "empty (no strip), /dev/spidev0.0 (SPI: every Pi), /dev/leds0 (Pi 5 ws2812-pio), another spidev or leds path, or virtual",
            summary:
                "LED strip (WS2812B/SK6812) wired to this Pi beside the lamps: /dev/spidev0.0 (data on GPIO 10, SPI enabled), /dev/leds0 on a Pi 5 with dtoverlay=ws2812-pio, virtual (only on the page and in the terminal); empty: none.",
            allowsEmpty: true
        ) { $0.receiver.strip.device = $1 },
        .integer(
            "receiver.strip.pixels", default: 60, range: 1...StripSettings.maximumPixels,
            summary: "Pixels (LEDs) of the strip."
        ) { $0.receiver.strip.pixels = $1 },
        .choice(
            "receiver.strip.type", default: StripLED.ws2812b,
            summary: "The strip's chip: ws2812b (also WS2811, NeoPixel), sk6812, sk6812-rgbw."
        ) { $0.receiver.strip.led = $1 },
        SettingKey(
            "receiver.strip.order", default: "auto", allowed: ColorOrder.allowed,
            summary:
                "Order of the colours on the wire: auto (the type's own), or rgb, grb, brg, … when the first pixel of the wiring check is not red."
        ) { settings, raw in
            if raw.lowercased() == "auto" {
                settings.receiver.strip.order = nil
                return nil
            }
            guard let order = ColorOrder(parsing: raw) else { return .notAllowed(ColorOrder.allowed) }
            settings.receiver.strip.order = order
            return nil
        },
        .choice(
            "receiver.strip.effect", default: StripEffect.scroll,
            summary:
                "scroll: each beat's colour moves out from the centre; energy: a bar per band from the centre; flash: the whole strip on each bass beat; segments: a third per band; blend: the whole strip in the bands' mixed colours. Following the beat, strip and lamps alike: bpm_strobe (a flash on each beat), bar_step (a colour step on each bar), beat_pulse (a pulse running with the tempo)."
        ) { $0.receiver.strip.effect = $1 },
        .integer(
            "receiver.strip.brightness", default: 50, range: 1...100,
            summary:
                "Brightness limit of the strip, percent of full (a 5 V supply gives about 60 mA a pixel at full white)."
        ) { $0.receiver.strip.brightness = $1 },
        .decimal(
            "receiver.strip.gamma", default: 2.2, range: 1...4, unit: "(exponent)",
            summary: "Exponent from level to light: 2.2 for LEDs driven linearly."
        ) { $0.receiver.strip.gamma = $1 },
        SettingKey(
            "receiver.strip.palette", default: "red, green, blue", allowed: Palette.allowed,
            summary: "Colours of bass, mid and treble on the strip."
        ) { settings, raw in
            guard let palette = Palette(parsing: raw) else { return .notAllowed(Palette.allowed) }
            settings.receiver.strip.palette = palette
            return nil
        },
        .flag(
            "page.enabled", default: true,
            summary:
                "Serve the receiver's page (HTTPS): live lamps, status, wiring check, settings, a phone as the sound source."
        ) { $0.page.isEnabled = $1 },
        .integer(
            "page.port", default: 8443, range: 0...65535, summary: "HTTPS port of the page (0: any free port)."
        ) { $0.page.port = $1 },
        .text(
            "page.bind", default: "", allowed: "empty (as receiver.bind), an IPv4/IPv6 address or host name",
            summary: "Address the page listens on; empty: the same as receiver.bind.", allowsEmpty: true
        ) { $0.page.bind = $1 },
        .text(
            "page.certificate", default: "",
            allowed: "empty (a self-signed certificate made on first start), or a PEM file",
            summary: "TLS certificate chain of the page; with page.key. Empty: the receiver makes its own.",
            allowsEmpty: true
        ) { $0.page.certificate = $1 },
        .text(
            "page.key", default: "", allowed: "empty, or the PEM private key of page.certificate",
            summary: "Private key of page.certificate.", allowsEmpty: true
        ) { $0.page.key = $1 },
        .parsed(
            "mqtt.broker", default: "", allowed: MQTTBroker.allowed,
            summary:
                "The MQTT broker of the home's hub (Home Assistant's Mosquitto add-on): the receiver shows there as a light with its sound source, palette, levels and wiring check. Empty: no MQTT.",
            parse: MQTTBroker.init(parsing:)
        ) { $0.mqtt.broker = $1 },
        .text(
            "mqtt.username", default: "", allowed: "empty, or a user name without spaces",
            summary: "User name at the broker (empty: none).", allowsEmpty: true
        ) { $0.mqtt.username = $1 },
        .absolutePath(
            "mqtt.password_file", allowed: "empty, or the absolute path of a file holding the password",
            summary:
                "A file whose first line is the broker's password (readable by the receiver alone; the password is never written in this file)."
        ) { $0.mqtt.passwordFile = $1 },
        .absolutePath(
            "mqtt.ca_file", allowed: "empty (the system's certificates), or the absolute path of a PEM file",
            summary: "With mqtts://: the certificates to trust for the broker (empty: the system's)."
        ) { $0.mqtt.caFile = $1 },
        SettingKey(
            "mqtt.topic", default: "", allowed: MQTTTopic.allowed,
            summary: "The receiver's own topics start with this (empty: lightorgan/ and the receiver's name)."
        ) { settings, raw in
            guard raw.isEmpty || MQTTTopic.isPrefix(raw) else { return .notAllowed(MQTTTopic.allowed) }
            settings.mqtt.topic = raw
            return nil
        },
        SettingKey(
            "mqtt.discovery_prefix", default: "homeassistant", allowed: MQTTTopic.allowedLevels,
            summary: "Home Assistant's discovery prefix (its MQTT integration's setting; homeassistant by default)."
        ) { settings, raw in
            guard MQTTTopic.isPrefix(raw) else { return .notAllowed(MQTTTopic.allowedLevels) }
            settings.mqtt.discoveryPrefix = raw
            return nil
        },
        .decimal(
            "lighting.release_after", default: 5, range: 0.1...3600, unit: "seconds",
            summary:
                "After this long with every lamp dark, lighting devices are let go (sACN streams terminated, WLED back to its own effects) until a lamp lights again."
        ) { $0.lighting.releaseAfter = $1 },
        SettingKey(
            "lighting.interface", default: "",
            allowed:
                "empty (the link of the default route), or a network interface's name: eth0, wlan0 (`ip link` lists them)",
            summary:
                "The link sACN multicast, Art-Net broadcast and ArtPoll leave by, for targets without ?interface= (a laptop on Wi-Fi and a wired DMX network: the wired one)."
        ) { settings, raw in
            guard raw.isEmpty || LightingTarget.isInterfaceName(raw) else {
                return .notAllowed(
                    "empty, or 1…\(LightingTarget.longestInterfaceName) characters without /, : or spaces (eth0, wlan0; `ip link` lists them)"
                )
            }
            settings.lighting.interface = raw
            return nil
        },
        .decimal(
            "analysis.crossover_low", default: 250, range: 40...1000, unit: "Hz",
            summary: "Bass/mid crossover."
        ) { $0.analysis.bassMidCrossover = $1 },
        .decimal(
            "analysis.crossover_high", default: 4000, range: 1000...8000, unit: "Hz",
            summary: "Mid/treble crossover (at least an octave above the low one)."
        ) { $0.analysis.midTrebleCrossover = $1 },
        .decimal(
            "analysis.attack", default: 1, range: 0.1...50, unit: "ms",
            summary: "Envelope attack: how fast a lamp follows a rising sound."
        ) { $0.analysis.attack = $1 / 1000 },
        .decimal(
            "analysis.release", default: 60, range: 10...2000, unit: "ms",
            summary: "Envelope release: how fast a lamp follows a falling sound."
        ) { $0.analysis.release = $1 / 1000 },
        .choice(
            "analysis.response", default: AnalysisParameters.Response.dance,
            summary:
                "dance: each lamp flashes on the beats of its band and is dark between them; level: each lamp follows its band's loudness (calmer, for receiver.mode bar)."
        ) { $0.analysis.response = $1 },
        .decimal(
            "analysis.dark_below", default: DanceParameters().darkAt, range: 0...5, unit: "deviations",
            summary:
                "dance: a lamp stays dark until its band is this many deviations above its running mean (higher: fewer, surer flashes)."
        ) { $0.analysis.dance.darkAt = $1 },
        .decimal(
            "analysis.full_at", default: DanceParameters().fullAt, range: 0.5...10, unit: "deviations",
            summary:
                "dance: a lamp is fully on this many deviations above its band's running mean (more than analysis.dark_below)."
        ) { $0.analysis.dance.fullAt = $1 },
        .decimal(
            "analysis.fade", default: (DanceParameters().fade * 1000).rounded(), range: 10...2000, unit: "ms",
            summary: "dance: time constant of a lamp's fade after a flash."
        ) { $0.analysis.dance.fade = $1 / 1000 },
        .decimal(
            "analysis.onset_emphasis", default: DanceParameters().onsetWeight, range: 0...8, unit: "× the rise",
            summary: "dance: how much a sudden rise of a band counts beyond its loudness (0: loudness only)."
        ) { $0.analysis.dance.onsetWeight = $1 },
        .decimal(
            "analysis.min_deviation", default: DanceParameters().minimumDeviation, range: 0.5...20, unit: "dB",
            summary: "dance: the smallest deviation a band is judged by; higher keeps steady noise darker."
        ) { $0.analysis.dance.minimumDeviation = $1 },
        .choice(
            "analysis.idle", default: IdleLook.dark,
            summary:
                "What the lights show after analysis.idle_after seconds of silence or of sound without a beat: dark (the levels as they are), breathe (a slow breathing glow), drift (a glow drifting through the bands' colours); the first beat or a strong onset brings the dance back."
        ) { $0.analysis.idle = $1 },
        .decimal(
            "analysis.idle_after", default: 10, range: 1...3600, unit: "seconds",
            summary: "Seconds of silence, or of sound without a beat, before the analysis.idle look."
        ) { $0.analysis.idleAfter = $1 },
    ]

    /// The key called `name`, if there is one.
    public static func key(named name: String) -> SettingKey? {
        keys.first { $0.name == name }
    }

    /// Builds settings from raw values: every key not in `values` keeps its default.
    ///
    /// - Throws: ``SettingsError`` for the first value that is not allowed, naming its source,
    ///   the key, the value and what is allowed.
    public static func resolve(_ values: [String: RawSetting]) throws(SettingsError) -> Settings {
        var settings = Settings()
        for key in keys {
            guard let raw = values[key.name] else { continue }
            if let problem = key.apply(raw.value, to: &settings) {
                throw SettingsError.badValue(key: key.name, raw: raw, problem: problem.text)
            }
        }
        // Rules across keys.
        let analysis = settings.analysis
        if analysis.midTrebleCrossover < 2 * analysis.bassMidCrossover {
            let raw =
                values["analysis.crossover_high"] ?? values["analysis.crossover_low"]
                ?? RawSetting(analysis.midTrebleCrossover.compact, from: .builtInDefault)
            let key = values["analysis.crossover_high"] != nil ? "analysis.crossover_high" : "analysis.crossover_low"
            throw SettingsError.badValue(
                key: key, raw: raw,
                problem:
                    "leaves less than an octave between the crossovers (\(analysis.bassMidCrossover.compact) Hz and "
                    + "\(analysis.midTrebleCrossover.compact) Hz); the high one must be at least twice the low one")
        }
        if analysis.dance.fullAt <= analysis.dance.darkAt {
            // Name the one the user set (the other may be a default).
            let fullAtSet = values["analysis.full_at"].map { $0.source != .builtInDefault } ?? false
            let key = fullAtSet ? "analysis.full_at" : "analysis.dark_below"
            let raw = values[key] ?? RawSetting(analysis.dance.darkAt.compact, from: .builtInDefault)
            throw SettingsError.badValue(
                key: key, raw: raw,
                problem:
                    "leaves no room between dark (\(analysis.dance.darkAt.compact)) and full (\(analysis.dance.fullAt.compact)); "
                    + "analysis.full_at must be above analysis.dark_below")
        }
        // lighting.interface: the link of every target that leaves by broadcast or multicast.
        if !settings.lighting.interface.isEmpty {
            for index in settings.sender.lightingTargets.indices {
                settings.sender.lightingTargets[index].defaultInterface(settings.lighting.interface)
            }
            for index in settings.receiver.forwardTargets.indices {
                settings.receiver.forwardTargets[index].defaultInterface(settings.lighting.interface)
            }
        }
        let strip = settings.receiver.strip
        if let order = strip.order, order.channels.count != strip.led.channels {
            throw SettingsError.badValue(
                key: "receiver.strip.order", raw: values["receiver.strip.order"]!,
                problem: "has \(order.channels.count) colours but a \(strip.led) pixel takes \(strip.led.channels); "
                    + (strip.led.channels == 4
                        ? "add w (grbw)" : "leave out w, or set receiver.strip.type: sk6812-rgbw"))
        }
        try placeFixtures(values, in: &settings)
        return settings
    }

    /// Builds the fixtures under `fixtures:` and places them, or the one each target implies, on
    /// every lighting target of both sides.
    private static func placeFixtures(_ values: [String: RawSetting], in settings: inout Settings) throws(SettingsError)
    {
        // The fixtures of the file, by name, in the order of their first setting's key.
        var named: [String: [String: (key: String, raw: RawSetting)]] = [:]
        for (key, raw) in values {
            guard let (fixture, field) = FixtureSettings.split(key) else { continue }
            named[fixture, default: [:]][field] = (key, raw)
        }
        var fixtures: [(fixture: Fixture, fields: [String: (key: String, raw: RawSetting)])] = []
        for name in named.keys.sorted() {
            let fields = named[name]!
            guard let target = fields["target"] else {
                let (key, raw) = fields.values.sorted { $0.key < $1.key }.first!
                throw SettingsError.badValue(
                    key: key, raw: raw,
                    problem:
                        "belongs to fixtures.\(name), which has no target; add fixtures.\(name).target: sacn://…, artnet://… or ddp://…"
                )
            }
            let device: LightingTarget
            do throws(SettingProblemText) {
                device = try LightingTarget(parsing: target.raw.value.trimmingWhitespace())
            } catch {
                throw SettingsError.badValue(
                    key: target.key, raw: target.raw, problem: "is not a lighting target: \(error.text)")
            }
            if !device.fixtureFields.isEmpty {
                throw SettingsError.badValue(
                    key: target.key, raw: target.raw,
                    problem:
                        "has fixture settings after ?; write them as fixtures.\(name).universe, .address, … instead")
            }
            var fixture = FixtureSettings.defaultFixture(named: name, on: device)
            for field in fields.keys.sorted() where field != "target" {
                let (key, raw) = fields[field]!
                if let problem = FixtureSettings.apply(field: field, raw: raw.value, to: &fixture) {
                    throw SettingsError.badValue(key: key, raw: raw, problem: problem.text)
                }
            }
            for field in fields.keys.sorted() {
                if let problem = FixtureSettings.inapplicable(field, to: fixture, on: device.kind) {
                    let (key, raw) = fields[field]!
                    throw SettingsError.badValue(key: key, raw: raw, problem: problem.text)
                }
            }
            fixtures.append((fixture, fields))
        }
        let sides: [(key: String, targets: [LightingTarget])] = [
            ("sender.hosts", settings.sender.lightingTargets), ("receiver.forward", settings.receiver.forwardTargets),
        ]
        var patches: [[LightingPatch]] = []
        for (listKey, targets) in sides {
            let listRaw = values[listKey] ?? RawSetting("", from: .builtInDefault)
            var placed: [LightingPatch] = []
            for target in targets {
                var own = fixtures.filter { $0.fixture.target == target.address }
                if own.isEmpty {
                    // The one fixture the target implies, from the settings after `?`.
                    var fixture = FixtureSettings.defaultFixture(named: target.address, on: target)
                    for field in target.fixtureFields.keys.sorted() {
                        if let problem = FixtureSettings.apply(
                            field: field, raw: target.fixtureFields[field]!, to: &fixture)
                        {
                            throw SettingsError.badValue(
                                key: listKey, raw: listRaw,
                                problem:
                                    "has \(target.address) with \(field)=\(target.fixtureFields[field]!), which \(problem.text)"
                            )
                        }
                    }
                    for field in target.fixtureFields.keys.sorted() {
                        if let problem = FixtureSettings.inapplicable(field, to: fixture, on: target.kind) {
                            throw SettingsError.badValue(
                                key: listKey, raw: listRaw,
                                problem:
                                    "has \(target.address) with \(field)=\(target.fixtureFields[field]!), which \(problem.text)"
                            )
                        }
                    }
                    own = [(fixture, [:])]
                } else if !target.fixtureFields.isEmpty {
                    throw SettingsError.badValue(
                        key: listKey, raw: listRaw,
                        problem:
                            "sets fixture settings after ? for \(target.address), which fixtures.\(own[0].fixture.name) lays out already; keep one of the two"
                    )
                }
                do throws(LightingPatch.Problem) {
                    placed.append(try LightingPatch(target: target, fixtures: own.map(\.fixture)))
                } catch {
                    let culprit = own.first { $0.fixture.name == error.fixture }
                    if let culprit,
                        let field = culprit.fields[error.field] ?? culprit.fields["address"] ?? culprit.fields["target"]
                    {
                        let key = "fixtures.\(error.fixture).\(error.field)"
                        let raw =
                            culprit.fields[error.field]?.raw
                            ?? RawSetting(Self.shown(error.field, of: culprit.fixture), from: field.raw.source)
                        throw SettingsError.badValue(key: key, raw: raw, problem: error.text)
                    }
                    throw SettingsError.badValue(
                        key: listKey, raw: listRaw,
                        problem:
                            "has \(target.address) whose \(error.field) \(Self.shown(error.field, of: own[0].fixture)) \(error.text)"
                    )
                }
            }
            patches.append(placed)
        }
        settings.sender.lighting = patches[0]
        settings.receiver.forward = patches[1]
        let used = Set((patches[0] + patches[1]).map(\.target.address))
        for (fixture, fields) in fixtures where !used.contains(fixture.target) {
            let listed = (patches[0] + patches[1]).map(\.target.address)
            let (key, raw) = fields["target"]!
            throw SettingsError.badValue(
                key: key, raw: raw,
                problem: "is in neither sender.hosts nor receiver.forward, so nothing would drive the fixture; "
                    + (listed.isEmpty
                        ? "add it to one of them"
                        : "allowed: one of \(listed.joined(separator: ", ")), or add it to a list"))
        }
    }

    /// A fixture field's value as a person would write it, for a message.
    private static func shown(_ field: String, of fixture: Fixture) -> String {
        switch field {
        case "universe": "\(fixture.universe)"
        case "pixels": "\(fixture.pixels)"
        default: "\(fixture.address)"
        }
    }

    /// The known key closest to `name`, if one is close enough to be a likely typo.
    public static func closestKey(to name: String) -> String? {
        closest(to: name.lowercased(), among: keys.map(\.name))
    }

    /// The environment variable of a known key closest to `variable`, if one is close enough.
    public static func closestEnvironmentVariable(to variable: String) -> String? {
        closest(to: variable.uppercased(), among: keys.map(\.environmentVariable))
    }

    private static func closest(to name: String, among candidates: [String]) -> String? {
        let scored = candidates.map { ($0, EditDistance.between($0, name)) }
        guard let best = scored.min(by: { $0.1 < $1.1 }) else { return nil }
        // A typo changes a few characters; beyond a third of the name it is another word.
        return best.1 <= max(2, best.0.count / 3) ? best.0 : nil
    }
}

/// A value as written by the user, with where it came from.
public struct RawSetting: Sendable, Equatable {
    /// The value as text (numbers too: they are parsed by the catalog).
    public var value: String
    /// Where it was set.
    public var source: SettingSource

    public init(_ value: String, from source: SettingSource) {
        self.value = value
        self.source = source
    }
}

/// Where a setting came from, for messages.
public enum SettingSource: Sendable, Equatable, CustomStringConvertible {
    /// A command-line option, e.g. `--port`.
    case option(String)
    /// An environment variable, e.g. `LIGHTORGAN_SENDER_PORT`.
    case environment(String)
    /// A settings file, by its path as shown to the user.
    case file(String)
    /// The file the receiver's page writes (``StateDirectory/pageSettingsFile(environment:)``).
    case page(String)
    /// The built-in default.
    case builtInDefault

    public var description: String {
        switch self {
        case .option(let name): "option \(name)"
        case .environment(let name): "environment \(name)"
        case .file(let path): path
        case .page(let path): "\(path) (set on the page)"
        case .builtInDefault: "built-in default"
        }
    }
}
