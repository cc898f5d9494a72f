import CTLSShim
import LightOrganCore
import NIOCore

/// TLS for one page connection, server side, with the session in Debian's OpenSSL
/// (``TLSServerContext``): the peer's bytes go in, plaintext comes out to the handlers after this
/// one; their plaintext goes in, and the bytes for the peer go out.
///
/// Writes made before the handshake is complete wait for it, in order. A protocol error or the
/// peer's `close_notify` closes the connection. Closing sends this side's `close_notify`, then
/// reads (and drops) what the peer still sends until its own `close_notify`, its end of the
/// connection or ``closeTimeout``: a peer still sending when this side closes (a message too
/// large, cut short) would otherwise be reset and lose the close frame it was sent.
final class TLSServerHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer
    typealias OutboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    /// A TLS failure: OpenSSL's reason.
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    /// Plaintext read at a time, bytes: one TLS record's most.
    private static let readChunk = 16 * 1024

    private let context: TLSServerContext
    private var session: OpaquePointer?
    /// Writes waiting for the handshake, with their promises; and whether a flush was asked meanwhile.
    private var waitingWrites: [(ByteBuffer, EventLoopPromise<Void>?)] = []
    private var flushWaiting = false
    private var reason = [CChar](repeating: 0, count: 256)
    /// While closing: the close's promise and the timeout that ends the wait for the peer.
    private var closing: (promise: EventLoopPromise<Void>?, timeout: Scheduled<Void>)?

    /// How long a close waits for the peer's `close_notify` (as SwiftNIO's own TLS handler waits).
    static let closeTimeout = TimeAmount.seconds(5)

    init(context: TLSServerContext) {
        self.context = context
    }

    func handlerAdded(context: ChannelHandlerContext) {
        session = lightorgan_tls_session_new(self.context.pointer)
        if session == nil { context.close(promise: nil) }
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        lightorgan_tls_session_free(session)
        session = nil
        let waiting = waitingWrites
        waitingWrites = []
        for (_, promise) in waiting { promise?.fail(ChannelError.ioOnClosedChannel) }
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard let session else { return }
        let bytes = unwrapInboundIn(data)
        let taken = bytes.withUnsafeReadableBytes { raw in
            lightorgan_tls_receive(session, raw.bindMemory(to: UInt8.self).baseAddress, raw.count)
        }
        guard taken == 0 else { return fail(context, Failure(description: "out of memory")) }
        let wasEstablished = lightorgan_tls_is_established(session) == 1
        var plaintext: [ByteBuffer] = []
        var outcome = 0
        repeat {
            var buffer = context.channel.allocator.buffer(capacity: Self.readChunk)
            buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: Self.readChunk) { raw in
                outcome = lightorgan_tls_read(
                    session, raw.bindMemory(to: UInt8.self).baseAddress, raw.count, &reason, reason.count)
                return max(outcome, 0)
            }
            if outcome > 0 { plaintext.append(buffer) }
        } while outcome > 0
        if outcome == Int(LIGHTORGAN_TLS_FAILED.rawValue) {
            sendPending(context, flush: true)  // OpenSSL's alert, if it made one
            return fail(context, Failure(description: String(cCharacters: reason)))
        }
        let closedByPeer = outcome == Int(LIGHTORGAN_TLS_CLOSED.rawValue)
        if closing != nil {
            // Closing: what the peer still says is dropped; its close_notify ends the wait.
            if closedByPeer { finishClosing(context) }
            return
        }
        sendPending(context, flush: true)
        if !wasEstablished, lightorgan_tls_is_established(session) == 1 { writeWaiting(context) }
        for buffer in plaintext { context.fireChannelRead(wrapInboundOut(buffer)) }
        if closedByPeer { context.close(promise: nil) }
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        guard let session else {
            promise?.fail(ChannelError.ioOnClosedChannel)
            return
        }
        let bytes = unwrapOutboundIn(data)
        guard lightorgan_tls_is_established(session) == 1 else {
            waitingWrites.append((bytes, promise))
            return
        }
        encrypt(context, bytes, promise: promise)
    }

    func flush(context: ChannelHandlerContext) {
        guard let session, lightorgan_tls_is_established(session) == 1 else {
            flushWaiting = true
            return
        }
        context.flush()
    }

    func close(context: ChannelHandlerContext, mode: CloseMode, promise: EventLoopPromise<Void>?) {
        if let closing {
            // Already closing: this close completes with that one.
            if let promise { closing.promise?.futureResult.cascade(to: promise) }
            return
        }
        guard mode == .all, let session, lightorgan_tls_is_established(session) == 1 else {
            context.close(mode: mode, promise: promise)
            return
        }
        lightorgan_tls_shut_down(session)
        sendPending(context, flush: true)
        let timeout = context.eventLoop.assumeIsolated().scheduleTask(in: Self.closeTimeout) { [self] in
            finishClosing(context)
        }
        closing = (promise ?? context.eventLoop.makePromise(), timeout)
    }

    func channelInactive(context: ChannelHandlerContext) {
        if let closing {
            self.closing = nil
            closing.timeout.cancel()
            closing.promise?.succeed()
        }
        context.fireChannelInactive()
    }

    /// Ends a close that waited for the peer.
    private func finishClosing(_ context: ChannelHandlerContext) {
        guard let closing else { return }
        self.closing = nil
        closing.timeout.cancel()
        context.close(promise: closing.promise)
    }

    /// Encrypts `bytes` and writes what the peer is to get, with `promise`.
    private func encrypt(_ context: ChannelHandlerContext, _ bytes: ByteBuffer, promise: EventLoopPromise<Void>?) {
        guard let session else { return }
        let written = bytes.withUnsafeReadableBytes { raw in
            lightorgan_tls_write(session, raw.bindMemory(to: UInt8.self).baseAddress, raw.count, &reason, reason.count)
        }
        guard written >= 0 else {
            let failure = Failure(description: String(cCharacters: reason))
            promise?.fail(failure)
            return fail(context, failure)
        }
        sendPending(context, flush: false, promise: promise)
    }

    /// The writes that waited for the handshake, in order, and the flush asked meanwhile.
    private func writeWaiting(_ context: ChannelHandlerContext) {
        let waiting = waitingWrites
        waitingWrites = []
        for (bytes, promise) in waiting { encrypt(context, bytes, promise: promise) }
        if flushWaiting {
            flushWaiting = false
            context.flush()
        }
    }

    /// Writes the bytes the session has for the peer (the promise, if any, with them; else it
    /// succeeds at once), and flushes when asked.
    private func sendPending(_ context: ChannelHandlerContext, flush: Bool, promise: EventLoopPromise<Void>? = nil) {
        guard let session else { return }
        let count = lightorgan_tls_pending(session)
        if count > 0 {
            var buffer = context.channel.allocator.buffer(capacity: count)
            buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: count) { raw in
                lightorgan_tls_take(session, raw.bindMemory(to: UInt8.self).baseAddress, count)
            }
            context.write(wrapOutboundOut(buffer), promise: promise)
        } else {
            promise?.succeed()
        }
        if flush { context.flush() }
    }

    private func fail(_ context: ChannelHandlerContext, _ failure: Failure) {
        context.fireErrorCaught(failure)
        context.close(promise: nil)
    }
}
