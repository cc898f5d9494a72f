/// What a link delivered: frames or packets sent, dropped (the kernel's buffer was full, or the one
/// before had not left yet: newest wins), failed (the kernel refused them), and reconnections.
/// The one tally of the sender's TCP links (`FrameSocket` and the receiver targets over it) and the
/// lighting transmitters; all counts are totals since the start and never go down.
public struct DeliveryCounts: Sendable, Equatable {
    public var sent = 0
    public var dropped = 0
    public var failed = 0
    public var reconnects = 0

    public init(sent: Int = 0, dropped: Int = 0, failed: Int = 0, reconnects: Int = 0) {
        self.sent = sent
        self.dropped = dropped
        self.failed = failed
        self.reconnects = reconnects
    }

    /// Each count of `self` less `other`'s.
    public static func - (lhs: DeliveryCounts, rhs: DeliveryCounts) -> DeliveryCounts {
        DeliveryCounts(
            sent: lhs.sent - rhs.sent, dropped: lhs.dropped - rhs.dropped, failed: lhs.failed - rhs.failed,
            reconnects: lhs.reconnects - rhs.reconnects)
    }

    /// Each count of both added.
    public static func + (lhs: DeliveryCounts, rhs: DeliveryCounts) -> DeliveryCounts {
        DeliveryCounts(
            sent: lhs.sent + rhs.sent, dropped: lhs.dropped + rhs.dropped, failed: lhs.failed + rhs.failed,
            reconnects: lhs.reconnects + rhs.reconnects)
    }
}

/// The totals a statistics line reported last, to give the next line what changed since.
public struct DeliveryReport: Sendable {
    private var reported = DeliveryCounts()

    public init() {}

    /// What changed from the totals last reported to `totals`, which are reported from now on.
    public mutating func takeChange(to totals: DeliveryCounts) -> DeliveryCounts {
        defer { reported = totals }
        return totals - reported
    }
}
