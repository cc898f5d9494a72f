public import LightOrganCore
public import LightOrganNetwork
public import Logging
import NIOCore
public import ServiceLifecycle

/// `lightorgan receive`: accepts senders on TCP and shows their frames on an output.
///
/// Data flow: socket → ``FrameListener`` (per connection: bytes → newest complete frame of each
/// read) → ``LampSwitchboard`` (``SenderArbiter``: one active sender, takeover, allow list,
/// connection limit, idle and flood cut-offs) → ``LevelOutput`` (and the `receiver.forward`
/// lighting targets beside it, after `receiver.delay` like the lines). A sweep a few times per lamp
/// timeout, on the listener's event loop (the thread that is awake for the frames anyway),
/// turns the lamps off when the active sender goes quiet; a statistics line is logged
/// every `receiver.stats_interval`. On graceful shutdown (SIGINT/SIGTERM) it stops accepting,
/// turns every lamp off, closes the connections and returns.
public struct ReceiverService: Service {
    /// The bound listening socket.
    public let listener: FrameListener
    private let switchboard: LampSwitchboard
    private let rules: ReceiverRules
    private let statsInterval: Duration?
    private let lighting: LightingOutputs?
    private let logger: Logger

    /// Binds the listening socket at once, so that errors (port in use…) come before anything runs
    /// and the bound port is known (``FrameListener/port``) when `receiver.port` is 0.
    public static func bind(
        settings: ReceiverSettings, output: any LevelOutput, lighting: LightingOutputs? = nil, logger: Logger
    ) async throws -> ReceiverService {
        var shown = output
        if let lighting, !lighting.transmitters.isEmpty {
            shown = ForwardingOutput(output: output, lighting: lighting)
        }
        if settings.delayMilliseconds > 0 {
            shown = DelayedOutput(wrapping: shown, delay: .milliseconds(Int64(settings.delayMilliseconds))) { error in
                logger.error("output failed: \(error)")
            }
            logger.info("every frame is shown \(settings.delayMilliseconds) ms after it arrives (receiver.delay)")
        }
        let switchboard = LampSwitchboard(output: shown, rules: settings.rules, logger: logger)
        let listener = try await FrameListener.bind(host: settings.bind, port: settings.port, sink: switchboard)
        let allowed = settings.allow.isEmpty ? "everyone" : settings.allow.map(\.description).joined(separator: ", ")
        logger.info(
            "listening on \(settings.bind):\(listener.port) for senders (allow \(allowed), at most \(settings.maxConnections) connections); output: \(settings.output)")
        let interval = settings.statsInterval > 0 ? Duration.milliseconds(Int64(settings.statsInterval * 1000)) : nil
        return ReceiverService(
            listener: listener, switchboard: switchboard, rules: settings.rules, statsInterval: interval, lighting: lighting,
            logger: logger)
    }

    /// The TCP port it listens on (the kernel's choice when `receiver.port` is 0).
    public var port: Int { listener.port }

    private init(
        listener: FrameListener, switchboard: LampSwitchboard, rules: ReceiverRules, statsInterval: Duration?,
        lighting: LightingOutputs?, logger: Logger
    ) {
        self.lighting = lighting
        self.listener = listener
        self.switchboard = switchboard
        self.rules = rules
        self.statsInterval = statsInterval
        self.logger = logger
    }

    public func run() async throws {
        let period = min(rules.lampTimeout / 4, .milliseconds(100))
        let sweeping = listener.channel.eventLoop.scheduleRepeatedTask(
            initialDelay: TimeAmount(period), delay: TimeAmount(period)
        ) { [switchboard] _ in switchboard.sweep() }
        await withDiscardingTaskGroup { group in
            if let statsInterval { group.addTask { await logStatistics(every: statsInterval) } }
            try? await gracefulShutdown()  // returns on SIGINT/SIGTERM, throws when cancelled
            group.cancelAll()
        }
        sweeping.cancel()
        await listener.close()
        switchboard.shutDown()
        logger.info("receiver stopped; lamps off")
    }

    private func logStatistics(every interval: Duration) async {
        while (try? await Task.sleep(for: interval)) != nil {
            let (counters, active, open) = switchboard.takeStatistics()
            var line = StatisticsLine.receiver(counters, interval: interval, activePeer: active, openConnections: open)
            for transmitter in lighting?.transmitters ?? [] { line += "; \(transmitter.takeStatistics())" }
            logger.info("\(line)")
        }
    }
}
