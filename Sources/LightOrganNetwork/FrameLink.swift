public import LightOrganCore
public import NIOCore
public import NIOPosix
import Synchronization

/// The sender's TCP connection to one receiver. ``send(_:)`` never waits and never queues:
/// the newest frame wins.
///
/// A frame is handed to the kernel only when everything written before has left the machine
/// (the socket's unsent bytes, from TCP_INFO, are 0) and NIO holds no earlier write; otherwise it
/// waits in a one-frame slot, and a newer frame replaces it (counted in ``dropped``). So at most one
/// stale frame sits between the analysis and the wire, however long the network stalls, and the
/// sender's memory stays flat. TCP_NODELAY, keepalive and a 5 s user timeout are on (``SocketTuning``).
public final class FrameLink: Sendable {
    /// The connected channel.
    public let channel: any Channel
    private let counters: LinkCounters

    private init(channel: any Channel, counters: LinkCounters) {
        self.channel = channel
        self.counters = counters
    }

    /// Connects to `host`:`port`, giving up after `timeout`.
    ///
    /// - Throws: ``NetworkError`` saying why (refused, unknown host, timed out) and what to check.
    public static func connect(
        host: String, port: Int, timeout: Duration = .seconds(3),
        group: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton
    ) async throws -> FrameLink {
        let counters = LinkCounters()
        do {
            let channel = try await ClientBootstrap(group: group)
                .tunedForFrames()
                .connectTimeout(TimeAmount.milliseconds(Int64(timeout / .milliseconds(1))))
                .channelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture {
                        try channel.pipeline.syncOperations.addHandler(NewestFrameWriter(counters: counters))
                    }
                }
                .connect(host: host, port: port).get()
            return FrameLink(channel: channel, counters: counters)
        } catch {
            throw NetworkError.cannotConnect(host: host, port: port, underlying: error)
        }
    }

    /// Offers `frame` for sending, from any thread; returns at once.
    public func send(_ frame: LevelFrame) {
        channel.writeAndFlush(frame, promise: nil)
    }

    /// Sends `frame` as the last one (after whatever is in flight) and closes the connection
    /// once it is handed to the kernel (or after `timeout`, when the peer takes nothing).
    public func finish(with frame: LevelFrame, timeout: Duration = .milliseconds(500)) async {
        let promise = channel.eventLoop.makePromise(of: Void.self)
        channel.writeAndFlush(NewestFrameWriter.Final(frame: frame), promise: promise)
        let deadline = channel.eventLoop.scheduleTask(in: .milliseconds(Int64(timeout / .milliseconds(1)))) {
            promise.fail(ChannelError.ioOnClosedChannel)
        }
        _ = try? await promise.futureResult.get()
        deadline.cancel()
        try? await channel.close()
    }

    /// Completes when the connection has closed, for any reason.
    public var closeFuture: EventLoopFuture<Void> { channel.closeFuture }

    /// Frames handed to the kernel so far.
    public var sent: Int { counters.sent.load(ordering: .relaxed) }
    /// Frames replaced by a newer one before they could be sent (the socket was stalled).
    public var dropped: Int { counters.dropped.load(ordering: .relaxed) }

    /// The receiver's address, for logs.
    public var remoteDescription: String {
        channel.remoteAddress.map { "\($0.ipAddress ?? "?"):\($0.port ?? 0)" } ?? "?"
    }
}

/// A link's counters, written on its event loop and read from anywhere.
final class LinkCounters: Sendable {
    let sent = Atomic<Int>(0)
    let dropped = Atomic<Int>(0)
}

/// The outbound end of a ``FrameLink``: keeps a one-frame slot and writes only into an empty pipe.
final class NewestFrameWriter: ChannelOutboundHandler {
    typealias OutboundIn = any Sendable
    typealias OutboundOut = ByteBuffer

    /// A frame to send after all others, whose promise completes when it is handed to the kernel.
    struct Final: Sendable {
        var frame: LevelFrame
    }

    private let counters: LinkCounters
    /// The newest frame not yet written.
    private var held: LevelFrame?
    /// Completed when `held` (the final frame) is written.
    private var heldPromise: EventLoopPromise<Void>?
    /// True from handing a frame to NIO until NIO has written it to the kernel.
    private var writing = false
    private var retry: Scheduled<Void>?

    init(counters: LinkCounters) {
        self.counters = counters
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        let item = unwrapOutboundIn(data)
        if let final = item as? Final {
            if held != nil { counters.dropped.add(1, ordering: .relaxed) }
            held = final.frame
            heldPromise?.succeed()
            heldPromise = promise
        } else if let frame = item as? LevelFrame {
            promise?.succeed()
            guard heldPromise == nil else { return }  // finishing: nothing after the final frame
            if held != nil { counters.dropped.add(1, ordering: .relaxed) }
            held = frame
        } else {
            promise?.fail(ChannelError.operationUnsupported)
            return
        }
        pump(context: context)
    }

    func flush(context: ChannelHandlerContext) {
        // Each write is flushed as it goes out; nothing is left to flush.
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        retry?.cancel()
        heldPromise?.fail(ChannelError.ioOnClosedChannel)
        heldPromise = nil
    }

    /// Writes the held frame if the way is clear; otherwise tries again shortly.
    private func pump(context: ChannelHandlerContext) {
        guard !writing, let frame = held else { return }
        guard Self.unsentBytes(of: context.channel) == 0 else {
            if retry == nil {
                retry = context.eventLoop.assumeIsolated().scheduleTask(in: .milliseconds(2)) { [self] in
                    retry = nil
                    pump(context: context)
                }
            }
            return
        }
        held = nil
        let promise = heldPromise
        heldPromise = nil
        writing = true
        var buffer = context.channel.allocator.buffer(capacity: LevelFrame.byteCount)
        buffer.writeLevelFrame(frame)
        context.writeAndFlush(wrapOutboundOut(buffer)).assumeIsolated().whenComplete { [self] result in
            writing = false
            if case .success = result { counters.sent.add(1, ordering: .relaxed) }
            promise?.completeWith(result)
            pump(context: context)
        }
    }

    /// Bytes written to the socket that the kernel has not transmitted yet (0 when unknown).
    private static func unsentBytes(of channel: any Channel) -> UInt32 {
        #if os(Linux)
        guard let provider = channel as? any SocketOptionProvider else { return 0 }
        var unsent: UInt32 = 0
        let info: EventLoopFuture<KernelTCPInfo> = provider.unsafeGetSocketOption(level: .tcp, name: .tcp_info)
        info.assumeIsolated().whenSuccess { unsent = $0.words.36 }  // on the loop: completes at once
        return unsent
        #else
        return 0
        #endif
    }
}

/// The first 148 bytes of Linux's `struct tcp_info` (up to `tcpi_notsent_bytes`, kernel 4.6+;
/// glibc's older copy of the struct stops before it). Word 36 is the count of unsent bytes.
struct KernelTCPInfo: Sendable {
    var words: (UInt32, UInt32, UInt32, UInt32, UInt32, UInt32, UInt32, UInt32, UInt32, UInt32, UInt32, UInt32, UInt32, UInt32, UInt32, UInt32, UInt32, UInt32, UInt32, UInt32, UInt32, UInt32, UInt32, UInt32, UInt32, UInt32, UInt32, UInt32, UInt32, UInt32, UInt32, UInt32, UInt32, UInt32, UInt32, UInt32, UInt32) = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
}

extension ByteBuffer {
    /// Appends `frame` as its three wire bytes.
    public mutating func writeLevelFrame(_ frame: LevelFrame) {
        writeInteger(frame.bass)
        writeInteger(frame.mid)
        writeInteger(frame.treble)
    }
}
