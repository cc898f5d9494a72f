public import LightOrganCore
import LightOrganDiscovery
public import LightOrganNetwork
import LightOrganOutput
public import LightOrganWeb
public import Logging
import NIOCore
import NIOPosix
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
    private let names: HostNameResolver?
    private let rules: ReceiverRules
    private let statsInterval: Duration?
    private let lighting: LightingOutputs?
    private let logger: Logger

    /// What the receiver's page needs (nil when `page.enabled` is false).
    public struct PageSetup: Sendable {
        /// The settings as loaded, with their sources (the page changes them).
        public var live: LiveSettings
        public var secret: PageSecret
        public var certificate: PageCertificate
        /// The GPIO chip as opened, for the page (nil for other outputs).
        public var chip: String?
        /// The name the receiver is published under.
        public var name: String

        public init(live: LiveSettings, secret: PageSecret, certificate: PageCertificate, chip: String?, name: String) {
            (self.live, self.secret, self.certificate, self.chip, self.name) = (live, secret, certificate, chip, name)
        }
    }

    /// The receiver's own sound (`receiver.sound`), opened: where it comes from and where it plays.
    public struct OwnSoundSetup: Sendable {
        public var input: any OwnSoundInput
        /// The device it plays on; nil: not played (a microphone, or `receiver.play: none`).
        public var player: (any SoundPlayer)?
        /// Without a player, whether frames are paced a little behind (an input that hands its
        /// audio over in blocks: AirPlay, a pipe) or shown at once (a microphone).
        public var pacesUnplayed: Bool
        /// Frames per second made of it, and how.
        public var framesPerSecond: Int
        public var analysis: AnalysisParameters
        public init(
            input: any OwnSoundInput, player: (any SoundPlayer)?, pacesUnplayed: Bool, framesPerSecond: Int,
            analysis: AnalysisParameters
        ) {
            (self.input, self.player, self.pacesUnplayed) = (input, player, pacesUnplayed)
            (self.framesPerSecond, self.analysis) = (framesPerSecond, analysis)
        }
    }

    /// How the receiver opens its own sound: at start with the settings as loaded, and again when
    /// the page changes `receiver.sound` or `receiver.play`.
    public struct OwnSoundSource: Sendable {
        public var settings: Settings
        /// Opens what `receiver.sound` and `receiver.play` name; nil for none (or when it cannot
        /// be opened: it says why in the log).
        public var open: @Sendable (Settings) -> OwnSoundSetup?
        public init(settings: Settings, open: @escaping @Sendable (Settings) -> OwnSoundSetup?) {
            (self.settings, self.open) = (settings, open)
        }
    }

    /// Binds the listening socket (and the page's) at once, so that errors (port in use…) come
    /// before anything runs and the bound port is known (``FrameListener/port``) when
    /// `receiver.port` is 0.
    ///
    /// The lamps' path: switchboard → ``DelayedOutput`` (`receiver.delay`, straight through at 0)
    /// → ``LampTap`` (the ``LightLook``, brightness limit, wiring check, what the page sees) → the lighting
    /// targets and the output. `analysis`: the idle look's settings (`analysis.idle`, `analysis.idle_after`).
    public static func bind(
        settings: ReceiverSettings, analysis: AnalysisParameters = .standard, output: any LevelOutput,
        lighting: LightingOutputs? = nil, page: PageSetup? = nil, sound: OwnSoundSource? = nil,
        home: HomeAssistantLink.Setup? = nil, logger: Logger
    ) async throws -> ReceiverService {
        var shown = output
        if let lighting, !lighting.transmitters.isEmpty {
            shown = ForwardingOutput(output: output, lighting: lighting)
        }
        let lines = Band.allCases.flatMap { band in
            (settings.lines[band] ?? []).map { LampTap.Line(band: band, offset: $0) }
        }
        // One event loop for the senders' sockets, the page's and the lamps: a frame shown there tells
        // the pages in the same wake-up (and a Pi's receiver has a single thread to wake).
        let loop = MultiThreadedEventLoopGroup.singleton.next()
        let look = LightLook(effect: settings.strip.effect, idle: analysis.idle, idleAfter: analysis.idleAfter)
        let tap = LampTap(
            output: shown, lines: lines, maxBrightness: settings.maxBrightness, dark: !settings.lightsOn, look: look,
            eventLoop: loop)
        if !settings.lightsOn { logger.info("the lights are off (receiver.lights: off): dark while senders play") }
        let delayed = DelayedOutput(
            wrapping: tap, delay: .milliseconds(Int64(settings.delayMilliseconds)), eventLoop: loop
        ) { error in
            logger.error("output failed: \(error)")
        }
        if settings.delayMilliseconds > 0 {
            logger.info("every frame is shown \(settings.delayMilliseconds) ms after it arrives (receiver.delay)")
        }
        // The page and the log name senders by their mDNS names where Avahi runs (none without it).
        let names = try? HostNameResolver()
        var lookup: HostNameLookup?
        if let names { lookup = { address, answer in names.lookUp(address, then: answer) } }
        let switchboard = LampSwitchboard(output: delayed, rules: settings.rules, nameLookup: lookup, logger: logger)
        let listener = try await FrameListener.bind(
            host: settings.bind, port: settings.port, sink: switchboard, group: loop)
        let ownSound = sound.map {
            OwnSoundSwitch(settings: $0.settings, open: $0.open, switchboard: switchboard, logger: logger)
        }
        let allowed = settings.allow.isEmpty ? "everyone" : settings.allow.map(\.description).joined(separator: ", ")
        logger.info(
            "listening on \(settings.bind):\(listener.port) for senders (allow \(allowed), at most \(settings.maxConnections) connections); output: \(settings.output)"
        )
        var server: PageServer?
        // The page and Home Assistant change the settings by one path: one control for both.
        var control: ReceiverControl?
        if let live = page?.live ?? home?.live {
            control = ReceiverControl(
                configuration: .init(
                    live: live, secret: page?.secret, port: listener.port, chip: page?.chip,
                    name: page?.name ?? home?.identity.name ?? settings.name),
                switchboard: switchboard, delayed: delayed, tap: tap, ownSound: ownSound, logger: logger)
        }
        if let page, let control {
            var pageSettings = page.live.settings.page
            if pageSettings.bind.isEmpty { pageSettings.bind = settings.bind }
            do {
                server = try await PageServer.bind(
                    host: pageSettings.bind, port: pageSettings.port, certificate: page.certificate, backend: control,
                    logger: logger)
            } catch {
                // The lamps are the receiver's job; the page is a window on them. Without it the
                // receiver still runs, and says why there is no page.
                logger.error("\(error); the receiver runs without its page")
            }
        }
        let interval = settings.statsInterval > 0 ? Duration.milliseconds(Int64(settings.statsInterval * 1000)) : nil
        let link = home.flatMap { setup in control.map { HomeAssistantLink(setup: setup, control: $0, logger: logger) }
        }
        return ReceiverService(
            listener: listener, switchboard: switchboard, names: names, rules: settings.rules, statsInterval: interval,
            lighting: lighting, page: server, ownSound: ownSound, home: link, logger: logger)
    }

    /// The page's server, when it serves one.
    public let page: PageServer?

    /// The TCP port it listens on (the kernel's choice when `receiver.port` is 0).
    public var port: Int { listener.port }

    private let ownSound: OwnSoundSwitch?
    /// The link to Home Assistant, when `mqtt.broker` is set.
    private let home: HomeAssistantLink?

    private init(
        listener: FrameListener, switchboard: LampSwitchboard, names: HostNameResolver?, rules: ReceiverRules,
        statsInterval: Duration?, lighting: LightingOutputs?, page: PageServer?, ownSound: OwnSoundSwitch?,
        home: HomeAssistantLink?, logger: Logger
    ) {
        self.ownSound = ownSound
        self.home = home
        (self.listener, self.switchboard, self.names, self.rules) = (listener, switchboard, names, rules)
        (self.statsInterval, self.lighting, self.page, self.logger) = (statsInterval, lighting, page, logger)
    }

    public func run() async throws {
        let period = min(rules.lampTimeout / 4, .milliseconds(100))
        let sweeping = listener.channel.eventLoop.scheduleRepeatedTask(
            initialDelay: TimeAmount(period), delay: TimeAmount(period)
        ) { [switchboard] _ in switchboard.sweep() }
        ownSound?.start()
        await withDiscardingTaskGroup { group in
            if let statsInterval { group.addTask { await logStatistics(every: statsInterval) } }
            if let home { group.addTask { await home.run() } }
            try? await gracefulShutdown()  // returns on SIGINT/SIGTERM, throws when cancelled
            group.cancelAll()
        }
        sweeping.cancel()
        ownSound?.stop()
        await page?.close()
        await listener.close()
        switchboard.shutDown()
        names?.close()
        logger.info("receiver stopped; lamps off")
    }

    private func logStatistics(every interval: Duration) async {
        while (try? await Task.sleep(for: interval)) != nil {
            let (counters, active, open) = switchboard.takeStatistics()
            var line = StatisticsLine.receiver(counters, interval: interval, activePeer: active, openConnections: open)
            for transmitter in lighting?.transmitters ?? [] { line += "; \(transmitter.takeStatistics())" }
            if let home { line += "; mqtt: \(home.takePublished()) messages published" }
            logger.info("\(line)")
        }
    }
}
