public import LightOrganCore
import LightOrganNetwork
public import Logging
import NIOCore
public import ServiceLifecycle

/// `lightorgan send`: analyses audio in real time and streams frames to a receiver over TCP.
///
/// Data flow: ``AudioSource`` → ``FrameProducer`` (crossovers, envelopes, AGC) → one 3-byte frame
/// per tick at `sender.fps` → TCP (``FrameLink``, TCP_NODELAY). Ticks are on a fixed grid of the
/// monotonic clock, so the rate does not drift. When the receiver is not there, it retries with
/// backoff (0.25 s doubling to 2 s) and logs once per change of state. On graceful shutdown or at the
/// end of a file it sends an all-off frame (so even a 2016 receiver goes dark) and closes cleanly.
public struct SenderService: Service {
    private let settings: SenderSettings
    private let producer: FrameProducer
    private let logger: Logger

    public init(settings: SenderSettings, source: any AudioSource, logger: Logger) {
        self.settings = settings
        self.producer = FrameProducer(source: source)
        self.logger = logger
    }

    public func run() async throws {
        var producer = self.producer
        let clock = ContinuousClock()
        let start = clock.now
        let period = Duration.seconds(1) / settings.framesPerSecond
        var backoff = Duration.milliseconds(250)
        var lastFailure: String?

        while !Task.isShuttingDownGracefully, !Task.isCancelled, !producer.isFinished {
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
            logger.info(
                "streaming \(producer.source.format) audio as \(settings.framesPerSecond) frames/s to \(link.remoteDescription)")
            do {
                try await link.channel.executeThenClose { _, outbound in
                    var buffer = link.channel.channel.allocator.buffer(capacity: LevelFrame.byteCount)
                    var tick = Int(((clock.now - start) / period).rounded(.down))
                    while !Task.isShuttingDownGracefully, !Task.isCancelled {
                        tick += 1
                        try await clock.sleep(until: start + period * tick)
                        let audioTime = (clock.now - start) / .seconds(1)
                        guard let frame = try producer.frame(upTo: audioTime) else { break }
                        buffer.clear()
                        buffer.writeLevelFrame(frame)
                        try await outbound.write(buffer)
                    }
                    buffer.clear()
                    buffer.writeLevelFrame(.off)
                    try await outbound.write(buffer)
                }
                logger.info(producer.isFinished ? "end of audio; connection closed" : "connection closed")
            } catch is CancellationError {
                break
            } catch {
                logger.warning("connection to \(settings.host):\(settings.port) lost (\(error)); reconnecting")
            }
        }
    }
}
