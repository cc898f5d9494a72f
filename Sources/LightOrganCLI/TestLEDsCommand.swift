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
import Logging
import ServiceLifecycle

/// `lightorgan test-leds`: the wiring check of the GPIO lines, or with `--hosts`/`--lighting` the
/// patch check of the lighting targets.
struct TestLEDsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "test-leds",
        abstract: "Wiring check: light each configured GPIO line in turn, then all together, then a brightness ramp; "
            + "with --hosts or --lighting, light each fixture of the lighting targets in turn.",
        discussion: """
            Uses receiver.chip, receiver.lines and receiver.active_low from the settings. Stop the receiver service first.

            Patch check: `lightorgan test-leds --hosts sacn://10.0.0.60` (or --lighting: the targets of sender.hosts \
            and receiver.forward) lights every fixture alone at full, in turn (dimmers and segments band by band), \
            naming each (wash bass: sACN universe 1, channel 1 at 10.0.0.60), with the fixtures: of the settings \
            file; it ends dark, with sACN streams terminated.
            """)

    @OptionGroup var common: CommonOptions
    @Option(help: CommonOptions.help("receiver.chip")) var chip: String?
    @Option(help: "Patch check of these lighting targets (sacn://, artnet://, ddp://, comma-separated) instead of the GPIO lines.")
    var hosts: String?
    @Flag(help: "Patch check of the lighting targets of sender.hosts and receiver.forward instead of the GPIO lines.")
    var lighting = false

    @Option(help: "Seconds each step lasts.")
    var step: Double = 1

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
            let settings = try await common.loadSettings([(chip, "--chip", "receiver.chip")], logger: logger).receiver
            let lamps: GPIOLamps
            do {
                lamps = try GPIOLamps(
                    chip: settings.chip, lines: settings.lines, activeLow: settings.activeLow,
                    pwmFrequency: settings.pwmFrequency)
            } catch {
                throw Failure.runtime("\(error)")
            }
            let check = WiringCheck(lamps: lamps, step: step)
            try await runUntilStopped([.init(service: check, successTerminationBehavior: .gracefullyShutdownGroup)], logger: logger)
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
                hosts.map { "--hosts \($0) names no lighting target; allowed: \(LightingTarget.allowedForm) (a receiver's lamps are checked by test-leds on the receiver)" }
                    ?? "--lighting found no lighting target in sender.hosts or receiver.forward; give them with --hosts sacn://…, artnet://…, ddp://…")
        }
        let lighting = try startLighting(patches, role: "test-leds", settings: settings, logger: logger)
        guard let outputs = lighting.outputs else { return }
        let check = PatchCheckService(outputs: outputs, step: step)
        try await runUntilStopped(
            [.init(service: check, successTerminationBehavior: .gracefullyShutdownGroup)] + lighting.services, logger: logger)
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

/// The sequence of the wiring check, as a service so that Ctrl-C still turns every line off.
struct WiringCheck: Service {
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
