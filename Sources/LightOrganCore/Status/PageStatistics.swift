/// What the receiver's page shows about its senders: who drives the lamps and since when, what
/// kind of sender it is, the frame rate, the frames' ages, drops and reconnects.
///
/// Kept since the receiver started (the statistics line's ``ReceiverCounters`` reset each
/// interval, these do not). Pure bookkeeping with the time passed in: the receiver tells it what
/// happened (a connection opened, a frame shown, a connection closed, the lamps timed out) and
/// reads a ``Summary`` for the status.
///
/// Times: instants are the receiver's `ContinuousClock`; ``Sender/since`` values are Unix seconds
/// (the page compares them with the receiver's clock). Invariants: ``drivingConnection`` is nil or a
/// connection that was opened and has not closed since; at most ``FrameAges/capacity`` frame
/// ages are kept.
public struct PageStatistics: Sendable {
    /// A connection's number: the listener's count up from 1, a page's sound connections count
    /// down from -1 (``isBrowser(_:)``).
    public typealias ConnectionID = Int
    public typealias Instant = ContinuousClock.Instant

    /// A sender that delivers at least this many frames a second on average is `lightorgan send`
    /// (100 frames/s by default); below, a client of the 2016 apps (the Android app sends about 10).
    public static let lightorganFramesPerSecond = 30.0
    /// How long a connection is open before its kind is told from its rate (until then: unknown).
    public static let kindObservedFor = Duration.seconds(1)
    /// How long the frames-per-second window is: the rate shown is the last full window's.
    public static let rateWindow = Duration.seconds(1)
    /// With no frame shown for longer than this, the rate shown is 0 (the last window is stale).
    public static let rateStaleAfter = Duration.seconds(2)

    /// Whether connection `id` is a page's sound (a browser's microphone or tab): those are
    /// numbered below zero, the listener's connections above.
    public static func isBrowser(_ id: ConnectionID) -> Bool { id < 0 && id != ownSoundID }

    /// The connection number of the receiver's own sound (AirPlay, a pipe, a microphone): one
    /// the page's count down never reaches.
    public static let ownSoundID: ConnectionID = .min

    /// The kind a sender is shown as.
    ///
    /// - A page's sound (``isBrowser(_:)``) is `browser`.
    /// - Any other connection open for less than ``kindObservedFor`` (or not known) is `unknown`.
    /// - Else its average rate since it opened, `frames` over `openFor`, tells: at least
    ///   ``lightorganFramesPerSecond`` is `lightorgan`, below is a `2016 app` (``ReceiverStatus/Sender/Kind/legacy``).
    ///
    /// - Parameters:
    ///   - frames: complete frames it delivered that were shown, since it opened.
    ///   - openFor: how long it has been open; nil when unknown.
    public static func senderKind(of id: ConnectionID, frames: Int, openFor: Duration?) -> ReceiverStatus.Sender.Kind {
        if id == ownSoundID { return .own }
        if isBrowser(id) { return .browser }
        guard let openFor, openFor >= kindObservedFor else { return .unknown }
        let seconds: Double = openFor / Duration.seconds(1)
        let rate = Double(frames) / seconds
        return rate >= lightorganFramesPerSecond ? .lightorgan : .legacy
    }

    /// The port of a sender's `peer` text (`192.168.1.20:50422` → 50422): the number after its
    /// last colon; nil for a page's sound (its peer names the page's own socket) or when there is none.
    public static func port(of id: ConnectionID, peer: String) -> Int? {
        guard !isBrowser(id), id != ownSoundID else { return nil }
        return peer.split(separator: ":").last.flatMap { Int($0) }
    }

    /// The latest frames' ages (arrival to output), microseconds, in a ring: once full, each new
    /// age overwrites the oldest.
    public struct FrameAges: Sendable, Equatable {
        /// Ages kept at most (about 5 s of frames at 100 frames/s).
        public static let capacity = 512

        /// The ages kept, in ring order (not sorted), microseconds; at most ``capacity``.
        public private(set) var samples: [Int] = []
        /// Where the next age goes once the ring is full.
        private var next = 0

        public init() {}

        /// Keeps `microseconds`, overwriting the oldest age when ``capacity`` are kept.
        public mutating func record(_ microseconds: Int) {
            if samples.count < Self.capacity {
                samples.append(microseconds)
            } else {
                samples[next] = microseconds
                next = (next + 1) % Self.capacity
            }
        }

        /// The median and 99th percentile of the ages kept, milliseconds; nil when none is kept.
        ///
        /// The q-th percentile is the age at index ⌊q × count⌋ of the ages sorted (the last for
        /// q × count ≥ count). Sorts a copy: call it outside the lock the ring is kept under.
        public func percentiles() -> ReceiverStatus.FrameAge? {
            guard !samples.isEmpty else { return nil }
            let sorted = samples.sorted()
            func at(_ quantile: Double) -> Double {
                Double(sorted[min(sorted.count - 1, Int(quantile * Double(sorted.count)))]) / 1000
            }
            return ReceiverStatus.FrameAge(p50: at(0.5), p99: at(0.99))
        }
    }

    /// What the page shows about the senders at one moment.
    public struct Summary: Sendable {
        /// The sender that drives the lamps, nil when none does.
        public var sender: ReceiverStatus.Sender?
        /// Frames shown per second over the last full ``rateWindow``; 0 when none was shown
        /// for ``rateStaleAfter``.
        public var framesPerSecond: Double
        /// The ages of the latest frames (percentiles are computed by ``frameAge``).
        public var frameAges: FrameAges
        /// Frames skipped since start because a newer one completed in the same read.
        public var drops: Int
        /// Connections since start from an address seen before.
        public var reconnects: Int
        /// Connections open now.
        public var connections: Int

        /// The frames' age percentiles, milliseconds (sorts the ages: read it outside any lock).
        public var frameAge: ReceiverStatus.FrameAge? { frameAges.percentiles() }
    }

    /// A connection open now: when it opened and the frames of it shown so far.
    private struct OpenConnection {
        var opened: Instant
        var frames = 0
    }

    private var open: [ConnectionID: OpenConnection] = [:]
    /// The connection whose frames were shown last and since when it drives (Unix seconds).
    private var driving: (id: ConnectionID, since: Double)?
    private var addressesSeen: Set<String> = []
    /// Each sender address's local-network name, once one was found.
    private var names: [String: String] = [:]
    private var reconnects = 0
    private var drops = 0
    /// The rate window: when it started (the frame that opened it) and the frames shown after that.
    private var windowStart: Instant?
    private var windowFrames = 0
    private var framesPerSecond = 0.0
    private var lastShown: Instant?
    private var frameAges = FrameAges()

    public init() {}

    /// The connection that drives the lamps (its frames were shown last), nil when none does.
    public var drivingConnection: ConnectionID? { driving?.id }

    /// Connection `id` from `address` was admitted at `now`.
    ///
    /// - Returns: whether `address` is new (no connection from it before); one from an address
    ///   seen before counts as a reconnect.
    public mutating func opened(_ id: ConnectionID, address: String, at now: Instant) -> Bool {
        open[id] = OpenConnection(opened: now)
        let isNew = addressesSeen.insert(address).inserted
        if !isNew { reconnects += 1 }
        return isNew
    }

    /// `address`'s local-network name (`laptop.local`), shown for its senders from now on.
    public mutating func named(_ address: String, _ name: String) {
        names[address] = name
    }

    /// A frame of connection `id` that arrived at `arrival` was shown at `now` (`unixTime`: the
    /// same moment in Unix seconds); the read that brought it completed `completed` frames
    /// (all but the newest were dropped).
    public mutating func shown(
        _ id: ConnectionID, completed: Int, arrivedAt arrival: Instant, at now: Instant, unixTime: Double
    ) {
        if driving?.id != id { driving = (id, unixTime) }
        open[id]?.frames += completed
        drops += max(0, completed - 1)
        // The first frame only opens the window: a window counts the frames after its start, up to
        // and including the one that closes it (steady 100 frames/s reads 100, not 101).
        if let start = windowStart {
            windowFrames += 1
            if now - start >= Self.rateWindow {
                framesPerSecond = Double(windowFrames) / ((now - start) / Duration.seconds(1))
                windowStart = now
                windowFrames = 0
            }
        } else {
            windowStart = now
        }
        lastShown = now
        frameAges.record(Int((now - arrival) / Duration.microseconds(1)))
    }

    /// Connection `id` closed: it no longer counts as open, nor drives.
    public mutating func closed(_ id: ConnectionID) {
        open[id] = nil
        if driving?.id == id { driving = nil }
    }

    /// The lamps went off for want of frames (the lamp timeout): nobody drives.
    public mutating func lampsTimedOut() {
        driving = nil
    }

    /// What the page shows at `now`.
    ///
    /// - Parameters:
    ///   - drivingPeer: the address and `address:port` text of the ``drivingConnection``, nil when
    ///     the receiver no longer holds it (closing): then no sender is shown.
    ///   - openConnections: the connections the receiver holds now.
    public func summary(at now: Instant, drivingPeer: (address: String, peer: String)?, openConnections: Int)
        -> Summary
    {
        var sender: ReceiverStatus.Sender?
        if let driving, let drivingPeer {
            let connection = open[driving.id]
            let kind = Self.senderKind(
                of: driving.id, frames: connection?.frames ?? 0, openFor: connection.map { now - $0.opened })
            sender = ReceiverStatus.Sender(
                address: drivingPeer.address, port: Self.port(of: driving.id, peer: drivingPeer.peer),
                name: names[drivingPeer.address], kind: kind, since: driving.since)
        }
        let stale = lastShown.map { now - $0 > Self.rateStaleAfter } ?? true
        return Summary(
            sender: sender, framesPerSecond: stale ? 0 : framesPerSecond, frameAges: frameAges, drops: drops,
            reconnects: reconnects, connections: openConnections)
    }
}
