/// Decides, for the receiver, which connections stay open and which sender drives the lights.
///
/// - One **active** sender drives the lights. A connection whose frames start while another is
///   active takes over once it has streamed for ``ReceiverRules/takeoverDelay`` (it started
///   streaming later: the newer sender), or at once if the active one has gone quiet. Quiet means
///   silent for ``ReceiverRules/quietAfter`` while the challenger kept streaming: when both fall
///   silent together (a Wi-Fi hiccup, a receiver that was not scheduled) and their backlog then
///   arrives in one burst, the lights do not flick to the other sender and back. When the active sender closes, goes
///   quiet for the lamp timeout, or is cut off, the lamps go off.
/// - Connections are admitted by the allow list and ``ReceiverRules/maxConnections``; a connection
///   with no complete frame for ``ReceiverRules/idleTimeout`` or sending more than
///   ``ReceiverRules/floodLimit`` bytes in a second is closed.
///
/// Pure logic: the caller passes the time, does the I/O and the logging the answers ask for.
/// Invariant: ``active`` is nil or an open connection that has delivered a frame.
public struct SenderArbiter: Sendable {
    /// A connection's number, unique for the life of the receiver.
    public typealias ConnectionID = Int
    public typealias Instant = ContinuousClock.Instant

    public var rules: ReceiverRules
    /// The connection whose frames are shown.
    public private(set) var active: ConnectionID?
    /// What happened since the last ``takeCounters()``.
    public private(set) var counters = ReceiverCounters()
    private var connections: [ConnectionID: Connection] = [:]
    /// True while the output shows something other than off.
    private var lit = false
    /// When ``sweep(at:)`` last ran.
    private var lastSweep: Instant?

    private struct Connection {
        var peer: String
        var opened: Instant
        var firstFrame: Instant?
        var lastFrame: Instant?
        var windowStart: Instant
        var windowBytes = 0
        var lastActivity: Instant { lastFrame ?? opened }
    }

    public init(rules: ReceiverRules) {
        self.rules = rules
    }

    /// Open connections.
    public var openConnections: Int { connections.count }

    /// The peer (`address:port`) of a connection, for logs.
    public func peer(of id: ConnectionID) -> String? { connections[id]?.peer }

    /// Whether a new connection may stay.
    public enum Admission: Equatable, Sendable {
        /// Keep it; when `evicting` is set, close that (idle) connection to make room.
        case accept(evicting: ConnectionID?)
        /// Close it at once, for `reason`.
        case refuse(reason: String)
    }

    /// A connection from `address` (`peer` is address and port) was accepted by the socket; a
    /// `local` one is the receiver's own sound, which the allow list does not apply to.
    public mutating func admit(
        _ id: ConnectionID, address: String, peer: String, local: Bool = false, at now: Instant
    ) -> Admission {
        if !local, !rules.allow.isEmpty, !rules.allow.contains(where: { $0.contains(address) }) {
            counters.refused += 1
            let list = rules.allow.map(\.description).joined(separator: ", ")
            return .refuse(reason: "\(address) is not in receiver.allow (\(list))")
        }
        var evicting: ConnectionID?
        if connections.count >= rules.maxConnections {
            let candidates = connections.filter { $0.key != active }
            guard let idlest = candidates.min(by: { $0.value.lastActivity < $1.value.lastActivity }) else {
                counters.refused += 1
                return .refuse(reason: "receiver.max_connections (\(rules.maxConnections)) reached")
            }
            evicting = idlest.key
            connections[idlest.key] = nil
            counters.evicted += 1
        }
        connections[id] = Connection(peer: peer, opened: now, windowStart: now)
        return .accept(evicting: evicting)
    }

    /// What to do with what a connection just delivered.
    public enum Verdict: Equatable, Sendable {
        /// Show its newest frame; `takingOverFrom` is the connection that drove the lights until now.
        case show(LevelFrame, takingOverFrom: ConnectionID?)
        /// Nothing to show (no complete frame, or another sender drives the lights).
        case ignore
        /// Close the connection, for `reason`; when `lampsOff`, it was driving and the lamps must go off.
        case close(reason: String, lampsOff: Bool)
    }

    /// Connection `id` delivered `bytes` bytes completing `completed` frames, the last of them `newest`.
    public mutating func received(
        _ newest: LevelFrame?, completed: Int, bytes: Int, from id: ConnectionID, at now: Instant
    ) -> Verdict {
        guard var connection = connections[id] else { return .ignore }
        if now - connection.windowStart >= .seconds(1) {
            connection.windowStart = now
            connection.windowBytes = 0
        }
        connection.windowBytes += bytes
        counters.received += completed
        if connection.windowBytes > rules.floodLimit {
            counters.flooded += 1
            let lampsOff = closed(id)
            return .close(
                reason: "sent \(connection.windowBytes) bytes within a second (a sender sends under 1 KiB); flooding",
                lampsOff: lampsOff)
        }
        guard let newest else {
            connections[id] = connection
            return .ignore
        }
        let heardBefore = connection.lastFrame
        connection.firstFrame = connection.firstFrame ?? now
        connection.lastFrame = now
        connections[id] = connection
        counters.superseded += completed - 1
        var previous: ConnectionID?
        if active != id {
            if let current = active, let driving = connections[current], let drivingLast = driving.lastFrame,
                !Self.hasGoneQuiet(drivingLast: drivingLast, challengerHeardBefore: heardBefore, now: now, rules: rules)
            {
                // The newer sender is the one that started streaming later.
                guard let first = connection.firstFrame, let drivingFirst = driving.firstFrame, first > drivingFirst,
                    now - first >= rules.takeoverDelay
                else {
                    counters.ignored += 1
                    return .ignore
                }
            }
            previous = active
            active = id
        }
        counters.applied += 1
        lit = !newest.isOff
        counters.lastFrame = newest
        return .show(newest, takingOverFrom: previous)
    }

    /// Whether the driving sender, last heard at `drivingLast`, has gone quiet for a challenger
    /// delivering now, that was last heard at `challengerHeardBefore` (nil: this is its first frame).
    ///
    /// Silent for ``ReceiverRules/quietAfter``, and the challenger was heard from at least a third of
    /// that after the driver's last frame, so the receiver was reading while the driver said nothing.
    /// A first frame counts as heard: an old client that connects and sends one frame still takes
    /// the lights from a sender that stopped.
    static func hasGoneQuiet(drivingLast: Instant, challengerHeardBefore: Instant?, now: Instant, rules: ReceiverRules)
        -> Bool
    {
        guard now - drivingLast >= rules.quietAfter else { return false }
        guard let heardBefore = challengerHeardBefore else { return true }
        return heardBefore - drivingLast >= rules.quietAfter / 3
    }

    /// Connection `id` closed (or was closed). Returns true when it drove lit lamps: turn them off.
    public mutating func closed(_ id: ConnectionID) -> Bool {
        connections[id] = nil
        guard active == id else { return false }
        active = nil
        defer { lit = false }
        return lit
    }

    /// What the periodic check found.
    public struct Sweep: Equatable, Sendable {
        /// The active sender went quiet for the lamp timeout: turn the lamps off.
        public var lampsOff = false
        /// Connections idle for the idle timeout: close them.
        public var idle: [ConnectionID] = []
    }

    /// Checks the timeouts at `now`; call it a few times per lamp timeout (and at least once per
    /// ``ReceiverRules/pauseThreshold``).
    ///
    /// When the previous sweep is longer ago than the pause threshold, the receiver itself was not
    /// running (SIGSTOP, a suspended Pi): the frames sent meanwhile are waiting in the socket, so that
    /// time is not held against any connection.
    public mutating func sweep(at now: Instant) -> Sweep {
        var result = Sweep()
        if let lastSweep, now - lastSweep > rules.pauseThreshold {
            let gap = now - lastSweep
            for id in connections.keys {
                connections[id]!.opened = min(now, connections[id]!.opened + gap)
                connections[id]!.lastFrame = connections[id]!.lastFrame.map { min(now, $0 + gap) }
            }
        }
        lastSweep = now
        if let current = active, let last = connections[current]?.lastFrame, now - last >= rules.lampTimeout {
            active = nil
            result.lampsOff = lit
            lit = false
        }
        for (id, connection) in connections where now - connection.lastActivity >= rules.idleTimeout {
            result.idle.append(id)
            connections[id] = nil
            counters.closedIdle += 1
            if active == id {
                active = nil
                result.lampsOff = result.lampsOff || lit
                lit = false
            }
        }
        result.idle.sort()
        return result
    }

    /// Returns the counters since the last call and starts new ones (the last frame is kept).
    public mutating func takeCounters() -> ReceiverCounters {
        defer { counters = ReceiverCounters(lastFrame: counters.lastFrame) }
        return counters
    }
}

/// What the receiver did during one statistics interval.
public struct ReceiverCounters: Sendable, Equatable {
    /// Complete frames that arrived, from every connection.
    public var received = 0
    /// Frames set on the output.
    public var applied = 0
    /// Frames skipped because a newer one came in the same read (a backlog after a stall).
    public var superseded = 0
    /// Frames from connections that were not driving the lights.
    public var ignored = 0
    /// Connections refused (allow list, connection limit).
    public var refused = 0
    /// Idle connections closed to make room for a newcomer.
    public var evicted = 0
    /// Connections closed for sending no frame within the idle timeout.
    public var closedIdle = 0
    /// Connections closed for flooding.
    public var flooded = 0
    /// The last frame applied, if any ever was.
    public var lastFrame: LevelFrame?

    public init(lastFrame: LevelFrame? = nil) { self.lastFrame = lastFrame }
}
