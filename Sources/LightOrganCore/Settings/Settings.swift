/// Everything `lightorgan send` and `lightorgan receive` can be told, validated.
///
/// Built by ``SettingsCatalog/resolve(_:)`` from raw strings, whichever source they came from
/// (flag, environment, settings file, built-in default).
public struct Settings: Sendable, Equatable {
    public var sender = SenderSettings()
    public var receiver = ReceiverSettings()

    /// The built-in defaults.
    public init() {}
}

/// Settings of the sender (the laptop side).
public struct SenderSettings: Sendable, Equatable {
    /// Host name or address of the receiver.
    public var host = "127.0.0.1"
    /// TCP port of the receiver, 1…65535.
    public var port = 8181
    /// Frames sent per second, 10…250.
    public var framesPerSecond = 100
    /// Where the audio comes from.
    public var input = AudioInputChoice.demo

    public init() {}
}

/// Where the sender's audio comes from.
public enum AudioInputChoice: Sendable, Equatable, CustomStringConvertible {
    /// The built-in synthesised groove (``DemoGroove``): needs no sound card.
    case demo
    /// A WAV file, played in real time.
    case wavFile(path: String)

    public var description: String {
        switch self {
        case .demo: "demo"
        case .wavFile(let path): path
        }
    }
}

/// Settings of the receiver (the Raspberry Pi side).
public struct ReceiverSettings: Sendable, Equatable {
    /// Address to listen on: `0.0.0.0` for every IPv4 interface, `::` for every interface.
    public var bind = "0.0.0.0"
    /// TCP port to listen on, 0…65535 (0: the kernel picks a free one).
    public var port = 8181
    /// Where the levels go.
    public var output = OutputChoice.terminal
    /// With no frame for this long, seconds, every lamp goes off. 0.05…3600.
    public var timeout = 1.0

    public init() {}
}

/// Where the receiver shows the levels.
public enum OutputChoice: String, Sendable, Equatable, CaseIterable, CustomStringConvertible {
    /// Three virtual lamps with level bars, redrawn in place in the terminal.
    case terminal
    /// One line per applied frame: `<CLOCK_MONOTONIC seconds> <bass> <mid> <treble>`.
    case stdout

    public var description: String { rawValue }
}
