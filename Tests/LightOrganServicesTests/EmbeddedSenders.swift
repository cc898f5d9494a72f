import LightOrganNetwork
import NIOCore
import NIOEmbedded

/// Sender connections on NIO's embedded channels, for a test: ``finish()`` closes the ones still
/// open (an embedded channel may not be freed open). Use it on the thread that made it.
final class EmbeddedSenders {
    private var channels: [EmbeddedChannel] = []

    /// A channel connected from `address`:`port`, and connection `id` on it (`close()` makes the
    /// channel inactive).
    func connect(_ id: Int, address: String = "192.168.1.20", port: Int = 50_000) throws -> (
        connection: FrameConnection, channel: EmbeddedChannel
    ) {
        let channel = try channel(from: address, port: port)
        return (FrameConnection(id: id, address: address, peer: "\(address):\(port)", channel: channel), channel)
    }

    /// A channel connected from `address`:`port`.
    func channel(from address: String = "192.168.1.30", port: Int = 40_000) throws -> EmbeddedChannel {
        let channel = EmbeddedChannel()
        channels.append(channel)
        try channel.connect(to: SocketAddress(ipAddress: address, port: port)).wait()
        return channel
    }

    /// Closes every channel still open.
    func finish() {
        for channel in channels { _ = try? channel.finish() }
        channels = []
    }
}
