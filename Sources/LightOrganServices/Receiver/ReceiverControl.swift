import FoundationEssentials
package import LightOrganCore
import LightOrganNetwork
package import LightOrganWeb
package import Logging
package import NIOCore
import Synchronization

/// The receiver as its page sees it: the ``PageBackend`` behind `/live` and `/audio`.
///
/// Settings the page changes are checked by ``LiveSettings`` (the settings file's rules and
/// messages), applied to the running parts at once — the mode and brightness limit to the
/// ``LampTap``, the delay to the ``DelayedOutput``, the timeout to the ``LampSwitchboard`` — and
/// kept in the page's file for the next start. Reads (status, levels) never take a lock the lines
/// wait on.
package final class ReceiverControl: PageBackend {
    /// The page's secret, the receiver's settings and what the page needs to show.
    package struct Configuration: Sendable {
        var live: LiveSettings
        /// The page's secret; nil without a page (Home Assistant alone changes the settings).
        var secret: PageSecret?
        var port: Int
        var chip: String?
        var name: String

        package init(live: LiveSettings, secret: PageSecret?, port: Int, chip: String?, name: String) {
            self.live = live
            self.secret = secret
            self.port = port
            self.chip = chip
            self.name = name
        }
    }

    private let configuration: Configuration
    private let live: Mutex<LiveSettings>
    private let switchboard: LampSwitchboard
    private let delayed: DelayedOutput
    private let tap: LampTap
    private let logger: Logger
    private let started = ContinuousClock.now
    private let cachedStatus = Mutex<(json: String, at: ContinuousClock.Instant)?>(nil)
    private let nextSoundID = Atomic<Int>(-1)
    private let cachedPreview = Mutex<(generation: UInt64, pixels: [UInt8])?>(nil)
    private let ownSound: OwnSoundSwitch?

    package init(
        configuration: Configuration, switchboard: LampSwitchboard, delayed: DelayedOutput, tap: LampTap,
        ownSound: OwnSoundSwitch? = nil, logger: Logger
    ) {
        self.configuration = configuration
        self.ownSound = ownSound
        self.live = Mutex(configuration.live)
        self.switchboard = switchboard
        self.delayed = delayed
        self.tap = tap
        self.logger = logger
    }

    package func mayLook(_ address: String) -> Bool {
        let allow = live.withLock { $0.settings.receiver.allow }
        return allow.isEmpty || allow.contains { $0.contains(address) }
    }

    package func isSecret(_ key: String) -> Bool { configuration.secret?.matches(key) ?? false }

    package func statusJSON() -> String {
        let now = ContinuousClock.now
        if let cached = cachedStatus.withLock({ $0 }), now - cached.at < .milliseconds(100) { return cached.json }
        let json = status().json()
        cachedStatus.withLock { $0 = (json, now) }
        return json
    }

    /// The status now.
    package func status() -> ReceiverStatus {
        let (settings, rows) = live.withLock { ($0.settings, $0.rows) }
        let receiver = settings.receiver
        let lines = tap.lines.map { ReceiverStatus.Line(band: $0.band, line: $0.offset) }
        var status = ReceiverStatus(
            receiver: .init(
                name: configuration.name, port: configuration.port, output: receiver.output.description,
                chip: configuration.chip, mode: receiver.mode.rawValue, lines: lines))
        if var strip = tap.strips.first {
            strip.effect = receiver.strip.effect
            status.receiver.strip = ReceiverStatus.Strip(strip)
        }
        status.checkingStrip = tap.checkingStrip
        status.uptime = (ContinuousClock.now - started) / .seconds(1)
        status.now = Date().timeIntervalSince1970
        let senders = switchboard.pageSummary()
        status.sender = senders.sender
        status.framesPerSecond = senders.framesPerSecond
        status.frameAge = senders.frameAge
        status.drops = senders.drops
        status.reconnects = senders.reconnects
        status.connections = senders.connections
        status.sound = ownSound?.status
        status.checking = tap.checking.map { ReceiverStatus.Line(band: $0.band, line: $0.offset) }
        (status.bpm, status.beat, status.place, status.phase) = tap.beat
        status.settings = rows
        return status
    }

    /// What Home Assistant's entities show now (``HomeReports``).
    package func homeSnapshot() -> HomeReports.Snapshot {
        let raw = live.withLock { ($0.settings.receiver, $0.raw) }
        let (receiver, values) = raw
        let senders = switchboard.pageSummary()
        let driver: String
        if let sender = senders.sender {
            switch sender.kind {
            case .own: driver = ownSound?.status ?? "own sound"
            case .browser: driver = "page: \(sender.name ?? sender.address)"
            default: driver = sender.name ?? sender.address
            }
        } else {
            driver = "nobody"
        }
        return HomeReports.Snapshot(
            lightsOn: receiver.lightsOn, brightness: receiver.maxBrightness, effect: receiver.strip.effect,
            sound: values["receiver.sound"]?.value ?? "network",
            palette: values["receiver.strip.palette"]?.value ?? "red, green, blue", driver: driver,
            framesPerSecond: senders.framesPerSecond, levels: tap.levels.frame, bpm: tap.beat.bpm)
    }

    /// The wiring check from Home Assistant's button: each line lit alone in turn for ``checkStep``, then the
    /// strip's own check when there is a strip. A frame arriving meanwhile waits, as for the page's check.
    package func checkEveryPart() {
        let lines = tap.lines
        let loop = tap.eventLoop
        for (index, line) in lines.enumerated() {
            loop.scheduleTask(in: TimeAmount(Self.checkStep * index)) { [tap] in try? tap.check(line.offset) }
        }
        loop.scheduleTask(in: TimeAmount(Self.checkStep * lines.count)) { [tap] in
            try? tap.check(nil)
            if !tap.strips.isEmpty { try? tap.checkStrip() }
        }
        cachedStatus.withLock { $0 = nil }
    }

    /// How long each line stays lit in ``checkEveryPart()``.
    package static let checkStep = Duration.milliseconds(1500)

    package func lampLevels() -> (levels: [UInt8], generation: UInt64) {
        let (frame, generation) = tap.levels
        return (frame.levels, generation)
    }

    package func stripPreview() -> [UInt8] {
        guard !tap.strips.isEmpty else { return [] }
        // Reduced once per frame shown, whatever the number of pages pushing it.
        let generation = tap.levels.generation
        if let cached = cachedPreview.withLock({ $0 }), cached.generation == generation { return cached.pixels }
        let preview = StripPreview.reduce(tap.stripPixels())
        cachedPreview.withLock { $0 = (generation, preview) }
        return preview
    }

    package func watchLamps(_ id: ObjectIdentifier, _ changed: @escaping @Sendable () -> Void) {
        tap.watch(id, changed)
    }

    package func unwatchLamps(_ id: ObjectIdentifier) { tap.unwatch(id) }

    package var lampLoop: any EventLoop { tap.eventLoop }

    package func set(_ key: String, to value: String) -> Result<String, PageRefusal> {
        change(key) { (live) throws(SettingsError) in try live.set(key, to: value) }
    }

    package func useFileValue(_ key: String) -> Result<String, PageRefusal> {
        change(key) { (live) throws(SettingsError) in try live.useFileValue(key) }
    }

    /// Changes `key` in the live settings with `body`, applies the result to the running receiver and
    /// keeps the page's file; the value now applied, or why not.
    private func change(
        _ key: String, _ body: (inout LiveSettings) throws(SettingsError) -> Settings
    ) -> Result<String, PageRefusal> {
        let outcome = live.withLock { live -> Result<(Settings, String, String), PageRefusal> in
            do {
                let settings = try body(&live)
                return .success((settings, live.raw[key]?.value ?? "", live.pageFileText))
            } catch {
                return .failure(PageRefusal("\(error)"))
            }
        }
        cachedStatus.withLock { $0 = nil }
        switch outcome {
        case .failure(let refusal):
            return .failure(refusal)
        case .success(let (settings, applied, fileText)):
            let receiver = settings.receiver
            switch key {
            case "receiver.lights": tap.setDark(!receiver.lightsOn)
            case "receiver.mode": tap.apply(.lineMode(receiver.mode))
            case "receiver.strip.effect": tap.apply(.stripEffect(receiver.strip.effect))
            case "receiver.strip.brightness": tap.apply(.stripBrightness(receiver.strip.brightness))
            case "receiver.strip.palette": tap.apply(.stripPalette(receiver.strip.palette))
            case "receiver.max_brightness": tap.setMaxBrightness(receiver.maxBrightness)
            case "receiver.delay": delayed.setDelay(.milliseconds(Int64(receiver.delayMilliseconds)))
            case "receiver.timeout":
                switchboard.setLampTimeout(.milliseconds(Int64((receiver.timeout * 1000).rounded())))
            case "receiver.sound", "receiver.play": ownSound?.change(to: settings)
            case "analysis.idle", "analysis.idle_after":
                tap.setIdle(settings.analysis.idle, after: settings.analysis.idleAfter)
            default: break
            }
            do {
                try StateDirectory.writePrivate(fileText, to: configuration.live.pageFile)
            } catch {
                logger.warning("page: \(key) = \(applied) applies now but is not kept: \(error)")
                return .failure(PageRefusal("applied now, but not kept across a restart: \(error)"))
            }
            return .success(applied)
        }
    }

    package func check(line: Int?) -> Result<Void, PageRefusal> {
        do {
            try tap.check(line)
            cachedStatus.withLock { $0 = nil }
            if let line { logger.info("page: wiring check lights line \(line) alone") }
            return .success(())
        } catch {
            return .failure(PageRefusal("\(error)"))
        }
    }

    package func checkStrip() -> Result<Void, PageRefusal> {
        do {
            try tap.checkStrip()
            cachedStatus.withLock { $0 = nil }
            logger.info("page: wiring check of the strip (first pixel red, last blue, then one running along)")
            return .success(())
        } catch {
            return .failure(PageRefusal("\(error)"))
        }
    }

    package func openSound(_ start: BrowserAudioStream.Start, address: String, peer: String, channel: any Channel)
        -> Result<any PageSoundSink, PageRefusal>
    {
        let id = nextSoundID.subtract(1, ordering: .relaxed).oldValue
        let connection = FrameConnection(
            id: id, address: address, peer: "\(peer) (page \(start.source))", channel: channel)
        let parameters = live.withLock { $0.settings.analysis }
        guard
            let sound = BrowserSound(
                connection: connection, sampleRate: start.sampleRate, parameters: parameters, switchboard: switchboard)
        else {
            return .failure(
                PageRefusal("the receiver refused this sender (receiver.allow or receiver.max_connections)"))
        }
        logger.info("page: \(peer) sends its \(start.source) at \(start.sampleRate) Hz")
        return .success(sound)
    }
}
