public import NIOCore
public import NIOPosix
public import LightOrganCore

/// The receiver's TCP listening socket: accepts senders and decodes their frames.
///
/// Each accepted connection is a ``FrameConnection`` whose inbound stream yields ``LevelFrame``s.
/// TCP_NODELAY is set on every connection (it matters for the sender; it costs nothing here).
public struct FrameListener: Sendable {
    /// An accepted sender connection: decoded frames in, nothing out.
    public typealias FrameConnection = NIOAsyncChannel<LevelFrame, Never>

    /// The listening channel; iterate its inbound stream for connections.
    public let channel: NIOAsyncChannel<FrameConnection, Never>
    /// The address the socket is bound to (with the port the kernel chose when asked for 0).
    public let localAddress: SocketAddress

    /// Binds to `host`:`port` (port 0: the kernel picks one).
    ///
    /// - Throws: ``NetworkError`` with what to do when the address is in use or not available.
    public static func bind(
        host: String, port: Int, group: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton
    ) async throws -> FrameListener {
        let channel: NIOAsyncChannel<FrameConnection, Never>
        do {
            channel = try await ServerBootstrap(group: group)
                .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
                .serverChannelOption(.backlog, value: 64)
                .childChannelOption(.socketOption(.tcp_nodelay), value: 1)
                .bind(host: host, port: port) { child in
                    child.eventLoop.makeCompletedFuture {
                        try child.pipeline.syncOperations.addHandler(ByteToMessageHandler(LevelFrameDecoder()))
                        return try FrameConnection(wrappingChannelSynchronously: child)
                    }
                }
        } catch {
            throw NetworkError.cannotListen(host: host, port: port, underlying: error)
        }
        guard let address = channel.channel.localAddress else {
            throw NetworkError.cannotListen(host: host, port: port, underlying: ChannelError.ioOnClosedChannel)
        }
        return FrameListener(channel: channel, localAddress: address)
    }

    /// The port the socket listens on.
    public var port: Int { localAddress.port ?? 0 }
}
