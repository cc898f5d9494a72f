import LightOrganCore
import Logging
package import NIOCore
package import NIOWebSocket

/// One page's `/audio` socket: a browser's microphone or tab audio as a sender.
///
/// The first message is the `start` text (secret, sample rate); then binary Float32 blocks,
/// checked by ``BrowserAudioStream`` (size, finite values, not faster than real time) and handed to
/// the backend's ``PageSoundSink``, which analyses them like `lightorgan send` and drives the lamps
/// by the same rules as any sender. A violation closes the socket with its reason; the lamps go
/// off when the socket closes, whoever closes it.
package final class SoundSocketHandler: ChannelInboundHandler {
    package typealias InboundIn = WebSocketFrame
    package typealias OutboundOut = WebSocketFrame

    private let socket: PageSocketContext
    private var backend: any PageBackend { socket.backend }
    private var logger: Logger { socket.logger }
    private let peer: String
    private var stream: BrowserAudioStream?
    private var sink: (any PageSoundSink)?
    private var samples: [Float] = []
    private let clock = ContinuousClock()
    private let origin = ContinuousClock.now

    package init(socket: PageSocketContext, peer: String) {
        self.socket = socket
        self.peer = peer
    }

    package func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let frame = unwrapInboundIn(data)
        if context.answerControlFrame(frame) { return }
        do {
            if var stream {
                guard frame.opcode == .binary else {
                    throw PageProtocolError(.unsupportedData, "after start, send binary Float32 samples only")
                }
                let now = (clock.now - origin) / .seconds(1)
                try stream.decode(frame.unmaskedData.readableBytesView, at: now, into: &samples)
                self.stream = stream
                sink?.play(samples)
            } else {
                guard frame.opcode == .text else {
                    throw PageProtocolError(.unsupportedData, "send the start message first")
                }
                let started = try BrowserAudioStream.begin(frame.unmaskedData.readableBytesView)
                guard backend.isSecret(started.start.key) else {
                    logger.warning("page: \(peer) tried to send sound with a wrong key")
                    throw PageProtocolError(.wrongKey, "wrong key")
                }
                let address = context.channel.remoteAddress?.ipAddress ?? "?"
                switch backend.openSound(started.start, address: address, peer: peer, channel: context.channel) {
                case .success(let sink):
                    socket.connections.startedSound(socket.id)
                    self.sink = sink
                    stream = started
                    context.sendText(PageReply.started.json())
                case .failure(let refusal):
                    throw PageProtocolError(.policyViolation, refusal.message)
                }
            }
        } catch let error as PageProtocolError {
            context.closeSocket(error)
        } catch {
            context.closeSocket(PageProtocolError(.invalidData, "\(error)"))
        }
    }

    package func channelInactive(context: ChannelHandlerContext) {
        sink?.stop()
        sink = nil
        context.fireChannelInactive()
    }

    package func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }
}
