import LightOrganCore
import Logging
package import NIOCore
package import NIOWebSocket

/// One page's `/live` socket: pushes the lamps and the status, takes settings and wiring checks.
///
/// The lamps are pushed when the receiver shows a new frame (``PageBackend/watchLamps(_:_:)``), at
/// most ``lampRate`` a second on average (a token bucket holding two: a sender at 50 frames/s gets
/// 40 pushes, one at 100 gets 40, one at 30 all 30); a frame that finds no token is left for the
/// next frame, which pushes the newest levels in its own wake-up, and the ``tickInterval`` timer
/// sends what no later frame carried
/// (the last of a burst: the lamps going dark), and the lamps once a second when nothing changed;
/// the status every ``ticksPerStatus`` ticks. (A one-shot timer per skipped frame would cost the
/// wake-ups this saves: SwiftNIO leaves a cancelled timer's timerfd armed.) Both only while the connection is writable: a page that reads
/// slowly simply skips levels — newest wins — and nothing it does reaches the lines, which are
/// driven before the page is told. On the receiver's own event loop a push is one write in the
/// wake-up that showed the frame: no timer wakes 40 times a second per page.
package final class LiveSocketHandler: ChannelInboundHandler {
    package typealias InboundIn = WebSocketFrame
    package typealias OutboundOut = WebSocketFrame

    /// Lamp updates per second, at most (each is a TLS record and a write: the page's cost on the Pi
    /// grows with it; 40 a second is smooth for a flash and leaves room above the 30 a page needs).
    static let lampRate: Int64 = 40
    /// How often the lamps are checked for a change no frame carried.
    package static let tickInterval = TimeAmount.milliseconds(100)
    /// Ticks between two status messages (every 0.5 s).
    static let ticksPerStatus = 5
    /// Messages a page may send per second (a person clicks a few; each setting is written to disk).
    package static let messagesPerSecond = 20

    private let socket: PageSocketContext
    private var backend: any PageBackend { socket.backend }
    private var logger: Logger { socket.logger }
    private var timer: RepeatedTask?
    private var ticks = 0
    private var lastGeneration: UInt64 = .max
    private var lastLampsSent = NIODeadline.uptimeNanoseconds(0)
    /// Pushes the rate allows now (0…2), as of `tokensCounted`.
    private var lampTokens = 2.0
    private var tokensCounted = NIODeadline.now()
    private var greeted = false
    private var mayControl = false
    private var windowStart = NIODeadline.now()
    private var messagesInWindow = 0

    package init(socket: PageSocketContext) {
        self.socket = socket
    }

    package func handlerAdded(context: ChannelHandlerContext) {
        let bound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        timer = context.eventLoop.scheduleRepeatedTask(initialDelay: .zero, delay: Self.tickInterval) { _ in
            let (handler, context) = bound.value
            handler.tick(context: context)
        }
        let loop = context.eventLoop
        backend.watchLamps(ObjectIdentifier(self)) {
            if loop.inEventLoop {
                let (handler, context) = bound.value
                handler.lampsChanged(context: context)
            } else {
                loop.execute {
                    let (handler, context) = bound.value
                    handler.lampsChanged(context: context)
                }
            }
        }
    }

    package func handlerRemoved(context: ChannelHandlerContext) { stop() }

    package func channelInactive(context: ChannelHandlerContext) {
        stop()
        context.fireChannelInactive()
    }

    private func stop() {
        backend.unwatchLamps(ObjectIdentifier(self))
        timer?.cancel()
        timer = nil
    }

    private func tick(context: ChannelHandlerContext) {
        ticks += 1
        guard context.channel.isActive, context.channel.isWritable else { return }  // newest wins: skip, never queue
        if ticks % Self.ticksPerStatus == 1 { context.sendText(backend.statusJSON()) }
        // A change no frame carried, or a second without one: the lamps as they are.
        let quiet = NIODeadline.now() - lastLampsSent >= .seconds(1)
        if quiet || mayPushLamps() { sendLamps(context: context, evenIfUnchanged: quiet) }
    }

    /// Whether the rate allows a push now (a token is there).
    private func mayPushLamps() -> Bool {
        let now = NIODeadline.now()
        let elapsed = Double((now - tokensCounted).nanoseconds) / 1e9
        tokensCounted = now
        lampTokens = min(2, lampTokens + elapsed * Double(Self.lampRate))
        return lampTokens >= 1
    }

    /// A new frame was shown: push it if the rate allows, else leave it to the next frame or tick.
    private func lampsChanged(context: ChannelHandlerContext) {
        guard context.channel.isActive, mayPushLamps() else { return }
        sendLamps(context: context, evenIfUnchanged: false)
    }

    private func sendLamps(context: ChannelHandlerContext, evenIfUnchanged: Bool) {
        guard context.channel.isActive, context.channel.isWritable else { return }  // newest wins: skip, never queue
        let (levels, generation) = backend.lampLevels()
        guard evenIfUnchanged || generation != lastGeneration else { return }
        lastGeneration = generation
        lastLampsSent = .now()
        lampTokens = max(0, lampTokens - 1)
        // Three levels, then the strip's pixels when there is a strip (3 bytes each).
        let pixels = backend.stripPreview()
        context.sendBinary(pixels.isEmpty ? levels : levels + pixels)
    }

    package func channelRead(context: ChannelHandlerContext, data: NIOAny) {
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
            context.closeSocket(
                PageProtocolError(.policyViolation, "more than \(Self.messagesPerSecond) messages a second"))
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
                logger.warning(
                    "page: \(context.channel.remoteAddress.map(PageServer.describe) ?? "?") gave a wrong key")
                context.closeSocket(PageProtocolError(.wrongKey, "wrong key"))
                return
            }
            greeted = true
            mayControl = !key.isEmpty
            socket.connections.greeted(socket.id, withKey: mayControl)
            logger.info(
                "page: \(context.channel.remoteAddress.map(PageServer.describe) ?? "?") opened the page (\(mayControl ? "with the key" : "to look"))"
            )
            context.sendText(PageReply.hello(control: mayControl).json())
            context.sendText(backend.statusJSON())
        case .set(let id, let key, let value):
            guard controlAllowed(context) else { return }
            answer(context, id: id, key: key, backend.set(key, to: value), saying: "")
        case .useFileValue(let id, let key):
            guard controlAllowed(context) else { return }
            answer(context, id: id, key: key, backend.useFileValue(key), saying: " (the settings file's value again)")
        case .check(let id, let line):
            guard controlAllowed(context) else { return }
            switch backend.check(line: line) {
            case .success:
                context.sendText(PageReply.check(id: id, line: line).json())
            case .failure(let refusal):
                context.sendText(PageReply.check(id: id, refused: refusal.message).json())
            }
            context.sendText(backend.statusJSON())
        case .checkStrip(let id):
            guard controlAllowed(context) else { return }
            switch backend.checkStrip() {
            case .success:
                context.sendText(PageReply.check(id: id, line: nil).json())
            case .failure(let refusal):
                context.sendText(PageReply.check(id: id, refused: refusal.message).json())
            }
            context.sendText(backend.statusJSON())
        }
    }

    /// Answers a setting's change: the value applied (logged, with `saying`) or why not; then the status.
    private func answer(
        _ context: ChannelHandlerContext, id: Int, key: String, _ result: Result<String, PageRefusal>, saying: String
    ) {
        switch result {
        case .success(let applied):
            context.sendText(PageReply.set(id: id, key: key, value: applied).json())
            logger.info("page: \(key) = \(applied)\(saying)")
        case .failure(let refusal):
            context.sendText(PageReply.set(id: id, key: key, refused: refusal.message).json())
        }
        context.sendText(backend.statusJSON())
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

    package func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }
}
