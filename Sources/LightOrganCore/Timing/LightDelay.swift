/// How long the lights are held back so that they change when the sound leaves the speaker
/// (`sender.delay`, `receiver.delay`).
///
/// A listener hears the speaker, not the capture: a PipeWire/PulseAudio sink plays what its monitor
/// shows only after its own output latency (tens of milliseconds for a sound card, 100–300 ms for
/// Bluetooth). Lamps driven straight from the monitor would flash that much *before* the sound.
public enum LightDelay: Sendable, Equatable, CustomStringConvertible {
    /// The playing sink's output latency, as the sound server reports it, less the chain's own
    /// latency (``chainLatencyMilliseconds``); followed as it changes. Only the monitor input has a
    /// sink to ask: for every other input it is no delay.
    case auto
    /// A fixed delay, milliseconds (0: none).
    case milliseconds(Int)

    /// The longest delay allowed, milliseconds.
    public static let maximumMilliseconds = 2_000

    /// Milliseconds from a sample reaching the sender's capture to its lamp changing, when nothing
    /// is held back: capture block, analysis frame, TCP on a LAN, the receiver's PWM period (about
    /// 10 ms p95 measured with `scripts/bench-link`). Subtracted from the sink's latency.
    public static let chainLatencyMilliseconds = 10

    /// Reads the setting's text: `auto` or whole milliseconds 0…``maximumMilliseconds``; nil otherwise.
    public init?(parsing text: String) {
        if text.lowercased() == "auto" {
            self = .auto
        } else if let value = Int(text.lowercased().hasSuffix("ms") ? String(text.dropLast(2)) : text),
            (0...Self.maximumMilliseconds).contains(value)
        {
            self = .milliseconds(value)
        } else {
            return nil
        }
    }

    public var description: String {
        switch self {
        case .auto: "auto"
        case .milliseconds(let value): "\(value) ms"
        }
    }

    /// The longest blocks, milliseconds, to ask a monitor for when the lights are delayed by this
    /// setting, with `latency` the monitored output's (nil: not yet measured).
    ///
    /// A recorder asking for short blocks makes the sound server wake up as often for the whole
    /// output (measured here: PulseAudio at 1.0–2.2 % of a core for a 10 ms monitor, 0.3 % with a
    /// player alone). Frames are sent at the pace their audio was made (``FrameTimeline``), so a
    /// block up to 20 ms longer than the delay (plus a frame) costs at most 10 ms of lateness on its
    /// first frame: `auto` asks for ``longestMonitorBlockMilliseconds`` and comes down to 10 ms
    /// once the output proves virtual (no delay) or faster than 30 ms; a fixed delay asks for what
    /// it covers; `0` for 10 ms, sent as they come.
    public func monitorBlockMilliseconds(latency: OutputLatency?) -> Int {
        switch self {
        case .auto:
            guard let latency else { return Self.longestMonitorBlockMilliseconds }
            guard let microseconds = latency.microseconds,
                Self.milliseconds(forSinkLatency: microseconds) >= 20
            else { return 10 }
            return Self.longestMonitorBlockMilliseconds
        case .milliseconds(let value):
            return value == 0 ? 10 : min(Self.longestMonitorBlockMilliseconds, (value + 20) / 10 * 10)
        }
    }

    /// The longest block a monitor is asked for, milliseconds.
    public static let longestMonitorBlockMilliseconds = 40

    /// The delay, milliseconds, that puts the lamps in time with a sink whose output latency is
    /// `sinkLatency` microseconds: that latency less the chain's own, never below 0 nor above
    /// ``maximumMilliseconds``.
    public static func milliseconds(forSinkLatency sinkLatency: Int) -> Int {
        min(maximumMilliseconds, max(0, (sinkLatency + 500) / 1000 - chainLatencyMilliseconds))
    }
}
