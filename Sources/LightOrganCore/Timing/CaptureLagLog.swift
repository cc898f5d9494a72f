/// What the sender's log says of a live source's capture lag (``CaptureLag``) while its frames are
/// delayed: the first statement; afterwards a change, when the smallest lag of a
/// ``windowNanoseconds`` window moved by ``changeNanoseconds`` or more from the one logged (a sound
/// server's statement moves with the phase of its blocks, 0–40 ms on a network sink's monitor, so
/// each statement is no news); a lag that cannot be known, once, with the figure assumed.
///
/// Invariant: at most one line per window; nothing allocates but the lines.
public struct CaptureLagLog: Sendable {
    /// The window whose smallest lag is compared with the one logged, nanoseconds.
    public static let windowNanoseconds: Int64 = 2_000_000_000
    /// How far that smallest lag must move to be logged again, nanoseconds.
    public static let changeNanoseconds: Int64 = 10_000_000
    /// How long a source may go without a statement before the log says the lag is assumed, nanoseconds.
    public static let patienceNanoseconds: Int64 = 1_000_000_000

    /// The lag last logged, nanoseconds; nil before the first statement.
    private var logged: Int64?
    private var saidUnknown = false
    private var firstSeen: Int64?
    private var windowStart: Int64 = 0
    private var smallest: Int64?

    public init() {}

    /// Takes the source's lag after a read at `now` (monotonic nanoseconds; nil: not yet stated) and
    /// returns a line for the log, or nil. A lag stated is always news; one not known matters only
    /// when the frames are `delayed` (timed by when their audio was made).
    public mutating func take(_ lag: CaptureLag?, now: Int64, delayed: Bool = true) -> String? {
        let started = firstSeen ?? now
        firstSeen = started
        switch lag {
        case nil:
            guard delayed, logged == nil, !saidUnknown, now - started >= Self.patienceNanoseconds else { return nil }
            saidUnknown = true
            return
                "capture lag not stated within 1 s: assumed 0 ms (frames timed from when their audio arrived) until it is"
        case .unknown(let reason)?:
            guard delayed, logged == nil, !saidUnknown else { return nil }
            saidUnknown = true
            return "capture lag unknown (\(reason)): assumed 0 ms, frames timed from when their audio arrived"
        case .stated(let nanoseconds, let by)?:
            guard let last = logged else {
                logged = nanoseconds
                windowStart = now
                return "capture lag \(Self.milliseconds(nanoseconds)) ms (\(by))"
            }
            smallest = min(smallest ?? nanoseconds, nanoseconds)
            guard now - windowStart >= Self.windowNanoseconds, let low = smallest else { return nil }
            windowStart = now
            smallest = nil
            guard abs(low - last) >= Self.changeNanoseconds else { return nil }
            logged = low
            return "capture lag now \(Self.milliseconds(low)) ms (\(by))"
        }
    }

    private static func milliseconds(_ nanoseconds: Int64) -> Int64 { (nanoseconds + 500_000) / 1_000_000 }
}
