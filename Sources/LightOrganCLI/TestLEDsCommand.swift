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

/// `lightorgan test-leds`: the wiring check.
struct TestLEDsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "test-leds",
        abstract: "Wiring check: light each configured GPIO line in turn, then all together, then a brightness ramp.",
        discussion: "Uses receiver.chip, receiver.lines and receiver.active_low from the settings. Stop the receiver service first.")

    @OptionGroup var common: CommonOptions
    @Option(help: CommonOptions.help("receiver.chip")) var chip: String?

    @Option(help: "Seconds each step lasts.")
    var step: Double = 1

    func run() async throws {
        try await reportingFailures {
            let logger = common.prepareProcess()
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
