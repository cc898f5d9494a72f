import NIOCore

/// The first handler of a page connection: looks at the first byte the client sends and builds
/// the rest of the pipeline for what it speaks, then steps aside.
///
/// A TLS connection starts with a handshake record (content type 22, `0x16`); anything else is
/// taken for plain HTTP, which only ever gets a redirect (``HTTPSRedirectHandler``).
final class TLSSniffer: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer

    /// The first byte of a TLS record carrying a handshake.
    static let handshakeRecord: UInt8 = 0x16

    private let configureTLS: (ChannelPipeline.SynchronousOperations) throws -> Void
    private let configurePlain: (ChannelPipeline.SynchronousOperations) throws -> Void

    /// `configureTLS` / `configurePlain` add the handlers after this one, on the channel's event loop.
    init(
        tls configureTLS: @escaping (ChannelPipeline.SynchronousOperations) throws -> Void,
        plain configurePlain: @escaping (ChannelPipeline.SynchronousOperations) throws -> Void
    ) {
        self.configureTLS = configureTLS
        self.configurePlain = configurePlain
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let bytes = unwrapInboundIn(data)
        guard let first = bytes.getInteger(at: bytes.readerIndex, as: UInt8.self) else { return }
        do {
            try (first == Self.handshakeRecord ? configureTLS : configurePlain)(context.pipeline.syncOperations)
        } catch {
            context.close(promise: nil)
            return
        }
        // The handlers just added sit after this one: they get this read and every later one.
        context.fireChannelRead(data)
        context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
    }
}
