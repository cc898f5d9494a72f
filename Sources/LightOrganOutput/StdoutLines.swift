public import LightOrganCore
import Foundation

/// The `stdout` output: one line per applied frame, written at once, for scripts and tests.
///
/// Line format: `<CLOCK_MONOTONIC seconds, 6 decimals> <bass> <mid> <treble>`, e.g.
/// `12345.678901 200 13 0`. Turning the lamps off is a frame too (`… 0 0 0`).
public struct StdoutLines: LevelOutput {
    private var last: LevelFrame?

    public init() {}

    public mutating func show(_ frame: LevelFrame) {
        StandardOutput.write(Self.line(for: frame, at: MonotonicClock.seconds()))
        last = frame
    }

    /// Writes a last `0 0 0` line unless the lamps are already off.
    public mutating func shutDown() {
        if last?.isOff != true { show(.off) }
    }

    /// The line for `frame` applied at `seconds` on CLOCK_MONOTONIC, with its newline.
    public static func line(for frame: LevelFrame, at seconds: Double) -> String {
        String(format: "%.6f %d %d %d\n", seconds, frame.bass, frame.mid, frame.treble)
    }
}
