/// Holds the sender's frames back so the lamps change when the sound leaves the speaker
/// (`sender.delay`): a ``FrameDelayLine`` whose length follows the ``LightDelay`` setting and,
/// with `auto`, the monitored output's latency.
///
/// Each frame in brings one frame out (see ``FrameDelayLine``): the delay never makes frames pile
/// up. A live source uses only the delay it computes (``delayMilliseconds``), timing each frame by
/// its audio (``FrameTimeline``). With `auto` a new latency reading is taken up when it names
/// another output or differs by at least ``hysteresisMicroseconds`` from the one in use, so the
/// jitter of a sink's buffer does not move the lights back and forth.
public struct SpeakerSync: Sendable {
    /// The setting being followed.
    public let setting: LightDelay
    /// Frames per second of the stream being delayed.
    public let framesPerSecond: Int
    /// The latency in use (with `auto`), nil before the first reading.
    public private(set) var latencyInUse: OutputLatency?
    private var line: FrameDelayLine

    /// Readings closer than this to the latency in use, microseconds, are ignored.
    public static let hysteresisMicroseconds = 15_000

    public init(setting: LightDelay, framesPerSecond: Int) {
        self.setting = setting
        self.framesPerSecond = framesPerSecond
        line = FrameDelayLine(framesPerSecond: framesPerSecond)
        if case .milliseconds(let value) = setting {
            line.setDelay(FrameDelayLine.frames(forMilliseconds: value, framesPerSecond: framesPerSecond))
        }
    }

    /// The delay in use, milliseconds (a whole number of frame periods).
    public var delayMilliseconds: Int { line.delay * 1000 / framesPerSecond }

    /// Takes up `latency` (the output's latest reading; nil: unknown). Returns a line for the log
    /// when the delay changed, e.g. `output latency 182 ms (bluez_output…): lights delayed 170 ms`.
    public mutating func follow(_ latency: OutputLatency?) -> String? {
        guard setting == .auto, let latency, latency != latencyInUse else { return nil }
        if let inUse = latencyInUse, inUse.output == latency.output, let old = inUse.microseconds,
            let new = latency.microseconds, abs(old - new) < Self.hysteresisMicroseconds
        {
            return nil
        }
        latencyInUse = latency
        guard let microseconds = latency.microseconds else {
            line.setDelay(0)
            return
                "output \(latency.output) is virtual, its speaker's latency unknown: lights not delayed (set sender.delay to delay them)"
        }
        let milliseconds = LightDelay.milliseconds(forSinkLatency: microseconds)
        line.setDelay(FrameDelayLine.frames(forMilliseconds: milliseconds, framesPerSecond: framesPerSecond))
        return
            "output latency \((microseconds + 500) / 1000) ms (\(latency.output)): lights delayed \(delayMilliseconds) ms"
    }

    /// Puts `frame` in and returns the frame to send now.
    public mutating func pass(_ frame: LevelFrame) -> LevelFrame {
        line.pass(frame)
    }
}
