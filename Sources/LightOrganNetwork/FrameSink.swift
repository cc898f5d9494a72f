public import LightOrganCore
public import NIOCore

/// One accepted sender connection, as the receiver's logic sees it.
public struct FrameConnection: Sendable {
    /// Unique for the life of the listener, counting from 1.
    public let id: Int
    /// The peer's IP address as text (`192.168.1.20`, `::1`).
    public let address: String
    /// Address and port, for logs (`192.168.1.20:50422`).
    public let peer: String
    private let closer: @Sendable () -> Void
    /// Whether the receiver itself makes these frames (its own sound): the allow list does not apply.
    public let isLocal: Bool

    /// A connection of another kind that drives the lamps by the same rules (a page's sound
    /// socket): `id` must not collide with the listener's (which count up from 1: use negative ones).
    public init(id: Int, address: String, peer: String, channel: any Channel) {
        self.id = id
        self.address = address
        self.peer = peer
        self.closer = { channel.close(promise: nil) }
        isLocal = false
    }

    /// The receiver's own sound as a connection (``isLocal``): `close` is called when the
    /// receiver closes it (it was evicted, or the receiver shuts down).
    public init(localID id: Int, label: String, close: @escaping @Sendable () -> Void) {
        (self.id, address, peer, closer, isLocal) = (id, label, label, close, true)
    }

    /// Closes the connection (from any thread); the sink hears ``FrameSink/closed(_:)`` after.
    public func close() { closer() }
}

/// Where the listener delivers connections and frames: the receiver's decision-maker.
///
/// Calls come from the connections' event-loop threads, possibly several at once; each
/// connection's calls come in order: ``opened(_:)``, then ``arrived(_:completed:bytes:on:)``
/// after every read, then ``closed(_:)`` exactly once (if it was opened).
public protocol FrameSink: Sendable {
    /// A connection was accepted; return false to close it at once.
    func opened(_ connection: FrameConnection) -> Bool
    /// One read brought `bytes` bytes completing `completed` frames, the last of them `newest`
    /// (nil when the read completed none).
    func arrived(_ newest: LevelFrame?, completed: Int, bytes: Int, on connection: FrameConnection)
    /// The connection closed, whoever closed it.
    func closed(_ connection: FrameConnection)
}
