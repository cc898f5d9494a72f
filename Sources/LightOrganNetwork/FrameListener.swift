public import NIOCore
public import NIOPosix
import Synchronization

/// The receiver's TCP listening socket: accepts senders and hands their frames to a ``FrameSink``.
///
/// Every accepted connection gets keepalive and a user timeout (``SocketTuning``) and a
/// ``FrameReceiverHandler``. The listener decides nothing: admission, takeover and timeouts are
/// the sink's.
public final class FrameListener: Sendable {
    /// The listening channel.
    public let channel: any Channel
    /// The address the socket is bound to (with the port the kernel chose when asked for 0).
    public let localAddress: SocketAddress

    private init(channel: any Channel, localAddress: SocketAddress) {
        self.channel = channel
        self.localAddress = localAddress
    }

    /// Binds to `host`:`port` (port 0: the kernel picks one) and starts accepting.
    ///
    /// - Throws: ``NetworkError`` with what to do when the address is in use or not available.
    public static func bind(
        host: String, port: Int, sink: any FrameSink,
        group: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton
    ) async throws -> FrameListener {
        let nextID = Atomic<Int>(0)
        let channel: any Channel
        do {
            channel = try await ServerBootstrap(group: group)
                .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
                .serverChannelOption(.backlog, value: 128)
                .tunedForFrames()
                .childChannelInitializer { child in
                    child.eventLoop.makeCompletedFuture {
                        let id = nextID.add(1, ordering: .relaxed).newValue
                        try child.pipeline.syncOperations.addHandler(FrameReceiverHandler(sink: sink, connectionID: id))
                    }
                }
                .bind(host: host, port: port).get()
        } catch {
            throw NetworkError.cannotListen(host: host, port: port, underlying: error)
        }
        guard let address = channel.localAddress else {
            throw NetworkError.cannotListen(host: host, port: port, underlying: ChannelError.ioOnClosedChannel)
        }
        return FrameListener(channel: channel, localAddress: address)
    }

    /// The port the socket listens on.
    public var port: Int { localAddress.port ?? 0 }

    /// Stops accepting (open connections stay until their owner closes them).
    public func close() async {
        try? await channel.close()
    }
}
