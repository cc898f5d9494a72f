import NIOCore
import NIOHTTP1
import NIOWebSocket

/// Answers the plain HTTP requests of a page connection: the compiled-in files (``PageAssets``), 404 for
/// anything else, 403 for a WebSocket handshake the ``OriginPolicy`` refused (it arrives here
/// as a normal request). Nothing is read from disk.
final class PageHTTPHandler: ChannelInboundHandler, RemovableChannelHandler, Sendable {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    /// The headers of every response: our own scripts only, sockets to ourselves (named as
    /// `wss://host` too: older Safari does not count wss: as 'self'), no framing, no referrer.
    static func securityHeaders(host: String?) -> [(String, String)] {
        let socket =
            host.flatMap { $0.allSatisfy { $0.isLetter || $0.isNumber || ".-:[]".contains($0) } ? " wss://\($0)" : nil }
            ?? ""
        return [
            (
                "Content-Security-Policy",
                "default-src 'self'; script-src 'self'; style-src 'self'; connect-src 'self'\(socket); img-src 'self' data:; frame-ancestors 'none'; base-uri 'none'; form-action 'none'"
            ),
            ("X-Content-Type-Options", "nosniff"),
            ("Referrer-Policy", "no-referrer"),
            ("Cache-Control", "no-store"),
            ("Permissions-Policy", "microphone=(self), display-capture=(self)"),
        ]
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard case .head(let head) = unwrapInboundIn(data) else { return }
        let path = head.uri.split(separator: "?").first.map(String.init) ?? head.uri
        let (status, type, body): (HTTPResponseStatus, String, [UInt8]) =
            switch (head.method, PageAssets.files[path]) {
            case (.GET, let file?), (.HEAD, let file?): (.ok, file.type, file.bytes)
            case _ where path == "/live" || path == "/audio":
                (
                    .forbidden, "text/plain; charset=utf-8",
                    Array("WebSocket refused: it must come from this receiver's own page (Origin)\n".utf8)
                )
            case (.GET, nil), (.HEAD, nil): (.notFound, "text/plain; charset=utf-8", Array("not found\n".utf8))
            default: (.methodNotAllowed, "text/plain; charset=utf-8", Array("only GET\n".utf8))
            }
        var headers = HTTPHeaders(Self.securityHeaders(host: head.headers.first(name: "host")))
        headers.add(name: "Content-Type", value: type)
        headers.add(name: "Content-Length", value: String(body.count))
        // One request per connection: SwiftNIO's upgrade handler looks at a connection's first request
        // only, so a WebSocket handshake must never come second on a kept-alive connection.
        headers.add(name: "Connection", value: "close")
        context.write(
            wrapOutboundOut(.head(HTTPResponseHead(version: head.version, status: status, headers: headers))),
            promise: nil)
        if head.method != .HEAD {
            context.write(
                wrapOutboundOut(.body(.byteBuffer(context.channel.allocator.buffer(bytes: body)))), promise: nil)
        }
        let done = context.writeAndFlush(wrapOutboundOut(.end(nil)))
        let bound = NIOLoopBound(context, eventLoop: context.eventLoop)
        done.whenComplete { _ in bound.value.close(promise: nil) }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        // A refused WebSocket upgrade (wrong path or Origin) arrives as this error, then as a plain
        // request, which gets its 403 above.
        if error is NIOWebSocketUpgradeError { return }
        context.close(promise: nil)
    }
}
