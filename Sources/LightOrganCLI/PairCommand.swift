import ArgumentParser
import LightOrganAudio
import LightOrganCore
import LightOrganOutput
import Logging
import Synchronization
import UnixSignals

/// `lightorgan pair`: opens the Bluetooth pairing window (``PairingWindow``) and shows who pairs.
struct PairCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "pair",
        abstract: "Open a Bluetooth pairing window: for 2 minutes a phone may find this receiver and pair with it.",
        discussion: """
            The receiver's adapter becomes discoverable and pairable (Just Works: nothing to type) under \
            the name the receiver gave it (receiver.name), a line is printed for each phone that pairs, and \
            after --seconds (or Ctrl-C) it is neither again. A phone that paired is trusted: it connects again by itself, with no window open. \
            With receiver.sound: bluetooth the receiver plays and lights what the phone plays. Exit status 1 when \
            there is no adapter, bluetoothd does not run, or the radio is blocked, with one line that says what to do.
            """)

    @OptionGroup var common: CommonOptions
    @Option(help: "How long the window stays open, seconds (10…600).") var seconds = PairingWindow.defaultSeconds
    @Option(
        help:
            "The name phones show (default: the one the receiver gave the adapter, receiver.name, or BlueZ's own)."
    )
    var name: String?

    func run() async throws {
        try await reportingFailures {
            let logger = common.prepareProcess()
            guard (10...600).contains(seconds) else {
                throw Failure.badSetting("--seconds \(seconds) is out of range 10…600")
            }
            let window: PairingWindow
            do {
                window = try PairingWindow(seconds: seconds, name: name.map(PhoneName.shown)) { line in
                    logger.info("\(line)")
                }
            } catch {
                throw Failure.runtime("\(error)")
            }
            let stopped = StopRequest()
            let signals = Task {
                for await _ in await UnixSignalsSequence(trapping: .sigint, .sigterm) {
                    stopped.asked.store(true, ordering: .relaxed)
                    break
                }
            }
            defer { signals.cancel() }
            let paired: [String]
            do {
                paired = try await Task.detached {
                    try window.run(
                        pairedNow: { phone in
                            StandardOutput.write("paired: \(phone) (trusted: it reconnects by itself)\n")
                        }, stop: { stopped.asked.load(ordering: .relaxed) })
                }.value
            } catch {
                throw Failure.runtime("\(error)")
            }
            StandardOutput.write(
                "pairing window closed: \(paired.isEmpty ? "no phone paired" : "\(paired.count) phone(s) paired")\n")
        }
    }
}

/// Set when Ctrl-C or SIGTERM asks the window to close early.
private final class StopRequest: Sendable {
    let asked = Atomic(false)
}
