public import NIOCore
public import NIOPosix
import LightOrganCore

/// The sender's TCP connection to a receiver: writes 3-byte frames, TCP_NODELAY on.
public struct FrameLink: Sendable {
    /// The connected channel. Inbound bytes (a receiver sends none) are ignored.
    public let channel: NIOAsyncChannel<ByteBuffer, ByteBuffer>

    /// Connects to `host`:`port`, giving up after `timeout`.
    ///
    /// - Throws: ``NetworkError`` saying why (refused, unknown host, timed out) and what to check.
    public static func connect(
        host: String, port: Int, timeout: Duration = .seconds(3),
        group: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton
    ) async throws -> FrameLink {
        do {
            let channel = try await ClientBootstrap(group: group)
                .channelOption(.socketOption(.tcp_nodelay), value: 1)
                .connectTimeout(.nanoseconds(Int64(timeout.components.seconds * 1_000_000_000
                    + timeout.components.attoseconds / 1_000_000_000)))
                .connect(host: host, port: port) { channel in
                    channel.eventLoop.makeCompletedFuture {
                        try NIOAsyncChannel<ByteBuffer, ByteBuffer>(wrappingChannelSynchronously: channel)
                    }
                }
            return FrameLink(channel: channel)
        } catch {
            throw NetworkError.cannotConnect(host: host, port: port, underlying: error)
        }
    }

    /// The receiver's address, for logs.
    public var remoteDescription: String {
        channel.channel.remoteAddress.map { "\($0.ipAddress ?? "?"):\($0.port ?? 0)" } ?? "?"
    }
}
