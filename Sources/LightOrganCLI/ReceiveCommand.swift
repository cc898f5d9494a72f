import ArgumentParser
import FoundationEssentials
import LightOrganCore
import LightOrganOutput
import LightOrganServices
import LightOrganSettings
import LightOrganWeb
import Logging
import ServiceLifecycle

/// `lightorgan receive`: accept senders and drive the lamps.
struct ReceiveCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "receive",
        abstract: "Accept [bass, mid, treble] frames over TCP and show them on the lamps.")

    @OptionGroup var common: CommonOptions
    @Option(help: CommonOptions.help("receiver.bind")) var bind: String?
    @Option(help: CommonOptions.help("receiver.port")) var port: String?
    @Option(help: CommonOptions.help("receiver.name")) var name: String?
    @Option(help: CommonOptions.help("receiver.output")) var output: String?
    @Option(help: CommonOptions.help("receiver.timeout")) var timeout: String?
    @Option(help: CommonOptions.help("receiver.delay")) var delay: String?
    @Option(help: CommonOptions.help("receiver.chip")) var chip: String?
    @Option(help: CommonOptions.help("receiver.allow")) var allow: String?
    @Option(help: CommonOptions.help("receiver.max_connections")) var maxConnections: String?
    @Option(help: CommonOptions.help("receiver.idle_timeout")) var idleTimeout: String?
    @Option(help: CommonOptions.help("receiver.stats_interval")) var statsInterval: String?
    @Option(help: CommonOptions.help("receiver.forward")) var forward: String?
    @Option(help: CommonOptions.help("receiver.sound")) var sound: String?
    @Option(help: CommonOptions.help("receiver.play")) var play: String?
    @Option(help: CommonOptions.help("receiver.airplay.port")) var airplayPort: String?
    @Option(help: CommonOptions.help("analysis.idle")) var idle: String?
    @Option(help: CommonOptions.help("analysis.idle_after")) var idleAfter: String?
    @OptionGroup var strip: StripOptions

    func run() async throws {
        try await reportingFailures {
            let logger = common.prepareProcess()
            let overrides =
                [
                    (bind, "--bind", "receiver.bind"), (port, "--port", "receiver.port"),
                    (name, "--name", "receiver.name"),
                    (output, "--output", "receiver.output"), (timeout, "--timeout", "receiver.timeout"),
                    (delay, "--delay", "receiver.delay"),
                    (chip, "--chip", "receiver.chip"), (allow, "--allow", "receiver.allow"),
                    (maxConnections, "--max-connections", "receiver.max_connections"),
                    (idleTimeout, "--idle-timeout", "receiver.idle_timeout"),
                    (statsInterval, "--stats-interval", "receiver.stats_interval"),
                    (forward, "--forward", "receiver.forward"),
                    (sound, "--sound", "receiver.sound"), (play, "--play", "receiver.play"),
                    (airplayPort, "--airplay-port", "receiver.airplay.port"),
                    (idle, "--idle", "analysis.idle"), (idleAfter, "--idle-after", "analysis.idle_after"),
                ] + strip.overrides
            let environment = ProcessInfo.processInfo.environment
            let pageFile = StateDirectory.pageSettingsFile(environment: environment)
            let loaded = try await common.loadSettingsWithSources(overrides, pageFile: pageFile, logger: logger)
            let all = loaded.settings
            let settings = all.receiver
            let lighting = try startLighting(settings.forward, role: "receive", settings: all, logger: logger)
            let receiver: ReceiverService
            do {
                let (output, chip) = try Self.makeOutput(settings, logger: logger)
                var page: ReceiverService.PageSetup?
                if all.page.isEnabled {
                    do {
                        page = try PageStartup.prepare(
                            loaded: loaded, pageFile: pageFile, chip: chip, environment: environment, logger: logger)
                    } catch Failure.runtime(let why) {
                        // The lamps are the receiver's job: without its page it still drives them.
                        logger.error("\(why); the receiver runs without its page")
                    }
                }
                let sound = ReceiverService.OwnSoundSource(settings: all) { settings in
                    OwnSoundStartup.open(settings, environment: environment, logger: logger)
                }
                let home = HomeStartup.prepare(
                    loaded: loaded, pageFile: pageFile,
                    pagePort: page == nil || all.page.port == 0 ? nil : all.page.port,
                    environment: environment, logger: logger)
                receiver = try await ReceiverService.bind(
                    settings: settings, analysis: all.analysis, output: output, lighting: lighting.outputs, page: page,
                    sound: sound,
                    home: home, logger: logger)
                if let server = receiver.page, let page {
                    PageStartup.announce(
                        port: server.port, bind: all.page.bind.isEmpty ? settings.bind : all.page.bind, page: page,
                        logger: logger)
                }
            } catch let failure as Failure {
                throw failure
            } catch {
                throw Failure.runtime("\(error)")
            }
            // Published under its bound port (the kernel's choice when receiver.port is 0).
            let publisher = PublisherService(
                name: settings.name, port: receiver.port, pagePort: receiver.page?.port, logger: logger)
            try await runUntilStopped(
                lighting.services + [.init(service: publisher), .init(service: receiver)], logger: logger)
        }
    }

    /// The output `settings.output` names, with the strip of `receiver.strip.device` beside it, and
    /// the GPIO chip as opened (nil for other outputs); GPIO lines and the strip's device are opened
    /// here, before anything runs, and what they are is logged.
    static func makeOutput(_ settings: ReceiverSettings, logger: Logger) throws -> (any LevelOutput, chip: String?) {
        var lamps: any LevelOutput
        var chip: String?
        // The strip is opened first: the terminal's lamps draw its pixels in a row of their own.
        var strip: LEDStrip?
        if settings.strip.isEnabled {
            strip = try LEDStrip.open(settings.strip)
            let description = strip!.description
            logger.info(
                "strip: \(description.pixels) \(description.led) pixels on \(description.device), effect \(description.effect), brightness \(settings.strip.brightness) %"
            )
            for note in strip!.notes { logger.info("strip: \(note)") }
        }
        switch settings.output {
        case .terminal:
            var pixels: (@Sendable () -> [UInt8])?
            if let strip { pixels = { strip.stripPixels() } }
            lamps = TerminalLamps(strip: pixels)
        case .stdout: lamps = StdoutLines()
        case .gpio:
            let gpio: GPIOLamps
            do {
                gpio = try GPIOLamps(
                    chip: settings.chip, lines: settings.lines, activeLow: settings.activeLow,
                    pwmFrequency: settings.pwmFrequency, mode: settings.mode, onThreshold: settings.onThreshold,
                    hysteresis: settings.hysteresis, minimumSwitchInterval: settings.minimumSwitchInterval)
            } catch {
                strip?.shutDown()
                throw error
            }
            let lines = gpio.lines.map { "\($0.band) \($0.offset)" }.joined(separator: ", ")
            logger.info(
                "GPIO: lines \(lines) on \(gpio.chipDescription), PWM \(settings.pwmFrequency) Hz, mode \(settings.mode), libgpiod API v\(GPIOLamps.libgpiodAPI)"
            )
            chip = gpio.chipDescription
            lamps = gpio
        }
        guard let strip else { return (lamps, chip) }
        return (CombinedOutput(lamps: lamps, strip: strip), chip)
    }
}
