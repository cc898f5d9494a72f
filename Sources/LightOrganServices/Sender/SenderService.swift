public import LightOrganCore
import LightOrganNetwork
public import Logging
public import ServiceLifecycle
import Synchronization

/// `lightorgan send`: analyses audio in real time and streams frames to one or more receivers over
/// TCP, and to lighting devices (sACN, Art-Net, DDP) through ``LightingOutputs``.
///
/// Data flow: ``AudioSource`` → ``FrameStream`` (crossovers, envelopes, AGC, speaker delay; one
/// frame per 1/`sender.fps` s of audio, newest wins) → every ``ReceiverConnection`` → ``FrameSocket``
/// (3 bytes, newest wins, TCP_NODELAY). The thread that made a frame sends it, so a frame costs
/// one wake-up and a `send(2)` per receiver, nothing more.
/// Each receiver has its own connection and reconnect loop; the analysis never waits for any of
/// them. A statistics line is logged every `sender.stats_interval`.
/// On graceful shutdown or at the end of the audio every receiver gets an all-off frame (so even
/// a 2016 receiver goes dark) and the connections close.
public struct SenderService: Service {
    /// Starts the frames into a delivery; returns a function that ends them.
    public typealias FrameSource = @Sendable (FrameStream.Delivery) -> @Sendable () -> Void

    private let settings: SenderSettings
    private let locators: [any ReceiverLocator]
    private let makeFrames: FrameSource
    private let lighting: LightingOutputs?
    private let logger: Logger

    /// A sender that analyses `source` and streams to `receivers` (nil: the fixed addresses of
    /// `settings`; a ``DiscoveryLocator`` when `sender.host` is `auto`).
    public init(
        settings: SenderSettings, analysis: AnalysisParameters = .standard, source: any AudioSource,
        receivers: [any ReceiverLocator]? = nil, lighting: LightingOutputs? = nil, logger: Logger
    ) {
        let fps = settings.framesPerSecond
        self.init(settings: settings, receivers: receivers, lighting: lighting, logger: logger) { delivery in
            FrameStream.start(
                source: source, framesPerSecond: fps, parameters: analysis, delay: settings.delay, logger: logger,
                into: delivery)
        }
        logger.debug("analysing \(source.format) audio into \(fps) frames/s")
    }

    /// A sender of ready-made frames (benchmarks, tests).
    public init(
        settings: SenderSettings, receivers: [any ReceiverLocator]? = nil, lighting: LightingOutputs? = nil,
        logger: Logger,
        frames: @escaping FrameSource
    ) {
        self.settings = settings
        self.locators = receivers ?? settings.receivers.map(FixedReceiver.init)
        self.lighting = lighting
        self.makeFrames = frames
        self.logger = logger
    }

    public func run() async throws {
        let targets = locators.map { ReceiverConnection(locator: $0, logger: logger) }
        let made = FrameCounter()
        let stopper = Stopper()
        var failure: (any Error)?
        // On SIGINT/SIGTERM the frames end, wherever the task below waits.
        await withGracefulShutdownHandler {
            await withDiscardingTaskGroup { group in
                for target in targets { group.addTask { await target.keepConnected() } }
                if settings.statsInterval > 0 {
                    let interval = Duration.milliseconds(Int64(settings.statsInterval * 1000))
                    group.addTask { await logStatistics(targets, made: made, every: interval) }
                }
                // Cancelled (not shut down gracefully): the frames stop too.
                failure = await withTaskCancellationHandler {
                    await withCheckedContinuation { finished in
                        let delivery = FrameStream.Delivery { frame in
                            made.count.add(1, ordering: .relaxed)
                            for target in targets { target.send(frame) }
                            lighting?.show(frame)
                        } finished: { error in
                            finished.resume(returning: error)
                        }
                        stopper.set(makeFrames(delivery))
                    }
                } onCancel: {
                    stopper.stop()
                }
                await withDiscardingTaskGroup { finishing in
                    for target in targets { finishing.addTask { await target.finish() } }
                    if let lighting { finishing.addTask { lighting.stop() } }
                }
                group.cancelAll()
            }
        } onGracefulShutdown: {
            stopper.stop()
        }
        logger.info(Task.isShuttingDownGracefully ? "stopping; connections closed" : "end of audio; connections closed")
        if let failure { throw failure }
    }

    private func logStatistics(_ targets: [ReceiverConnection], made: FrameCounter, every interval: Duration) async {
        var reported = 0
        while (try? await Task.sleep(for: interval)) != nil {
            let total = made.count.load(ordering: .relaxed)
            defer { reported = total }
            var line = StatisticsLine.sender(
                framesMade: total - reported, interval: interval, targets: targets.map { $0.takeStatistics() })
            for transmitter in lighting?.transmitters ?? [] { line += "; \(transmitter.takeStatistics())" }
            logger.info("\(line)")
        }
    }
}

/// Frames made so far, counted by the thread making them and read by the statistics task.
private final class FrameCounter: Sendable {
    let count = Atomic<Int>(0)
}

/// The function that stops the frames, which may be asked for before it exists (a signal during start).
private final class Stopper: Sendable {
    private let state = Mutex<(stop: (@Sendable () -> Void)?, wanted: Bool)>((nil, false))

    func set(_ stop: @escaping @Sendable () -> Void) {
        let wanted = state.withLock { state in
            state.stop = stop
            return state.wanted
        }
        if wanted { stop() }
    }

    func stop() {
        let stop = state.withLock { state in
            state.wanted = true
            return state.stop
        }
        stop?()
    }
}
