import ArgumentParser
import LightOrganCore
import LightOrganOutput
import LightOrganServices
import Logging
import ServiceLifecycle

/// `lightorgan test-leds`: the wiring check of the GPIO lines, or of the strip when one is set
/// (`receiver.strip.device`, `--strip-device`), or with `--hosts`/`--lighting` the patch check of
/// the lighting targets.
struct TestLEDsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "test-leds",
        abstract: "Wiring check: light each configured GPIO line in turn, then all together, then a brightness ramp; "
            + "with a strip set, its first pixel red and last blue, then one pixel running along it; "
            + "with --hosts or --lighting, light each fixture of the lighting targets in turn.",
        discussion: """
            Uses receiver.chip, receiver.lines and receiver.active_low from the settings. Stop the receiver service first.

            Strip check: with receiver.strip.device set (or --strip-device /dev/spidev0.0), the strip's first pixel \
            lights red and its last blue (other colours: set receiver.strip.order; a dark last pixel: fewer pixels \
            than receiver.strip.pixels), then one green pixel runs from the first to the last, then the strip is dark. \
            Random colours or flicker mean the data line needs a level shifter (hardware/).

            Patch check: `lightorgan test-leds --hosts sacn://10.0.0.60` (or --lighting: the targets of sender.hosts \
            and receiver.forward) lights every fixture alone at full, in turn (dimmers and segments band by band), \
            naming each (wash bass: sACN universe 1, channel 1 at 10.0.0.60), with the fixtures: of the settings \
            file; it ends dark, with sACN streams terminated.
            """)

    @OptionGroup var common: CommonOptions
    @Option(help: CommonOptions.help("receiver.chip")) var chip: String?
    @Option(
        help:
            "Patch check of these lighting targets (sacn://, artnet://, ddp://, comma-separated) instead of the GPIO lines."
    )
    var hosts: String?
    @Flag(help: "Patch check of the lighting targets of sender.hosts and receiver.forward instead of the GPIO lines.")
    var lighting = false

    @Option(help: "Seconds each step lasts.")
    var step: Double = 1
    @OptionGroup var strip: StripOptions

    func run() async throws {
        try await reportingFailures {
            let logger = common.prepareProcess()
            guard step > 0, step <= 3600 else {
                throw Failure.badSetting("--step \(step) is out of range: allowed more than 0 and at most 3600 seconds")
            }
            if hosts != nil || lighting {
                try await checkPatch(logger: logger)
                return
            }
            let settings = try await common.loadSettings(
                [(chip, "--chip", "receiver.chip")] + strip.overrides, logger: logger
            ).receiver
            if settings.strip.isEnabled {
                let strip: LEDStrip
                do {
                    strip = try LEDStrip.open(settings.strip)
                } catch {
                    throw Failure.runtime("\(error)")
                }
                let check = StripWiringCheck(strip: strip)
                try await runUntilStopped(
                    [.init(service: check, successTerminationBehavior: .gracefullyShutdownGroup)], logger: logger)
                return
            }
            let lamps: GPIOLamps
            do {
                lamps = try GPIOLamps(
                    chip: settings.chip, lines: settings.lines, activeLow: settings.activeLow,
                    pwmFrequency: settings.pwmFrequency)
            } catch {
                throw Failure.runtime("\(error)")
            }
            let check = LineWiringCheck(lamps: lamps, step: step)
            try await runUntilStopped(
                [.init(service: check, successTerminationBehavior: .gracefullyShutdownGroup)], logger: logger)
        }
    }
}

extension TestLEDsCommand {
    /// The patch check of the lighting targets named by `--hosts` (or, with `--lighting`, those of
    /// the settings).
    func checkPatch(logger: Logger) async throws {
        let settings = try await common.loadSettings([(hosts, "--hosts", "sender.hosts")], logger: logger)
        let patches = settings.sender.lighting + (hosts == nil ? settings.receiver.forward : [])
        guard !patches.isEmpty else {
            throw Failure.badSetting(
                hosts.map {
                    "--hosts \($0) names no lighting target; allowed: \(LightingTarget.allowedForm) (a receiver's lamps are checked by test-leds on the receiver)"
                }
                    ?? "--lighting found no lighting target in sender.hosts or receiver.forward; give them with --hosts sacn://…, artnet://…, ddp://…"
            )
        }
        let lighting = try startLighting(patches, role: "test-leds", settings: settings, logger: logger)
        guard let outputs = lighting.outputs else { return }
        let check = PatchCheckService(outputs: outputs, step: step)
        try await runUntilStopped(
            [.init(service: check, successTerminationBehavior: .gracefullyShutdownGroup)] + lighting.services,
            logger: logger)
    }
}

/// The patch check as a service, so that Ctrl-C still turns every fixture dark.
struct PatchCheckService: Service {
    let outputs: LightingOutputs
    let step: Double

    func run() async throws {
        defer { outputs.stop() }
        let say: @Sendable (String) -> Void = { StandardOutput.write($0 + "\n") }
        do {
            try await cancelWhenGracefulShutdown {
                try await outputs.checkPatch(seconds: step, say: say)
                say("off")
            }
        } catch is CancellationError {
            say("stopped; every fixture dark")
        }
    }
}

/// The strip's wiring check (``StripCheck``), as a service so that Ctrl-C still darkens the strip.
struct StripWiringCheck: Service {
    let strip: LEDStrip

    func run() async throws {
        defer { strip.shutDown() }
        let say: @Sendable (String) -> Void = { StandardOutput.write($0 + "\n") }
        let description = strip.description
        let sequence = StripCheck(pixels: description.pixels)
        do {
            try await cancelWhenGracefulShutdown {
                say("strip: \(description.pixels) \(description.led) pixels on \(description.device)")
                say(
                    "first pixel red, last pixel blue (other colours: set receiver.strip.order; last one dark: fewer pixels than set)"
                )
                let start = ContinuousClock.now
                var due = Duration.zero
                var announced = false
                for (step, seconds) in sequence.steps {
                    if case .runner = step, !announced {
                        say("one green pixel runs from the first to the last")
                        announced = true
                    }
                    try strip.showCheck(step == .dark ? nil : .strip(step))
                    // On the check's grid, each step up at least half its time (StripCheck.nextStep).
                    let next = StripCheck.nextStep(due: due, seconds: seconds, shown: ContinuousClock.now - start)
                    due = next.due
                    try await Task.sleep(until: start + next.at)
                }
                say("off")
            }
        } catch is CancellationError {
            say("stopped; the strip is dark")
        }
    }
}

/// The sequence of the wiring check, as a service so that Ctrl-C still turns every line off.
struct LineWiringCheck: Service {
    let lamps: GPIOLamps
    let step: Double

    func run() async throws {
        defer { lamps.shutDown() }
        let count = lamps.lines.count
        let say: @Sendable (String) -> Void = { StandardOutput.write($0 + "\n") }
        do {
            try await cancelWhenGracefulShutdown {
                for (index, line) in lamps.lines.enumerated() {
                    let pin = RaspberryPiHeader.pin(forBCM: line.offset).map { ", header pin \($0)" } ?? ""
                    say("\(line.band): GPIO \(line.offset)\(pin) on \(lamps.chipDescription)")
                    lamps.showDuties((0..<count).map { $0 == index ? 1 : 0 })
                    try await Task.sleep(for: .seconds(step))
                }
                say("all \(count) lines")
                lamps.showDuties(Array(repeating: 1, count: count))
                try await Task.sleep(for: .seconds(step))
                say("brightness ramp, dark to full")
                for level in stride(from: 0, through: 255, by: 5) {
                    lamps.showDuties(Array(repeating: PWMSchedule.duty(forLevel: UInt8(level)), count: count))
                    try await Task.sleep(for: .seconds(2 * step / 52))
                }
                say("off")
            }
        } catch is CancellationError {
            say("stopped; all lines off")
        }
    }
}
