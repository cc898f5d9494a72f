import ArgumentParser
import Glibc
import LightOrganCore
import LightOrganDiscovery
import LightOrganOutput
import Logging
import UnixSignals

/// `lightorgan discover`: list the receivers on the local network.
struct DiscoverCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "discover",
        abstract: "List the lightorgan receivers on the local network (DNS-SD _lightorgan._tcp, through Avahi).",
        discussion: """
            Prints one line per receiver as it is found (name, host, address, port), and a line when \
            one goes away; a line on stderr when none was found. Exit status 1 when discovery is \
            unavailable (no Avahi daemon).
            """)

    @Flag(name: .shortAndLong, help: "Log more.") var verbose = false
    @Option(help: "Seconds to look, 0: until Ctrl-C.") var timeout = 3.0

    func run() async throws {
        try await reportingFailures {
            let logger = CommonOptions.prepareProcess(level: verbose ? .debug : .warning)
            guard timeout >= 0, timeout <= 86_400 else {
                throw Failure.badSetting("--timeout \(timeout) is out of range 0…86400 (seconds, 0: until Ctrl-C)")
            }
            let browser: ReceiverBrowser
            do {
                browser = try ReceiverBrowser(logger: logger)
            } catch {
                throw Failure.runtime("\(error)")
            }
            defer { browser.close() }
            let problem = await withTaskGroup(of: String?.self) { group in
                // Whichever ends first: discovery unavailable, Ctrl-C (or SIGTERM), or the timeout.
                group.addTask { await Self.list(browser.updates) }
                group.addTask {
                    for await _ in await UnixSignalsSequence(trapping: .sigint, .sigterm) { break }
                    return nil
                }
                if timeout > 0 {
                    group.addTask {
                        try? await Task.sleep(for: .milliseconds(Int64(timeout * 1000)))
                        return nil
                    }
                }
                let first = await group.next() ?? nil
                group.cancelAll()
                browser.close()
                return first
            }
            if let problem { throw Failure.runtime(problem) }
        }
    }

    /// Prints receivers as they come and go, and says so on stderr when none was found by the end;
    /// returns the reason when discovery is unavailable.
    private static func list(_ updates: AsyncStream<ReceiverBrowser.Update>) async -> String? {
        var shown: [String: DiscoveredReceiver] = [:]
        var printedHeader = false
        defer {
            if !printedHeader {
                let message =
                    "lightorgan: no receiver found on the local network; is `lightorgan receive` running on it?\n"
                _ = message.withCString { Glibc.write(2, $0, strlen($0)) }
            }
        }
        for await update in updates {
            switch update {
            case .unavailable(let why):
                printedHeader = true  // the reason is the message
                return why
            case .receivers(let sightings, _):
                let seen = ReceiverChoice(sightings: sightings, wanted: "", previous: nil).seen
                if !printedHeader, !seen.isEmpty {
                    printedHeader = true
                    StandardOutput.write(row("NAME", "HOST", "ADDRESS", "PORT"))
                }
                for receiver in seen where shown[receiver.name] != receiver {
                    shown[receiver.name] = receiver
                    StandardOutput.write(row(receiver.name, receiver.hostName, receiver.address, "\(receiver.port)"))
                }
                for name in shown.keys.sorted() where !seen.contains(where: { $0.name == name }) {
                    shown[name] = nil
                    StandardOutput.write("(\(name) is gone)\n")
                }
            }
        }
        return nil
    }

    private static func row(_ name: String, _ host: String, _ address: String, _ port: String) -> String {
        func pad(_ text: String, _ width: Int) -> String {
            text + String(repeating: " ", count: max(1, width - text.count))
        }
        return pad(name, 24) + pad(host, 28) + pad(address, 26) + port + "\n"
    }
}
