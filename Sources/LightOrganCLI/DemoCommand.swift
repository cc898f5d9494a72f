import ArgumentParser
import LightOrganCore
import LightOrganOutput
import LightOrganServices
import Logging
import ServiceLifecycle

/// `lightorgan demo`: sender and receiver in one process, over a real TCP socket on loopback.
struct DemoCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "demo",
        abstract: "Play the whole chain on this machine: built-in groove → analysis → TCP on loopback → virtual lamps.",
        discussion: "Needs no sound card and no Raspberry Pi. Ignores the settings file. Ctrl-C ends it.")

    @Option(help: "Stop after this many seconds (default: run until Ctrl-C).")
    var duration: Double?

    @Option(
        help:
            "Audio: demo (the built-in groove of kick, snare, hi-hat, bass and chords), monitor, a .wav file or an ALSA device."
    )
    var input = "demo"

    @Option(help: "Frames per second, 10…250.")
    var fps = 100

    @Option(
        help:
            "terminal (virtual lamps; a plain line every 0.1 s when stdout is not a terminal), stdout (a line per frame) or gpio (LEDs on the Pi's default lines)."
    )
    var output = "terminal"

    @Option(
        help: "Also show a virtual LED strip of 60 pixels with this effect: scroll, energy, flash, segments or blend.")
    var strip: String?

    @Flag(name: .shortAndLong, help: "Log connections and settings to stderr.")
    var verbose = false

    func validate() throws {
        if let duration, !(duration > 0) { throw ValidationError("--duration must be more than 0 seconds") }
        guard (10...250).contains(fps) else { throw ValidationError("--fps must be in 10…250") }
        guard OutputChoice(rawValue: output) != nil else {
            throw ValidationError("--output must be terminal, stdout or gpio")
        }
        if let strip, StripEffect(rawValue: strip) == nil {
            throw ValidationError(
                "--strip must be one of \(StripEffect.allCases.map(\.rawValue).joined(separator: ", ")), not \(strip)")
        }
    }

    func run() async throws {
        try await reportingFailures {
            let logger = CommonOptions.prepareProcess(level: verbose ? .debug : .warning)
            var sender = SenderSettings()
            sender.framesPerSecond = fps
            sender.input = AudioInputChoice(parsing: input)
            let source = try openAudioInput(sender)

            let output = OutputChoice(rawValue: output) ?? .terminal
            var receiverSettings = ReceiverSettings()
            receiverSettings.bind = "127.0.0.1"
            receiverSettings.port = 0
            receiverSettings.output = output
            if let strip, let effect = StripEffect(rawValue: strip) {
                receiverSettings.strip.device = StripSettings.virtualDevice
                receiverSettings.strip.effect = effect
                receiverSettings.strip.brightness = 100
            }
            let receiver: ReceiverService
            do {
                receiver = try await ReceiverService.bind(
                    settings: receiverSettings, output: ReceiveCommand.makeOutput(receiverSettings, logger: logger).0,
                    logger: logger)
            } catch {
                throw Failure.runtime("\(error)")
            }
            sender.host = "127.0.0.1"
            sender.port = receiver.port
            if output == .terminal {
                let title = "lightorgan demo: \(sender.input) → analysis → TCP 127.0.0.1:\(sender.port) → lamps."
                StandardOutput.write("\(title) Ctrl-C stops.\n")
            }

            // Shut down in reverse order: the timer, then the sender (all-off frame, clean close),
            // then the receiver (lamps off).
            var services: [ServiceGroupConfiguration.ServiceConfiguration] = [
                .init(service: receiver),
                .init(
                    service: SenderService(settings: sender, source: source, logger: logger),
                    successTerminationBehavior: .gracefullyShutdownGroup),
            ]
            if let duration {
                services.append(
                    .init(
                        service: DurationLimit(.milliseconds(Int64(duration * 1000))),
                        successTerminationBehavior: .gracefullyShutdownGroup))
            }
            try await runUntilStopped(services, logger: logger)
        }
    }
}
