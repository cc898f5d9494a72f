public import LightOrganCore

/// The `stdout` output: one line per applied frame, written at once, for scripts and tests.
///
/// Line format: `<CLOCK_MONOTONIC seconds, 6 decimals> <bass> <mid> <treble>`, e.g.
/// `12345.678901 200 13 0`. Turning the lamps off is a frame too (`… 0 0 0`).
public struct StdoutLines: LevelOutput {
    private var last: LevelFrame?

    public init() {}

    public mutating func show(_ frame: LevelFrame) {
        let now = MonotonicClock.now()
        StandardOutput.write(Self.line(for: frame, seconds: now.seconds, microseconds: now.nanoseconds / 1000))
        last = frame
    }

    /// Writes a last `0 0 0` line unless the lamps are already off.
    public mutating func shutDown() {
        if last?.isOff != true { show(.off) }
    }

    /// The line for `frame` applied at `seconds` + `microseconds` (0…999999) on CLOCK_MONOTONIC, with
    /// its newline; built without Foundation's formatter (this runs for every frame).
    public static func line(for frame: LevelFrame, seconds: Int, microseconds: Int) -> String {
        let fraction = String(microseconds)
        let padded = String(repeating: "0", count: max(0, 6 - fraction.count)) + fraction
        return "\(seconds).\(padded) \(frame.bass) \(frame.mid) \(frame.treble)\n"
    }
}
