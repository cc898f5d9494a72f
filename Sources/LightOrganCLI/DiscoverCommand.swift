import ArgumentParser
import Glibc
import LightOrganCore
import LightOrganDiscovery
import LightOrganNetwork
import LightOrganOutput
import LightOrganPOSIX
import Logging
import Synchronization
import UnixSignals

/// `lightorgan discover`: list the receivers, WLED devices and Art-Net nodes on the local network.
struct DiscoverCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "discover",
        abstract:
            "List the lightorgan receivers and WLED devices (DNS-SD _lightorgan._tcp and _wled._tcp, through Avahi) and the Art-Net nodes (ArtPoll) on the local network.",
        discussion: """
            Prints one line per receiver, WLED device or Art-Net node as it is found (kind, name, host \
            or the universes a node outputs, address, port), and a line when one goes away; a line on \
            stderr when none was found. A WLED device is driven with ddp://ADDRESS (or ddp://auto), an \
            Art-Net node with artnet://ADDRESS (or artnet://auto: every node that answers) in \
            sender.hosts or receiver.forward. Exit status 1 when DNS-SD is unavailable (no Avahi daemon).
            """)

    @Flag(name: .shortAndLong, help: "Log more.") var verbose = false
    @Option(help: "Seconds to look, 0: until Ctrl-C.") var timeout = 3.0
    @Option(help: "The network interface ArtPoll leaves by (default: the default route's).")
    var interface: String?

    func run() async throws {
        try await reportingFailures {
            let logger = CommonOptions.prepareProcess(level: verbose ? .debug : .warning)
            guard timeout >= 0, timeout <= 86_400 else {
                throw Failure.badSetting("--timeout \(timeout) is out of range 0…86400 (seconds, 0: until Ctrl-C)")
            }
            // DNS-SD through Avahi; without it the Art-Net search still runs, and the reason is
            // the error when nothing at all was found.
            var browsers: [(kind: String, browser: ReceiverBrowser)] = []
            var unavailable: String?
            do {
                browsers = [
                    ("receiver", try ReceiverBrowser(logger: logger)),
                    ("wled", try ReceiverBrowser(logger: logger, serviceType: DiscoveredService.wled.type)),
                ]
            } catch {
                unavailable = "\(error)"
            }
            defer { for entry in browsers { entry.browser.close() } }
            let (updates, continuation) = AsyncStream.makeStream(of: Sighting.self)
            let pollingEnds = startArtPoll(into: continuation, logger: logger)
            let listing = Task { await Self.list(updates) }
            await withTaskGroup(of: Bool.self) { group in
                // Whichever ends first: Ctrl-C (or SIGTERM) or the timeout (true); a browser's
                // stream ending (discovery unavailable: false) ends nothing.
                for (kind, browser) in browsers {
                    group.addTask {
                        for await update in browser.updates { continuation.yield(.dnssd(kind, update)) }
                        return false
                    }
                }
                group.addTask {
                    for await _ in await UnixSignalsSequence(trapping: .sigint, .sigterm) { break }
                    return true
                }
                if timeout > 0 {
                    group.addTask {
                        try? await Task.sleep(for: .milliseconds(Int64(timeout * 1000)))
                        return true
                    }
                }
                while let ends = await group.next(), !ends {}
                group.cancelAll()
                for entry in browsers { entry.browser.close() }
                pollingEnds()
                continuation.finish()
            }
            let (problem, found) = await listing.value
            guard !found else { return }
            if let reason = unavailable ?? problem {
                throw Failure.runtime("no Art-Net node answered ArtPoll, and \(reason)")
            }
            let message =
                "lightorgan: no receiver found on the local network (nor a WLED device or an Art-Net node); is `lightorgan receive` running on it?\n"
            _ = message.withCString { Glibc.write(2, $0, strlen($0)) }
        }
    }

    /// What the searches report: a DNS-SD browser's update (`receiver`, `wled`), an Art-Net node.
    enum Sighting: Sendable {
        case dnssd(String, ReceiverBrowser.Update)
        case artNet(ArtNetNode)
    }

    /// Polls for Art-Net nodes on a thread of its own (ArtPoll every 3 s, as Art-Net 4 asks),
    /// until the returned closure is called; a port or interface that cannot be used is one line
    /// on stderr, and the DNS-SD search goes on.
    private func startArtPoll(into continuation: AsyncStream<Sighting>.Continuation, logger: Logger)
        -> @Sendable () -> Void
    {
        let stopped = Mutex(false)
        let poller: ArtNetPoller
        do {
            poller = try ArtNetPoller(interface: interface ?? "")
        } catch {
            let message = "lightorgan: no Art-Net search: \(error)\n"
            _ = message.withCString { Glibc.write(2, $0, strlen($0)) }
            return {}
        }
        // Used by the polling thread alone; the mutex makes it sendable to that thread.
        let shared = Mutex(poller)
        DedicatedThread.start(named: "artnet poll") {
            shared.withLock { poller in
                poller.pollUntil({ stopped.withLock { $0 } }) { heard in
                    for node in heard { continuation.yield(.artNet(node)) }
                }
            }
        }
        return { stopped.withLock { $0 = true } }
    }

    /// Prints receivers, WLED devices and Art-Net nodes as they come and go; returns why DNS-SD is
    /// unavailable, if it is, and whether anything was found.
    private static func list(_ updates: AsyncStream<Sighting>) async -> (unavailable: String?, found: Bool) {
        var shown: [String: DiscoveredReceiver] = [:]
        var nodes: [String: ArtNetNode] = [:]
        var printedHeader = false
        var unavailable: String?
        func header() {
            guard !printedHeader else { return }
            printedHeader = true
            StandardOutput.write(row("KIND", "NAME", "HOST", "ADDRESS", "PORT"))
        }
        for await sighting in updates {
            guard case .dnssd(let kind, let update) = sighting else {
                if case .artNet(let node) = sighting, nodes[node.address] != node {
                    nodes[node.address] = node
                    header()
                    let universes =
                        node.outputUniverses.isEmpty
                        ? "(outputs not stated)"
                        : "universes \(node.outputUniverses.map(String.init).joined(separator: ","))"
                    StandardOutput.write(
                        row(
                            "artnet", node.shortName.isEmpty ? node.longName : node.shortName, universes, node.address,
                            "\(ArtNetNode.port)"))
                }
                continue
            }
            switch update {
            case .unavailable(let why):
                unavailable = why
            case .receivers(let sightings, _):
                let seen = ReceiverChoice(sightings: sightings, wanted: "", previous: nil).seen
                if !seen.isEmpty { header() }
                for device in seen where shown[kind + "/" + device.name] != device {
                    shown[kind + "/" + device.name] = device
                    StandardOutput.write(row(kind, device.name, device.hostName, device.address, "\(device.port)"))
                }
                for key in shown.keys.sorted()
                where key.hasPrefix(kind + "/") && !seen.contains(where: { kind + "/" + $0.name == key }) {
                    shown[key] = nil
                    StandardOutput.write("(\(key.dropFirst(kind.count + 1)) is gone)\n")
                }
            }
        }
        return (unavailable, printedHeader)
    }

    private static func row(_ kind: String, _ name: String, _ host: String, _ address: String, _ port: String) -> String
    {
        func pad(_ text: String, _ width: Int) -> String {
            text + String(repeating: " ", count: max(1, width - text.count))
        }
        return pad(kind, 10) + pad(name, 24) + pad(host, 28) + pad(address, 26) + port + "\n"
    }
}
