import ArgumentParser
#if os(Linux)
import FoundationEssentials
import Glibc
#else
import Foundation
#endif
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

    func run() async throws {
        try await reportingFailures {
            let logger = common.prepareProcess()
            let overrides = [
                (bind, "--bind", "receiver.bind"), (port, "--port", "receiver.port"), (name, "--name", "receiver.name"),
                (output, "--output", "receiver.output"), (timeout, "--timeout", "receiver.timeout"),
                (delay, "--delay", "receiver.delay"),
                (chip, "--chip", "receiver.chip"), (allow, "--allow", "receiver.allow"),
                (maxConnections, "--max-connections", "receiver.max_connections"),
                (idleTimeout, "--idle-timeout", "receiver.idle_timeout"),
                (statsInterval, "--stats-interval", "receiver.stats_interval"), (forward, "--forward", "receiver.forward"),
            ]
            let environment = ProcessInfo.processInfo.environment
            let pageFile = StateDirectory.pageSettingsFile(environment: environment)
            let loaded = try await common.loadSettingsWithSources(overrides, pageFile: pageFile, logger: logger)
            let all = loaded.settings
            let settings = all.receiver
            let lighting = try startLighting(settings.forward, role: "receive", settings: all, logger: logger)
            let receiver: ReceiverService
            do {
                let output = try Self.makeOutput(settings)
                var chip: String?
                if let lamps = output as? GPIOLamps {
                    let lines = lamps.lines.map { "\($0.band) \($0.offset)" }.joined(separator: ", ")
                    chip = lamps.chipDescription
                    logger.info(
                        "GPIO: lines \(lines) on \(lamps.chipDescription), PWM \(settings.pwmFrequency) Hz, mode \(settings.mode), libgpiod API v\(GPIOLamps.libgpiodAPI)")
                }
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
                receiver = try await ReceiverService.bind(
                    settings: settings, output: output, lighting: lighting.outputs, page: page, logger: logger)
                if let server = receiver.page, let page {
                    PageStartup.announce(port: server.port, bind: all.page.bind.isEmpty ? settings.bind : all.page.bind, page: page, logger: logger)
                }
            } catch let failure as Failure {
                throw failure
            } catch {
                throw Failure.runtime("\(error)")
            }
            // Published under its bound port (the kernel's choice when receiver.port is 0).
            let publisher = PublisherService(
                name: settings.name, port: receiver.port, pagePort: receiver.page?.port, logger: logger)
            try await runUntilStopped(lighting.services + [.init(service: publisher), .init(service: receiver)], logger: logger)
        }
    }

    /// The output `settings.output` names; GPIO lines are requested here, before anything runs.
    static func makeOutput(_ settings: ReceiverSettings) throws -> any LevelOutput {
        switch settings.output {
        case .terminal: TerminalLamps()
        case .stdout: StdoutLines()
        case .gpio:
            try GPIOLamps(
                chip: settings.chip, lines: settings.lines, activeLow: settings.activeLow,
                pwmFrequency: settings.pwmFrequency, mode: settings.mode, onThreshold: settings.onThreshold,
                hysteresis: settings.hysteresis, minimumSwitchInterval: settings.minimumSwitchInterval)
        }
    }
}
