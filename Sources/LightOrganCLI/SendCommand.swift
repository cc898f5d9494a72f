import ArgumentParser
import LightOrganCore
import LightOrganServices
import Logging
import ServiceLifecycle
import UnixSignals

/// `lightorgan send`: analyse audio and stream frames to a receiver.
struct SendCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "send",
        abstract: "Analyse audio and stream [bass, mid, treble] frames to a receiver over TCP.")

    @OptionGroup var common: CommonOptions
    @Option(help: CommonOptions.help("sender.host")) var host: String?
    @Option(help: CommonOptions.help("sender.port")) var port: String?
    @Option(help: CommonOptions.help("sender.fps")) var fps: String?
    @Option(help: CommonOptions.help("sender.input")) var input: String?

    func run() async throws {
        try await reportingFailures {
            let logger = common.prepareProcess()
            var options = OptionValues()
            options.add(host, option: "--host", key: "sender.host")
            options.add(port, option: "--port", key: "sender.port")
            options.add(fps, option: "--fps", key: "sender.fps")
            options.add(input, option: "--input", key: "sender.input")
            let settings = try await common.loadSettings(options: options.values, logger: logger).sender
            let source = try AudioSourceFactory.open(settings.input)
            logger.info("input: \(settings.input) (\(source.format))")
            let sender = SenderService(settings: settings, source: source, logger: logger)
            let group = ServiceGroup(
                services: [sender], gracefulShutdownSignals: [.sigterm, .sigint], logger: logger)
            try await group.run()
        }
    }
}
