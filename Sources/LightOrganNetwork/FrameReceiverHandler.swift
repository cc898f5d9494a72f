import LightOrganCore
public import NIOCore

/// The receiver's per-connection handler: bytes in, newest complete frame out to the ``FrameSink``.
///
/// NIO reads a socket in batches (several reads, then `channelReadComplete`). The handler cuts
/// the bytes with a ``FrameAssembler`` and hands the sink only the newest frame of the batch, so a
/// backlog (a paused receiver, a burst after Wi-Fi came back) costs one output write, not hundreds,
/// and the lamps jump straight to the present.
public final class FrameReceiverHandler: ChannelInboundHandler {
    public typealias InboundIn = ByteBuffer

    private let sink: any FrameSink
    private let connectionID: Int
    private var connection: FrameConnection?
    private var assembler = FrameAssembler()
    private var pendingNewest: LevelFrame?
    private var pendingCompleted = 0
    private var pendingBytes = 0

    /// A handler for connection number `connectionID` delivering to `sink`.
    public init(sink: any FrameSink, connectionID: Int) {
        self.sink = sink
        self.connectionID = connectionID
    }

    public func channelActive(context: ChannelHandlerContext) {
        let remote = context.channel.remoteAddress
        let address = remote?.ipAddress ?? "?"
        let connection = FrameConnection(
            id: connectionID, address: address, peer: Self.describe(remote), channel: context.channel)
        if sink.opened(connection) {
            self.connection = connection
        } else {
            context.close(promise: nil)
        }
        context.fireChannelActive()
    }

    public func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let buffer = unwrapInboundIn(data)
        let result = buffer.withUnsafeReadableBytes { assembler.take($0) }
        pendingBytes += buffer.readableBytes
        pendingCompleted += result.completed
        if let newest = result.newest { pendingNewest = newest }
    }

    public func channelReadComplete(context: ChannelHandlerContext) {
        guard pendingBytes > 0, let connection else { return }
        let (newest, completed, bytes) = (pendingNewest, pendingCompleted, pendingBytes)
        pendingNewest = nil
        pendingCompleted = 0
        pendingBytes = 0
        sink.arrived(newest, completed: completed, bytes: bytes, on: connection)
    }

    public func channelInactive(context: ChannelHandlerContext) {
        if let connection {
            self.connection = nil
            sink.closed(connection)
        }
        context.fireChannelInactive()
    }

    public func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)  // a reset or timed-out peer: channelInactive follows
    }

    /// `address:port`, with brackets for IPv6.
    static func describe(_ address: SocketAddress?) -> String {
        guard let address, let ip = address.ipAddress else { return "?" }
        let port = address.port ?? 0
        return ip.contains(":") ? "[\(ip)]:\(port)" : "\(ip):\(port)"
    }
}
