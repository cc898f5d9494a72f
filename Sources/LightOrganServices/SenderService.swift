public import LightOrganCore
public import Logging
public import ServiceLifecycle
import Synchronization

/// `lightorgan send`: analyses audio in real time and streams frames to one or more receivers over TCP.
///
/// Data flow: ``AudioSource`` → ``FrameStream`` (crossovers, envelopes, AGC; one frame per
/// 1/`sender.fps` s of audio, newest wins) → every ``ReceiverTarget`` → ``FrameLink`` (3 bytes,
/// newest wins, TCP_NODELAY). Each receiver has its own connection and reconnect loop; the
/// analysis never waits for any of them. A statistics line is logged every `sender.stats_interval`.
/// On graceful shutdown or at the end of the audio every receiver gets an all-off frame (so even
/// a 2016 receiver goes dark) and the connections close.
public struct SenderService: Service {
    /// Starts the frames; returns them and a function that ends them.
    public typealias FrameSource = @Sendable () -> (frames: AsyncThrowingStream<LevelFrame, any Error>, stop: @Sendable () -> Void)

    private let settings: SenderSettings
    private let locators: [any ReceiverLocator]
    private let makeFrames: FrameSource
    private let logger: Logger

    /// A sender that analyses `source` and streams to `receivers` (nil: the fixed addresses of
    /// `settings`; a ``DiscoveryLocator`` when `sender.host` is `auto`).
    public init(
        settings: SenderSettings, analysis: AnalysisParameters = .standard, source: any AudioSource,
        receivers: [any ReceiverLocator]? = nil, logger: Logger
    ) {
        let fps = settings.framesPerSecond
        self.init(settings: settings, receivers: receivers, logger: logger) {
            FrameStream.start(source: source, framesPerSecond: fps, parameters: analysis, logger: logger)
        }
        logger.debug("analysing \(source.format) audio into \(fps) frames/s")
    }

    /// A sender of ready-made frames (benchmarks, tests).
    public init(
        settings: SenderSettings, receivers: [any ReceiverLocator]? = nil, logger: Logger, frames: @escaping FrameSource
    ) {
        self.settings = settings
        self.locators = receivers ?? settings.receivers.map(FixedReceiver.init)
        self.makeFrames = frames
        self.logger = logger
    }

    public func run() async throws {
        let (frames, stop) = makeFrames()
        let targets = locators.map { ReceiverTarget(locator: $0, logger: logger) }
        let made = FrameCounter()
        var failure: (any Error)?
        // On SIGINT/SIGTERM the frames end, wherever the loop below waits.
        await withGracefulShutdownHandler {
            await withDiscardingTaskGroup { group in
                for target in targets { group.addTask { await target.keepConnected() } }
                if settings.statsInterval > 0 {
                    let interval = Duration.milliseconds(Int64(settings.statsInterval * 1000))
                    group.addTask { await logStatistics(targets, made: made, every: interval) }
                }
                do {
                    for try await frame in frames {
                        made.count.add(1, ordering: .relaxed)
                        for target in targets { target.send(frame) }
                    }
                } catch {
                    failure = error
                }
                await withDiscardingTaskGroup { finishing in
                    for target in targets { finishing.addTask { await target.finish() } }
                }
                group.cancelAll()
            }
        } onGracefulShutdown: {
            stop()
        }
        logger.info(Task.isShuttingDownGracefully ? "stopping; connections closed" : "end of audio; connections closed")
        if let failure { throw failure }
    }

    private func logStatistics(_ targets: [ReceiverTarget], made: FrameCounter, every interval: Duration) async {
        var reported = 0
        while (try? await Task.sleep(for: interval)) != nil {
            let total = made.count.load(ordering: .relaxed)
            defer { reported = total }
            let line = StatisticsLine.sender(framesMade: total - reported, interval: interval, targets: targets.map { $0.takeStatistics() })
            logger.info("\(line)")
        }
    }
}

/// Frames made so far, counted by the sending loop and read by the statistics task.
private final class FrameCounter: Sendable {
    let count = Atomic<Int>(0)
}
