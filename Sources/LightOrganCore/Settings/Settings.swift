/// Everything `lightorgan send` and `lightorgan receive` can be told, validated.
///
/// Built by ``SettingsCatalog/resolve(_:)`` from raw strings, whichever source they came from
/// (flag, environment, settings file, built-in default).
public struct Settings: Sendable, Equatable {
    public var sender = SenderSettings()
    public var receiver = ReceiverSettings()
    /// How the sender (and `analyze`) turns audio into levels.
    public var analysis = AnalysisParameters.standard
    /// What lighting targets (sACN, Art-Net, DDP) share on both sides.
    public var lighting = LightingSettings()
    /// The receiver's page (HTTPS).
    public var page = PageSettings()
    /// The receiver's link to a home's hub over MQTT (Home Assistant).
    public var mqtt = MQTTSettings()
    /// Things worth a line in the log that are not errors (a fixture whose target no list names).
    public var warnings: [String] = []

    /// The built-in defaults.
    public init() {}
}

/// Settings of the sender (the laptop side).
public struct SenderSettings: Sendable, Equatable {
    /// Host name or address of the receiver, or `auto`: find it on the local network (DNS-SD).
    public var host = "auto"
    /// With `host` auto: the published name of the receiver to stream to; empty: the first found.
    public var receiverName = ""
    /// TCP port of the receiver, 1…65535.
    public var port = 8181
    /// Several receivers at once (`sender.hosts`, the entries without a scheme); empty (and no
    /// lighting target) means `host` and `port` alone. A host `auto` is found by DNS-SD.
    public var hosts: [Endpoint] = []
    /// Lighting devices driven directly (`sender.hosts` entries with a scheme: `sacn://…`), each
    /// with its fixtures placed; filled by ``SettingsCatalog/resolve(_:)``.
    public var lighting: [LightingPatch] = []
    /// The lighting targets as parsed, before their fixtures are placed.
    var lightingTargets: [LightingTarget] = []
    /// Seconds between two statistics lines in the log; 0: none.
    public var statsInterval = 10.0
    /// Frames sent per second, 10…250.
    public var framesPerSecond = 100
    /// Where the audio comes from.
    public var input = AudioInputChoice.auto
    /// How long frames are held back so the lamps change with the speaker, not the capture.
    public var delay = LightDelay.auto
    /// Raw PCM on stdin: sample rate, Hz (8000…192000).
    public var rawRate = 44_100
    /// Raw PCM on stdin: interleaved channels (1…8).
    public var rawChannels = 2
    /// Raw PCM on stdin: sample layout.
    public var rawFormat = SampleFormat.s16le

    public init() {}

    /// Whether `sender.hosts` lists nothing at all (then `host` and `port` name the receiver).
    private var usesHostAlone: Bool { hosts.isEmpty && lightingTargets.isEmpty }

    /// Whether a receiver is found by DNS-SD: `host` is `auto` and `hosts` is empty, or `hosts`
    /// has an entry `auto`.
    public var discoversReceiver: Bool {
        usesHostAlone ? host.lowercased() == "auto" : hosts.contains { $0.host.lowercased() == "auto" }
    }

    /// The receivers at fixed addresses: `hosts` but `auto`, each with `port` unless it names
    /// its own, or `host`:`port` when `hosts` is empty and not `auto`.
    public var receivers: [Endpoint] {
        if usesHostAlone {
            return discoversReceiver ? [] : [Endpoint(host: host, port: port)]
        }
        return hosts.filter { $0.host.lowercased() != "auto" }.map { Endpoint(host: $0.host, port: $0.port ?? port) }
    }
}

/// Where the sender's audio comes from.
///
/// Written in settings as: `auto`; `demo`; `monitor`; `-` (stdin); a path ending in `.wav` or containing
/// `/` (a WAV file); anything else is an ALSA PCM name (`default`, `hw:1,0`, `plughw:…`, `pulse`).
public enum AudioInputChoice: Sendable, Equatable, CustomStringConvertible {
    /// What this machine plays (``monitor``) when a PipeWire/PulseAudio server answers; otherwise
    /// an error that names the other inputs.
    case auto
    /// The built-in synthesised groove (``DemoGroove``): needs no sound card.
    case demo
    /// A WAV file, played in real time.
    case wavFile(path: String)
    /// What this machine plays: the monitor of the PipeWire/PulseAudio default output.
    case monitor
    /// Raw PCM on standard input, laid out as `sender.rate`, `sender.channels`, `sender.format` say.
    case standardInput
    /// An ALSA capture PCM by name.
    case alsa(name: String)

    /// Reads the setting's text.
    public init(parsing text: String) {
        switch text.lowercased() {
        case "auto": self = .auto
        case "demo": self = .demo
        case "monitor": self = .monitor
        case "-": self = .standardInput
        default:
            self = text.lowercased().hasSuffix(".wav") || text.contains("/") ? .wavFile(path: text) : .alsa(name: text)
        }
    }

    public var description: String {
        switch self {
        case .auto: "auto"
        case .demo: "demo"
        case .wavFile(let path): path
        case .monitor: "monitor"
        case .standardInput: "- (stdin)"
        case .alsa(let name): "ALSA \(name)"
        }
    }
}

/// Settings of the receiver (the Raspberry Pi side).
public struct ReceiverSettings: Sendable, Equatable {
    /// Address to listen on: `0.0.0.0` for every IPv4 interface, `::` for every interface.
    public var bind = "0.0.0.0"
    /// TCP port to listen on, 0…65535 (0: the kernel picks a free one; that one is published).
    public var port = 8181
    /// The DNS-SD instance name to publish; empty: the host name.
    public var name = ""
    /// Where the levels go.
    public var output = OutputChoice.terminal
    /// How long each frame is held back before it is shown, milliseconds (0: none), for a sender
    /// that cannot delay (a 2016 client) feeding a speaker with latency.
    public var delayMilliseconds = 0
    /// With no frame for this long, seconds, every lamp goes off. 0.05…3600.
    public var timeout = 1.0
    /// GPIO chip for `output: gpio`: `auto` (the Raspberry Pi's controller, found by label), a name,
    /// a path or a label.
    public var chip = "auto"
    /// BCM line offsets per band for `output: gpio` (the 2016 LightOrgan wiring by default).
    public var lines: [Band: [Int]] = [.bass: [5], .mid: [6], .treble: [13]]
    /// Lines are on when low (most relay boards).
    public var activeLow = false
    /// Software PWM frequency, Hz.
    public var pwmFrequency = 200.0
    /// How levels drive the lines: brightness, on/off, or a level meter.
    public var mode = LineDriver.Mode.pwm
    /// Whether the lights dance (`receiver.lights: on`); off: every lamp, strip and lighting target dark
    /// while senders and sound go on (Home Assistant's light switch).
    public var lightsOn = true
    /// Brightness limit of every lamp, percent of full, 1…100.
    public var maxBrightness = 100
    /// `onoff`: level (0…255) that switches a band on.
    public var onThreshold = 128
    /// `onoff`: how far below the threshold a band switches off again, in levels.
    public var hysteresis = 32
    /// `onoff`: shortest time between two switches of a band, seconds.
    public var minimumSwitchInterval = 0.1
    /// The LED strip wired to the receiver, beside its lamps (none by default).
    public var strip = StripSettings()
    /// Peers allowed to connect; empty: everyone.
    public var allow: [AddressRange] = []
    /// Open connections at most, 1…1000.
    public var maxConnections = 8
    /// A connection that sends no complete frame for this long is closed, seconds.
    public var idleTimeout = 10.0
    /// Seconds between two statistics lines in the log; 0: none.
    public var statsInterval = 10.0
    /// Lighting devices the lamps' levels are passed on to (`receiver.forward`), each with its
    /// fixtures placed; filled by ``SettingsCatalog/resolve(_:)``.
    public var forward: [LightingPatch] = []
    /// The targets of `receiver.forward` as parsed, before their fixtures are placed.
    var forwardTargets: [LightingTarget] = []
    /// The receiver's own sound, beside network senders and pages (`receiver.sound`).
    public var sound = SoundChoice.network
    /// Where the receiver plays its own AirPlay or pipe sound (`receiver.play`).
    public var play = PlayChoice.device("default")
    /// The TCP port the AirPlay speaker listens on (`receiver.airplay.port`), 1…65535.
    public var airplayPort = 5000

    public init() {}

    /// The connection rules these settings put in force.
    public var rules: ReceiverRules {
        var rules = ReceiverRules()
        rules.lampTimeout = .milliseconds(Int64((timeout * 1000).rounded()))
        rules.idleTimeout = .milliseconds(Int64((idleTimeout * 1000).rounded()))
        rules.maxConnections = maxConnections
        rules.allow = allow
        return rules
    }
}

/// Where the receiver shows the levels.
public enum OutputChoice: String, Sendable, Equatable, CaseIterable, CustomStringConvertible {
    /// Three virtual lamps with level bars, redrawn in place in the terminal.
    case terminal
    /// One line per applied frame: `<CLOCK_MONOTONIC seconds> <bass> <mid> <treble>`.
    case stdout
    /// LEDs on GPIO lines through libgpiod, with brightness by PWM.
    case gpio

    public var description: String { rawValue }
}

/// Settings of the lighting targets, on both sides.
public struct LightingSettings: Sendable, Equatable {
    /// After this long with every lamp dark, seconds, lighting targets are let go: sACN streams
    /// terminated, nothing more sent (WLED returns to its own effects), until a lamp lights again.
    public var releaseAfter = 5.0
    /// The network interface broadcast, multicast and ArtPoll leave by where a target names none
    /// (`lighting.interface`); empty: the default route's.
    public var interface = ""

    public init() {}
}

/// Settings of the receiver's page (`page.*`).
public struct PageSettings: Sendable, Equatable {
    /// Whether `lightorgan receive` serves the page.
    public var isEnabled = true
    /// HTTPS port, 0…65535 (0: any free port).
    public var port = 8443
    /// Address to listen on; empty: `receiver.bind`.
    public var bind = ""
    /// PEM certificate chain; empty: self-signed, made on first start.
    public var certificate = ""
    /// PEM private key of ``certificate``.
    public var key = ""

    public init() {}

    /// The settings a page may change while the receiver runs, in the order it shows them.
    public static let tunableKeys = [
        "receiver.lights", "receiver.mode", "receiver.max_brightness", "receiver.delay", "receiver.timeout",
        "receiver.strip.effect", "receiver.strip.brightness", "receiver.strip.palette", "receiver.sound",
        "receiver.play", "analysis.idle", "analysis.idle_after",
    ]
}
