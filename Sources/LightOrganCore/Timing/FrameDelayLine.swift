/// Holds frames back by a whole number of frame periods: each frame put in brings out the one put
/// in `delay` frames earlier.
///
/// One frame in, one frame out, so a delay never adds frames, wake-ups or a queue to drain: the
/// sender still sends one frame per period and the newest still wins on the wire. Until `delay`
/// frames have gone in, what comes out is ``LevelFrame/off`` (the lamps start dark). Changing the
/// delay moves the read position in the kept history: longer repeats recent frames, shorter skips
/// ahead; both settle at once.
///
/// Invariant: `0 ≤ delay ≤ capacity`; memory is `capacity + 1` frames, fixed at creation.
public struct FrameDelayLine: Sendable {
    /// The longest delay this line can hold, frames.
    public let capacity: Int
    /// The current delay, frames (0: a frame comes out as it goes in).
    public private(set) var delay: Int
    private var history: [LevelFrame]
    private var written = 0

    /// A line holding at most `capacity` frames (≥ 0), starting with `delay` frames.
    public init(capacity: Int, delay: Int = 0) {
        self.capacity = max(0, capacity)
        self.delay = min(max(0, delay), self.capacity)
        history = Array(repeating: .off, count: self.capacity + 1)
    }

    /// A line for delays up to `maximumMilliseconds` at `framesPerSecond`.
    public init(framesPerSecond: Int, maximumMilliseconds: Int = LightDelay.maximumMilliseconds) {
        self.init(capacity: Self.frames(forMilliseconds: maximumMilliseconds, framesPerSecond: framesPerSecond))
    }

    /// Sets the delay, frames, clamped to `0…capacity`.
    public mutating func setDelay(_ frames: Int) {
        delay = min(max(0, frames), capacity)
    }

    /// Puts `frame` in and returns the frame put in `delay` frames earlier (off before there was one).
    public mutating func pass(_ frame: LevelFrame) -> LevelFrame {
        history[written % history.count] = frame
        written += 1
        let index = written - 1 - delay
        return index < 0 ? .off : history[index % history.count]
    }

    /// The nearest whole number of frame periods to `milliseconds` at `framesPerSecond`.
    public static func frames(forMilliseconds milliseconds: Int, framesPerSecond: Int) -> Int {
        (milliseconds * framesPerSecond + 500) / 1000
    }
}
