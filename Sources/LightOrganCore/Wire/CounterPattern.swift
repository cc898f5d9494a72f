/// A test pattern for the link: frames that carry a 24-bit counter instead of levels.
///
/// `lightorgan send --pattern counter` streams frame n as n in big-endian bytes and logs when it
/// had each one; a receiver with `output: stdout` logs when it applied each. Matching the two by
/// counter gives every frame's age at the receiver (both logs use CLOCK_MONOTONIC), which is how
/// the link tests and `scripts/bench-link` measure latency. The counter skips values whose bytes
/// are all equal to 0, so no frame of the pattern is the all-off frame.
public enum CounterPattern {
    /// Counters repeat after this many frames (2^24: 46 hours at 100 frames/s).
    public static let period = 1 << 24

    /// The frame that carries `counter` (taken modulo ``period``; 0 is sent as 1).
    public static func frame(_ counter: Int) -> LevelFrame {
        let value = max(1, counter % period)
        return LevelFrame(bass: UInt8(value >> 16 & 0xFF), mid: UInt8(value >> 8 & 0xFF), treble: UInt8(value & 0xFF))
    }

    /// The counter a frame carries.
    public static func counter(of frame: LevelFrame) -> Int {
        Int(frame.bass) << 16 | Int(frame.mid) << 8 | Int(frame.treble)
    }
}
