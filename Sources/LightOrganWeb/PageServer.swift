import LightOrganCore
public import Logging
public import NIOCore
import NIOHTTP1
import NIOPosix
import NIOWebSocket

/// The receiver's page: HTTPS for the page itself, WSS for `/live` (lamps, status, settings,
/// wiring check) and `/audio` (a browser as the sound source).
///
/// Pipeline of a connection: ``TLSSniffer`` (plain HTTP gets a redirect to HTTPS and nothing else),
/// then TLS → HTTP/1.1 → either ``PageHTTPHandler`` (the compiled-in files, ``PageAssets``) or, after a WebSocket upgrade that passed the ``OriginPolicy``, a frame aggregator and
/// ``LiveSocketHandler`` or ``SoundSocketHandler``. Clients outside `receiver.allow` are closed
/// on accept; the others are admitted by ``PageConnections`` (``PageAdmission``: limits per address
/// and in all, short handshake and hello timeouts, room made by closing connections without the key),
/// so that strangers on the LAN cannot keep the owner out.
public final class PageServer: Sendable {
    /// Largest WebSocket message accepted, bytes (a sound message of ``BrowserAudioStream/maximumSamples``).
    public static let maximumMessageBytes = BrowserAudioStream.maximumSamples * 4

    /// The bound listening channel.
    public let channel: any Channel
    /// The port the page listens on (the kernel's choice when `page.port` is 0).
    public let port: Int

    private init(channel: any Channel) {
        self.channel = channel
        self.port = channel.localAddress?.port ?? 0
    }

    /// Binds the page's port at once, so a port in use is an error before anything runs.
    ///
    /// - Throws: ``PageError`` saying which address and port and what to do.
    public static func bind(
        host: String, port: Int, certificate: PageCertificate, backend: any PageBackend, logger: Logger
    ) async throws(PageError) -> PageServer {
        let context = certificate.context
        let connections = PageConnections(logger: logger)
        // On the receiver's event loop, with the frames: a page is told of new lamps in the frame's wake-up.
        let bootstrap = ServerBootstrap(group: backend.lampLoop)
            .serverChannelOption(.backlog, value: 64)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelOption(.tcpOption(.tcp_nodelay), value: 1)
            // Newest wins: a page that stops reading stops being written to within 64 KiB.
            .childChannelOption(.writeBufferWaterMark, value: .init(low: 8 * 1024, high: 64 * 1024))
            .childChannelInitializer { channel in
                let address = channel.remoteAddress?.ipAddress ?? "?"
                guard backend.mayLook(address) else {
                    logger.debug("page: refused \(address): not in receiver.allow")
                    return channel.close()
                }
                guard let id = connections.admit(channel, address: address) else { return channel.close() }
                return channel.eventLoop.makeCompletedFuture {
                    try configure(
                        channel, id: id, connections: connections, tls: context, backend: backend, logger: logger)
                }
            }
        do {
            let channel = try await bootstrap.bind(host: host, port: port).get()
            return PageServer(channel: channel)
        } catch {
            throw PageError(
                "page: cannot listen on \(host):\(port) (\(error)); choose another page.port, or page.enabled: false to serve no page"
            )
        }
    }

    private static func configure(
        _ channel: any Channel, id: PageAdmission.ConnectionID, connections: PageConnections, tls: TLSServerContext,
        backend: any PageBackend, logger: Logger
    ) throws {
        let socket = PageSocketContext(id: id, connections: connections, backend: backend, logger: logger)
        try channel.pipeline.syncOperations.addHandler(
            TLSSniffer(
                tls: { pipeline in try configureTLS(pipeline, channel: channel, tls: tls, socket: socket) },
                plain: { pipeline in
                    try pipeline.configureHTTPServerPipeline(withErrorHandling: true)
                    try pipeline.addHandler(HTTPSRedirectHandler())
                }))
    }

    /// TLS → HTTP/1.1 → the page's files, or a WebSocket after an upgrade.
    private static func configureTLS(
        _ pipeline: ChannelPipeline.SynchronousOperations, channel: any Channel, tls: TLSServerContext,
        socket: PageSocketContext
    ) throws {
        try pipeline.addHandler(TLSServerHandler(context: tls))
        let files = PageHTTPHandler()
        let upgrader = NIOWebSocketServerUpgrader(
            maxFrameSize: maximumMessageBytes,
            automaticErrorHandling: true,
            shouldUpgrade: { channel, head in
                let path = head.uri.split(separator: "?").first.map(String.init) ?? head.uri
                guard path == "/live" || path == "/audio",
                    OriginPolicy.allows(
                        origin: head.headers.first(name: "origin"), host: head.headers.first(name: "host"))
                else {
                    return channel.eventLoop.makeSucceededFuture(nil)
                }
                return channel.eventLoop.makeSucceededFuture(HTTPHeaders())
            },
            upgradePipelineHandler: { channel, head in
                socket.connections.upgraded(socket.id, channel: channel)
                return channel.eventLoop.makeCompletedFuture {
                    let sync = channel.pipeline.syncOperations
                    try sync.addHandler(
                        NIOWebSocketFrameAggregator(
                            minNonFinalFragmentSize: 0, maxAccumulatedFrameCount: 64,
                            maxAccumulatedFrameSize: maximumMessageBytes))
                    let peer = channel.remoteAddress.map(PageServer.describe) ?? "?"
                    if head.uri.hasPrefix("/audio") {
                        try sync.addHandler(SoundSocketHandler(socket: socket, peer: peer))
                    } else {
                        try sync.addHandler(LiveSocketHandler(socket: socket))
                    }
                }
            })
        try pipeline.configureHTTPServerPipeline(
            withServerUpgrade: (
                upgraders: [upgrader],
                completionHandler: { context in
                    context.pipeline.syncOperations.removeHandler(files, promise: nil)
                }
            ))
        try pipeline.addHandler(files)
    }

    /// `192.168.1.5:50123`, `[fd00::5]:50123`.
    static func describe(_ address: SocketAddress) -> String {
        let ip = address.ipAddress ?? "?"
        let port = address.port.map(String.init) ?? "?"
        return ip.contains(":") ? "[\(ip)]:\(port)" : "\(ip):\(port)"
    }

    /// Stops accepting; open connections close with the event loop's shutdown.
    public func close() async {
        try? await channel.close()
    }
}

/// What a page connection's handlers share: its number under ``PageConnections``, and the backend.
package struct PageSocketContext: Sendable {
    let id: PageAdmission.ConnectionID
    let connections: PageConnections
    let backend: any PageBackend
    let logger: Logger

    package init(id: PageAdmission.ConnectionID, connections: PageConnections, backend: any PageBackend, logger: Logger)
    {
        self.id = id
        self.connections = connections
        self.backend = backend
        self.logger = logger
    }
}
