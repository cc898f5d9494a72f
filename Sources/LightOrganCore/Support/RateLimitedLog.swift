/// Keeps a log line that a stranger can provoke (a refused connection) to one per ``interval``
/// per kind, so a flood cannot fill the journal; what was held back is counted in the next line.
///
/// Pure logic: the caller passes the time and writes the line it gets back.
public struct RateLimitedLog: Sendable {
    /// Least time between two lines of one kind.
    public let interval: Duration
    private var last: [String: (at: ContinuousClock.Instant, heldBack: Int)] = [:]

    public init(interval: Duration = .seconds(10)) {
        self.interval = interval
    }

    /// The line to log now for `message` of `kind`, or nil to hold it back (it is counted). The
    /// first line of a kind is logged at once; the next after ``interval``, with
    /// ` (and N more like it since the last such line)` when some were held back.
    public mutating func line(_ message: String, kind: String, at now: ContinuousClock.Instant) -> String? {
        if let previous = last[kind], now - previous.at < interval {
            last[kind]?.heldBack += 1
            return nil
        }
        let heldBack = last[kind]?.heldBack ?? 0
        last[kind] = (now, 0)
        guard heldBack > 0 else { return message }
        return "\(message) (and \(heldBack) more like it since the last such line)"
    }
}
