public import LightOrganCore
import LightOrganNetwork
public import Logging
import NIOCore
public import ServiceLifecycle

/// `lightorgan send`: analyses audio in real time and streams frames to a receiver over TCP.
///
/// Data flow: ``AudioSource`` → ``FrameStream`` (crossovers, envelopes, AGC; one frame per
/// 1/`sender.fps` s of audio, newest wins) → 3 bytes → TCP (``FrameLink``, TCP_NODELAY).
/// When the receiver is not there, it retries with backoff (0.25 s doubling to 2 s) and logs once
/// per change of state, while the analysis goes on. On graceful shutdown or at the end of the
/// audio it sends an all-off frame (so even a 2016 receiver goes dark) and closes cleanly.
public struct SenderService: Service {
    private let settings: SenderSettings
    private let analysis: AnalysisParameters
    private let source: any AudioSource
    private let logger: Logger

    public init(
        settings: SenderSettings, analysis: AnalysisParameters = .standard, source: any AudioSource, logger: Logger
    ) {
        self.settings = settings
        self.analysis = analysis
        self.source = source
        self.logger = logger
    }

    public func run() async throws {
        let (stream, stop) = FrameStream.start(
            source: source, framesPerSecond: settings.framesPerSecond, parameters: analysis, logger: logger)
        // On SIGINT/SIGTERM the frames end, wherever the loop below waits.
        try await withGracefulShutdownHandler {
            try await send(stream)
        } onGracefulShutdown: {
            stop()
        }
    }

    private func send(_ stream: AsyncThrowingStream<LevelFrame, any Error>) async throws {
        let format = source.format
        var frames = stream.makeAsyncIterator()
        var backoff = Duration.milliseconds(250)
        var lastFailure: String?
        var ended = false

        while !Task.isShuttingDownGracefully, !Task.isCancelled, !ended {
            let link: FrameLink
            do {
                link = try await FrameLink.connect(host: settings.host, port: settings.port)
            } catch {
                let message = "\(error)"
                if message != lastFailure {
                    logger.warning("\(message); retrying until it answers")
                    lastFailure = message
                }
                do {
                    try await cancelWhenGracefulShutdown { [backoff] in try await Task.sleep(for: backoff) }
                } catch {
                    break  // shut down while waiting to retry
                }
                backoff = min(backoff * 2, .seconds(2))
                continue
            }
            backoff = .milliseconds(250)
            lastFailure = nil
            logger.info("streaming \(format) audio as \(settings.framesPerSecond) frames/s to \(link.remoteDescription)")
            do {
                try await link.channel.executeThenClose { _, outbound in
                    var buffer = link.channel.channel.allocator.buffer(capacity: LevelFrame.byteCount)
                    while true {
                        guard let frame = try await frames.next() else {
                            ended = true
                            break
                        }
                        buffer.clear()
                        buffer.writeLevelFrame(frame)
                        try await outbound.write(buffer)
                    }
                    buffer.clear()
                    buffer.writeLevelFrame(.off)
                    try await outbound.write(buffer)
                }
                logger.info(Task.isShuttingDownGracefully ? "stopping; connection closed" : ended ? "end of audio; connection closed" : "connection closed")
            } catch is CancellationError {
                break
            } catch {
                logger.warning("connection to \(settings.host):\(settings.port) lost (\(error)); reconnecting")
            }
        }
    }
}
