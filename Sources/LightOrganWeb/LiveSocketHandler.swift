import LightOrganCore
import Logging
import NIOCore
import NIOWebSocket

/// One page's `/live` socket: pushes the lamps and the status, takes settings and wiring checks.
///
/// Lamps are sent up to ``lampRate`` times a second and only when they changed (or once a second
/// to say they did not), the status every ``statusInterval``; both only while the connection is
/// writable. A page that reads slowly simply skips levels — newest wins — and nothing it does
/// reaches the thread that drives the lines: the levels are read from the backend's snapshot.
final class LiveSocketHandler: ChannelInboundHandler {
    typealias InboundIn = WebSocketFrame
    typealias OutboundOut = WebSocketFrame

    /// Lamp updates per second, at most (each is a TLS record and a write: the page's cost on the Pi
    /// grows with it; 40 a second is smooth for a flash and leaves room above the 30 a page needs).
    static let lampRate: Int64 = 40
    /// Lamp updates between two status messages (every 0.5 s).
    static let ticksPerStatus = Int(lampRate / 2)
    /// Messages a page may send per second (a person clicks a few; each setting is written to disk).
    static let messagesPerSecond = 20

    private let backend: any PageBackend
    private let logger: Logger
    private var timer: RepeatedTask?
    private var lastGeneration: UInt64 = .max
    private var ticksSinceLamps = 0
    private var ticks = 0
    private var greeted = false
    private var mayControl = false
    private var windowStart = NIODeadline.now()
    private var messagesInWindow = 0

    init(backend: any PageBackend, logger: Logger) {
        self.backend = backend
        self.logger = logger
    }

    func handlerAdded(context: ChannelHandlerContext) {
        let bound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        timer = context.eventLoop.scheduleRepeatedTask(
            initialDelay: .zero, delay: .nanoseconds(1_000_000_000 / Self.lampRate)
        ) { _ in
            let (handler, context) = bound.value
            handler.tick(context: context)
        }
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        timer?.cancel()
        timer = nil
    }

    func channelInactive(context: ChannelHandlerContext) {
        timer?.cancel()
        timer = nil
        context.fireChannelInactive()
    }

    private func tick(context: ChannelHandlerContext) {
        guard context.channel.isActive else { return }
        ticks += 1
        ticksSinceLamps += 1
        guard context.channel.isWritable else { return }  // newest wins: skip, never queue
        if ticks % Self.ticksPerStatus == 1 {
            context.sendText(backend.statusJSON())
        }
        let (levels, generation) = backend.lampLevels()
        if generation != lastGeneration || ticksSinceLamps >= Int(Self.lampRate) {
            lastGeneration = generation
            ticksSinceLamps = 0
            context.sendBinary(levels)
        }
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let frame = unwrapInboundIn(data)
        if context.answerControlFrame(frame) { return }
        guard frame.opcode == .text else {
            context.closeSocket(PageProtocolError(.unsupportedData, "this socket takes JSON text only"))
            return
        }
        let now = NIODeadline.now()
        if now - windowStart >= .seconds(1) {
            windowStart = now
            messagesInWindow = 0
        }
        messagesInWindow += 1
        guard messagesInWindow <= Self.messagesPerSecond else {
            context.closeSocket(PageProtocolError(.policyViolation, "more than \(Self.messagesPerSecond) messages a second"))
            return
        }
        let request: PageRequest
        do {
            request = try PageRequest.decode(frame.unmaskedData.readableBytesView)
        } catch {
            context.closeSocket(error)
            return
        }
        switch request {
        case .hello(let key):
            if !key.isEmpty, !backend.isSecret(key) {
                logger.warning("page: \(context.channel.remoteAddress.map(PageServer.describe) ?? "?") gave a wrong key")
                context.closeSocket(PageProtocolError(.wrongKey, "wrong key"))
                return
            }
            greeted = true
            mayControl = !key.isEmpty
            logger.info(
                "page: \(context.channel.remoteAddress.map(PageServer.describe) ?? "?") opened the page (\(mayControl ? "with the key" : "to look"))")
            context.sendText(PageReply.hello(control: mayControl).json())
            context.sendText(backend.statusJSON())
        case .set(let id, let key, let value):
            guard controlAllowed(context) else { return }
            switch backend.set(key, to: value) {
            case .success(let applied):
                context.sendText(PageReply.set(id: id, key: key, value: applied).json())
                logger.info("page: \(key) = \(applied)")
            case .failure(let refusal):
                context.sendText(PageReply.set(id: id, key: key, refused: refusal.message).json())
            }
            context.sendText(backend.statusJSON())
        case .check(let id, let line):
            guard controlAllowed(context) else { return }
            switch backend.check(line: line) {
            case .success:
                context.sendText(PageReply.check(id: id, line: line).json())
            case .failure(let refusal):
                context.sendText(PageReply.check(id: id, refused: refusal.message).json())
            }
            context.sendText(backend.statusJSON())
        }
    }

    /// Settings and checks need a page that said hello with the right key.
    private func controlAllowed(_ context: ChannelHandlerContext) -> Bool {
        guard greeted else {
            context.closeSocket(PageProtocolError(.policyViolation, "say hello first"))
            return false
        }
        guard mayControl else {
            context.closeSocket(PageProtocolError(.wrongKey, "changing the receiver needs the key"))
            return false
        }
        return true
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }
}
