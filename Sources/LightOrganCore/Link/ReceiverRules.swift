/// How the receiver treats connections on a shared network (`receiver.*` settings, in force).
public struct ReceiverRules: Sendable, Equatable {
    /// With no frame from the active sender for this long, the lamps go off.
    public var lampTimeout: Duration = .seconds(1)
    /// A connection that delivers no complete frame for this long is closed.
    public var idleTimeout: Duration = .seconds(10)
    /// Open connections at most; when full, the connection idle longest (never the one driving
    /// the lights) makes room for a newcomer, so idle clients cannot lock a sender out.
    public var maxConnections = 8
    /// Peers allowed to connect; empty means everyone.
    public var allow: [AddressRange] = []
    /// A newer sender takes the lights from the active one after streaming this long (so a stray
    /// frame or a flood that is about to be cut off does not flash the lamps).
    public var takeoverDelay: Duration = .milliseconds(250)
    /// The active sender counts as gone when it has sent nothing for this long; another
    /// connection's frame then takes over at once.
    public var quietAfter: Duration = .milliseconds(150)
    /// Bytes a connection may send within one second. A sender sends 3 bytes per frame and at
    /// most 250 frames/s (750 B/s); even an old client's backlog after a stall is a few KiB. More is a flood.
    public var floodLimit = 64 * 1024
    /// Two sweeps further apart than this mean the receiver itself was not running (stopped,
    /// suspended, starved); that time does not count against the connections.
    public var pauseThreshold: Duration = .seconds(1)

    public init() {}
}
