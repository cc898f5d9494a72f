import ArgumentParser
import LightOrganCore
import LightOrganOutput
import LightOrganServices
import Logging
import ServiceLifecycle

/// `lightorgan send`: analyse audio and stream frames to a receiver.
struct SendCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "send",
        abstract:
            "Analyse audio and stream [bass, mid, treble] frames to receivers over TCP and to sACN, Art-Net and DDP lights."
    )

    @OptionGroup var common: CommonOptions
    @Option(help: CommonOptions.help("sender.host")) var host: String?
    @Option(help: CommonOptions.help("sender.hosts")) var hosts: String?
    @Option(help: CommonOptions.help("sender.port")) var port: String?
    @Option(help: CommonOptions.help("sender.receiver_name")) var receiverName: String?
    @Option(help: CommonOptions.help("sender.fps")) var fps: String?
    @Option(help: CommonOptions.help("sender.input")) var input: String?
    @Option(help: CommonOptions.help("sender.delay")) var delay: String?
    @Option(help: CommonOptions.help("sender.rate")) var rate: String?
    @Option(help: CommonOptions.help("sender.channels")) var channels: String?
    @Option(help: CommonOptions.help("sender.format")) var format: String?
    @Option(help: CommonOptions.help("sender.stats_interval")) var statsInterval: String?
    @Option(
        help: ArgumentHelp(
            "Send a test pattern instead of audio: `counter` makes frame n carry n (24 bits) and prints `<CLOCK_MONOTONIC seconds> <n>` on stdout as each is made; with `receive --output stdout` that gives every frame's age (scripts/bench-link).",
            valueName: "counter"))
    var pattern: String?

    func run() async throws {
        try await reportingFailures {
            let logger = common.prepareProcess()
            let overrides = [
                (host, "--host", "sender.host"), (hosts, "--hosts", "sender.hosts"), (port, "--port", "sender.port"),
                (receiverName, "--receiver-name", "sender.receiver_name"), (fps, "--fps", "sender.fps"),
                (input, "--input", "sender.input"), (delay, "--delay", "sender.delay"), (rate, "--rate", "sender.rate"),
                (channels, "--channels", "sender.channels"), (format, "--format", "sender.format"),
                (statsInterval, "--stats-interval", "sender.stats_interval"),
            ]
            let all = try await common.loadSettings(overrides, logger: logger)
            let settings = all.sender
            if let pattern, pattern != "counter" {
                throw Failure.badSetting("--pattern \(pattern) is not allowed; allowed: counter")
            }
            // The audio first: a wrong input is reported before the network is looked at.
            let source = try pattern == nil ? openAudioInput(settings) : nil
            defer { source?.close() }
            // sender.host auto: the receiver is found on the local network (DNS-SD through Avahi).
            var services: [ServiceGroupConfiguration.ServiceConfiguration] = []
            var receivers: [any ReceiverLocator]?
            if settings.discoversReceiver {
                let locator: DiscoveryLocator
                do {
                    locator = try DiscoveryLocator(wanted: settings.receiverName, logger: logger)
                } catch {
                    throw Failure.runtime("\(error); or set the receiver's address in sender.host (--host)")
                }
                let wanted = settings.receiverName.isEmpty ? "" : " named \"\(settings.receiverName)\""
                logger.info("sender.host is auto: looking for a receiver\(wanted) on the local network (DNS-SD)")
                services.append(.init(service: locator))
                receivers = settings.receivers.map(FixedReceiver.init) + [locator]
            }
            // sACN, Art-Net and DDP targets in sender.hosts.
            let lighting = try startLighting(settings.lighting, role: "send", settings: all, logger: logger)
            services += lighting.services
            let sender: SenderService
            if let source {
                logger.info("input: \(settings.input) (\(source.format))")
                sender = SenderService(
                    settings: settings, analysis: all.analysis, source: source, receivers: receivers,
                    lighting: lighting.outputs, logger: logger)
            } else {
                logger.info("input: test pattern counter, \(settings.framesPerSecond) frames/s")
                sender = SenderService(
                    settings: settings, receivers: receivers, lighting: lighting.outputs, logger: logger
                ) {
                    delivery in
                    FrameStream.counting(
                        framesPerSecond: settings.framesPerSecond,
                        made: { counter in
                            StandardOutput.write(String(cFormat: "%.6f ", MonotonicClock.seconds()) + "\(counter)\n")
                        }, into: delivery)
                }
            }
            // The end of the audio (a file, stdin) ends the command normally.
            services.append(.init(service: sender, successTerminationBehavior: .gracefullyShutdownGroup))
            try await runUntilStopped(services, logger: logger)
        }
    }
}
