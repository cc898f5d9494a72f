public import LightOrganCore
public import LightOrganNetwork
public import Logging
import NIOCore
public import ServiceLifecycle

/// `lightorgan receive`: accepts senders on TCP and shows their frames on an output.
///
/// Data flow: socket → ``LevelFrameDecoder`` (3-byte frames, any split) → ``LampController``
/// (last writer wins, off on disconnect/timeout/shutdown) → ``LevelOutput``.
/// On graceful shutdown (SIGINT/SIGTERM) it stops accepting, turns every lamp off and returns.
public struct ReceiverService: Service {
    /// The bound listening socket.
    public let listener: FrameListener
    private let lamps: LampController
    private let timeout: Duration
    private let logger: Logger

    /// Binds the listening socket at once, so that errors (port in use…) come before anything runs
    /// and the bound port is known (``FrameListener/port``) when `receiver.port` is 0.
    public static func bind(
        settings: ReceiverSettings, output: any LevelOutput, logger: Logger
    ) async throws -> ReceiverService {
        let listener = try await FrameListener.bind(host: settings.bind, port: settings.port)
        logger.info("listening on \(settings.bind):\(listener.port) for senders; output: \(settings.output)")
        let timeout = Duration.milliseconds(Int64((settings.timeout * 1000).rounded()))
        return ReceiverService(
            listener: listener, lamps: LampController(output: output, timeout: timeout, logger: logger),
            timeout: timeout, logger: logger)
    }

    /// The TCP port it listens on (the kernel's choice when `receiver.port` is 0).
    public var port: Int { listener.port }

    private init(listener: FrameListener, lamps: LampController, timeout: Duration, logger: Logger) {
        self.listener = listener
        self.lamps = lamps
        self.timeout = timeout
        self.logger = logger
    }

    public func run() async throws {
        var failure: (any Error)?
        do {
            try await cancelWhenGracefulShutdown {
                try await withThrowingDiscardingTaskGroup { group in
                    group.addTask { try await watchTimeout() }
                    try await listener.channel.executeThenClose { connections in
                        var nextID = 0
                        for try await connection in connections {
                            nextID += 1
                            let id = nextID
                            group.addTask { await serve(connection, id: id) }
                        }
                    }
                }
            }
        } catch is CancellationError {
        } catch {
            failure = error
        }
        await lamps.shutDown()
        logger.info("receiver stopped; lamps off")
        if let failure { throw failure }
    }

    private func serve(_ connection: FrameListener.FrameConnection, id: Int) async {
        let peer = connection.channel.remoteAddress.map { "\($0.ipAddress ?? "?"):\($0.port ?? 0)" } ?? "?"
        logger.info("sender \(peer) connected")
        var frames = 0
        do {
            try await connection.executeThenClose { inbound, _ in
                for try await frame in inbound {
                    frames += 1
                    await lamps.show(frame, from: id)
                }
            }
            logger.info("sender \(peer) disconnected after \(frames) frames")
        } catch is CancellationError {
        } catch {
            logger.info("sender \(peer) lost after \(frames) frames: \(error)")
        }
        await lamps.connectionEnded(id)
    }

    private func watchTimeout() async throws {
        while true {
            try await Task.sleep(for: min(timeout / 4, .milliseconds(100)))
            await lamps.expireIfIdle()
        }
    }
}
