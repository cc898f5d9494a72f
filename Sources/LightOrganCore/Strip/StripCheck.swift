/// The wiring check of a strip: what a person sees tells a wrong pixel count, colour order or a
/// missing level shifter at a glance.
///
/// First the first pixel red and the last blue (a strip that shows other colours has another
/// colour order; a last pixel that stays dark means fewer pixels than set, or the wrong end), then
/// one green pixel runs from the first to the last, then the strip is dark. A strip that flickers
/// or shows random colours is driven at 3.3 V without a level shifter.
public struct StripCheck: Sendable, Equatable {
    /// One picture of the check.
    public enum Step: Sendable, Equatable {
        /// The first pixel red, the last blue, the rest dark.
        case ends
        /// This pixel (0-based) green, the rest dark.
        case runner(Int)
        /// Every pixel dark.
        case dark
    }

    /// Seconds the ends are shown.
    public static let endsDuration = 2.0
    /// Seconds the runner takes along the whole strip (at most 100 pixels a second on short
    /// strips, so each can be seen; on long ones no step shorter than ``shortestStep``).
    public static let runDuration = 3.0
    /// Shortest time a runner's step is shown, seconds (a strip takes up to ~10 ms a frame).
    public static let shortestStep = 0.01

    /// Pixels of the strip.
    public let pixels: Int

    public init(pixels: Int) {
        self.pixels = max(1, pixels)
    }

    /// Seconds each runner step is shown.
    public var runnerStep: Double { max(Self.shortestStep, min(0.25, Self.runDuration / Double(pixels))) }

    /// The whole check, each step with how long it is shown, seconds; ends on ``Step/dark``.
    public var steps: [(step: Step, seconds: Double)] {
        [(.ends, Self.endsDuration)] + (0..<pixels).map { (.runner($0), runnerStep) } + [(.dark, 0)]
    }

    /// The step shown `elapsed` seconds after the check started (``Step/dark`` once it is over).
    public func step(at elapsed: Double) -> Step {
        guard elapsed >= Self.endsDuration else { return .ends }
        let runner = Int((elapsed - Self.endsDuration) / runnerStep)
        return runner < pixels ? .runner(runner) : .dark
    }

    /// When the step after one is shown, both from the check's start: the step was due at `due`,
    /// is shown for `seconds`, and went up at `shown`. The next is due at `due + seconds` (the check's
    /// own grid) and shown then, but never sooner than half of `seconds` after `shown`: a late wake-up
    /// shortens the next steps until the grid is met again, and never skips a pixel.
    public static func nextStep(due: Duration, seconds: Double, shown: Duration) -> (due: Duration, at: Duration) {
        let next = due + .seconds(seconds)
        return (next, max(next, shown + .seconds(seconds / 2)))
    }

    /// Seconds the whole check takes.
    public var duration: Double { Self.endsDuration + Double(pixels) * runnerStep }
}
