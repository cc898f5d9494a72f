import LightOrganCore
import NIOCore
import NIOWebSocket

/// Writing the page's WebSocket messages: text, binary, close with a code and reason.
extension ChannelHandlerContext {
    /// Sends one text message (JSON).
    func sendText(_ text: String) {
        let frame = WebSocketFrame(fin: true, opcode: .text, data: channel.allocator.buffer(string: text))
        writeAndFlush(NIOAny(frame), promise: nil)
    }

    /// Sends one binary message.
    func sendBinary(_ bytes: [UInt8]) {
        let frame = WebSocketFrame(fin: true, opcode: .binary, data: channel.allocator.buffer(bytes: bytes))
        writeAndFlush(NIOAny(frame), promise: nil)
    }

    /// Sends a close frame with `code` and `reason`, then closes the connection.
    func closeSocket(_ error: PageProtocolError) {
        var data = channel.allocator.buffer(capacity: 2 + error.reason.utf8.count)
        data.writeInteger(error.code.rawValue)
        data.writeString(error.reason)
        let frame = WebSocketFrame(fin: true, opcode: .connectionClose, data: data)
        let bound = NIOLoopBound(self, eventLoop: eventLoop)
        writeAndFlush(NIOAny(frame)).whenComplete { _ in bound.value.close(promise: nil) }
    }

    /// Answers the protocol's housekeeping frames (ping, close); true when `frame` was one.
    func answerControlFrame(_ frame: WebSocketFrame) -> Bool {
        switch frame.opcode {
        case .ping:
            var reply = frame
            reply.opcode = .pong
            reply.maskKey = nil
            writeAndFlush(NIOAny(WebSocketFrame(fin: true, opcode: .pong, data: frame.unmaskedData)), promise: nil)
            return true
        case .pong:
            return true
        case .connectionClose:
            let bound = NIOLoopBound(self, eventLoop: eventLoop)
            writeAndFlush(
                NIOAny(WebSocketFrame(fin: true, opcode: .connectionClose, data: channel.allocator.buffer(capacity: 0)))
            )
            .whenComplete { _ in bound.value.close(promise: nil) }
            return true
        default:
            return false
        }
    }
}
