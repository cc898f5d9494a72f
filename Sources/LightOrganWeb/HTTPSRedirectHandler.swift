import LightOrganCore
import NIOCore
import NIOHTTP1

/// Answers a plain-HTTP request that reached the page's HTTPS port (someone typed
/// `http://raspberrypi.local:8443`) with `301` to the same address over HTTPS, then closes.
///
/// Nothing else is served in the clear: the page, its sockets and its secret only ever travel
/// over TLS. A request without a usable `Host` header gets `400` (``HTTPSRedirect``).
final class HTTPSRedirectHandler: ChannelInboundHandler, Sendable {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard case .head(let head) = unwrapInboundIn(data) else { return }
        var headers = HTTPHeaders([("Connection", "close"), ("Content-Length", "0"), ("Cache-Control", "no-store")])
        let status: HTTPResponseStatus
        if let location = HTTPSRedirect.location(host: head.headers.first(name: "host"), uri: head.uri) {
            status = .movedPermanently
            headers.add(name: "Location", value: location)
        } else {
            status = .badRequest
        }
        context.write(
            wrapOutboundOut(.head(HTTPResponseHead(version: head.version, status: status, headers: headers))),
            promise: nil)
        let done = context.writeAndFlush(wrapOutboundOut(.end(nil)))
        let bound = NIOLoopBound(context, eventLoop: context.eventLoop)
        done.whenComplete { _ in bound.value.close(promise: nil) }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }
}
