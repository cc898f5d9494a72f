import ArgumentParser
import Glibc
import LightOrganCore
import LightOrganDiscovery
import LightOrganOutput
import Logging
import UnixSignals

/// `lightorgan discover`: list the receivers and WLED devices on the local network.
struct DiscoverCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "discover",
        abstract: "List the lightorgan receivers and WLED devices on the local network (DNS-SD _lightorgan._tcp and _wled._tcp, through Avahi).",
        discussion: """
            Prints one line per receiver or WLED device as it is found (kind, name, host, address, \
            port), and a line when one goes away; a line on stderr when none was found. A WLED \
            device is driven with ddp://ADDRESS (or ddp://auto) in sender.hosts or receiver.forward. \
            Exit status 1 when discovery is unavailable (no Avahi daemon).
            """)

    @Flag(name: .shortAndLong, help: "Log more.") var verbose = false
    @Option(help: "Seconds to look, 0: until Ctrl-C.") var timeout = 3.0

    func run() async throws {
        try await reportingFailures {
            let logger = CommonOptions.prepareProcess(level: verbose ? .debug : .warning)
            guard timeout >= 0, timeout <= 86_400 else {
                throw Failure.badSetting("--timeout \(timeout) is out of range 0…86400 (seconds, 0: until Ctrl-C)")
            }
            let browsers: [(kind: String, browser: ReceiverBrowser)]
            do {
                browsers = [
                    ("receiver", try ReceiverBrowser(logger: logger)),
                    ("wled", try ReceiverBrowser(logger: logger, serviceType: DiscoveredService.wled.type)),
                ]
            } catch {
                throw Failure.runtime("\(error)")
            }
            defer { for entry in browsers { entry.browser.close() } }
            let (updates, continuation) = AsyncStream.makeStream(of: (String, ReceiverBrowser.Update).self)
            let problem = await withTaskGroup(of: String?.self) { group in
                // Whichever ends first: discovery unavailable, Ctrl-C (or SIGTERM), or the timeout.
                for (kind, browser) in browsers {
                    group.addTask {
                        for await update in browser.updates { continuation.yield((kind, update)) }
                        return nil
                    }
                }
                group.addTask { await Self.list(updates) }
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
                // The forwarding tasks end only when their browser is closed, below.
                let first = await group.next() ?? nil
                group.cancelAll()
                for entry in browsers { entry.browser.close() }
                continuation.finish()
                return first
            }
            if let problem { throw Failure.runtime(problem) }
        }
    }

    /// Prints receivers and WLED devices as they come and go, and says so on stderr when none was
    /// found by the end; returns the reason when discovery is unavailable.
    private static func list(_ updates: AsyncStream<(String, ReceiverBrowser.Update)>) async -> String? {
        var shown: [String: DiscoveredReceiver] = [:]
        var printedHeader = false
        defer {
            if !printedHeader {
                let message =
                    "lightorgan: no receiver found on the local network (nor a WLED device); is `lightorgan receive` running on it?\n"
                _ = message.withCString { Glibc.write(2, $0, strlen($0)) }
            }
        }
        for await (kind, update) in updates {
            switch update {
            case .unavailable(let why):
                printedHeader = true  // the reason is the message
                return why
            case .receivers(let sightings, _):
                let seen = ReceiverChoice(sightings: sightings, wanted: "", previous: nil).seen
                if !printedHeader, !seen.isEmpty {
                    printedHeader = true
                    StandardOutput.write(row("KIND", "NAME", "HOST", "ADDRESS", "PORT"))
                }
                for device in seen where shown[kind + "/" + device.name] != device {
                    shown[kind + "/" + device.name] = device
                    StandardOutput.write(row(kind, device.name, device.hostName, device.address, "\(device.port)"))
                }
                for key in shown.keys.sorted() where key.hasPrefix(kind + "/") && !seen.contains(where: { kind + "/" + $0.name == key }) {
                    shown[key] = nil
                    StandardOutput.write("(\(key.dropFirst(kind.count + 1)) is gone)\n")
                }
            }
        }
        return nil
    }

    private static func row(_ kind: String, _ name: String, _ host: String, _ address: String, _ port: String) -> String {
        func pad(_ text: String, _ width: Int) -> String {
            text + String(repeating: " ", count: max(1, width - text.count))
        }
        return pad(kind, 10) + pad(name, 24) + pad(host, 28) + pad(address, 26) + port + "\n"
    }
}
