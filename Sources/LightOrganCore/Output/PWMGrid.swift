/// The time line of software PWM: when each edge of a ``PWMSchedule`` is due (seconds on one
/// clock, CLOCK_MONOTONIC in the receiver), kept on a grid of whole periods while the thread that
/// writes the edges keeps up, and restarted at a late write instead of catching up.
///
/// The PWM thread sleeps until ``due(_:)`` of an edge, writes it, reads the clock and tells
/// ``wrote(edgeAt:at:)``. A write more than ``tolerance`` behind its due time (the thread woke late:
/// the machine was busy) moves the grid so that this edge lies where it was written: the rest of the
/// period keeps its full length, so a late rising edge starts a whole period anew at the wake-up and
/// a late falling edge still gets its whole off time. Edges are never written in a burst to catch up,
/// which squeezed periods to about a millisecond and made a lamp's brightness jump under load.
///
/// So, measured between the writes (the kernel's view of the line), no phase of a period is shorter
/// than its share of the period less ``tolerance``, whatever the wake-ups; a late wake-up only makes
/// the phase before it longer.
public struct PWMGrid: Sendable, Equatable {
    /// The length of one period, seconds (> 0).
    public let period: Double
    /// How late (seconds) a write may be and the grid stays where it is: ordinary wake-up latency
    /// keeps the frequency exact on average; anything later restarts the grid.
    public let tolerance: Double
    /// When the current period started (or, after a late edge, would have started), seconds.
    public private(set) var periodStart: Double
    /// How many times a late write moved the grid.
    public private(set) var restarts = 0

    /// The grid's share of a period that a write may be late and stay on the grid: a tenth (0.5 ms at
    /// 200 Hz, several times a Pi's usual wake-up latency).
    public static let defaultTolerance = 0.1

    /// A grid of `period` seconds whose first period starts at `start`; `tolerance` seconds, by
    /// default ``defaultTolerance`` of the period.
    public init(period: Double, start: Double, tolerance: Double? = nil) {
        precondition(period > 0, "a PWM period is longer than 0 s: \(period)")
        self.period = period
        self.tolerance = tolerance ?? period * Self.defaultTolerance
        periodStart = start
    }

    /// When the edge at `offset` (a fraction of the period, 0 ≤ offset < 1) of the current period is
    /// due, seconds.
    public func due(_ offset: Double) -> Double {
        periodStart + offset * period
    }

    /// Notes that the edge at `offset` of the current period was written at `now` (the clock read
    /// after the write). Later than ``tolerance`` past its due time, the grid moves so that the edge
    /// lies at `now`: the edges after it keep their distances to it.
    ///
    /// - Returns: whether the grid moved.
    @discardableResult
    public mutating func wrote(edgeAt offset: Double, at now: Double) -> Bool {
        guard now - due(offset) > tolerance else { return false }
        periodStart = now - offset * period
        restarts += 1
        return true
    }

    /// Moves on to the next period (after its last edge was written).
    public mutating func advance() {
        periodStart += period
    }

    /// Starts the grid anew at `now`: the next period starts then (after the PWM thread slept
    /// through steady lines).
    public mutating func restart(at now: Double) {
        periodStart = now
    }
}
