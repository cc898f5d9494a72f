import LightOrganCore
public import LightOrganNetwork
public import Logging
public import ServiceLifecycle
import Synchronization

/// The Art-Net nodes on the network, for `artnet://auto` targets: polls every ``pollInterval``
/// (Art-Net 4 asks controllers for 2.5…3 s) on a thread of its own and keeps the nodes that
/// answered within ``forgetAfter``, logging each that comes and goes.
///
/// As a service it runs until graceful shutdown; ``nodes(outputting:)`` never waits.
public final class ArtNetDirectory: Service, Sendable {
    /// Seconds between two polls, nanoseconds.
    static let pollInterval: Int64 = 3_000_000_000
    /// A node that has not answered for this long is dropped (three polls missed).
    static let forgetAfter: Int64 = 10_000_000_000

    private struct State {
        /// Each node and when it last answered (monotonic ns).
        var nodes: [String: (node: ArtNetNode, heardAt: Int64)] = [:]
        var stopping = false
    }

    private let poller: Mutex<ArtNetPoller?>
    private let state = Mutex(State())
    private let logger: Logger

    /// Opens the poller on `interface` (empty: the default route's link).
    ///
    /// - Throws: ``NetworkError`` when the Art-Net port or the interface cannot be used.
    public init(interface: String, logger: Logger) throws(NetworkError) {
        let poller = try ArtNetPoller(interface: interface)
        logger.info("artnet://auto: looking for Art-Net nodes (\(poller.description), every 3 s)")
        self.poller = Mutex(poller)
        self.logger = logger
    }

    /// The addresses of the nodes heard lately that output any of `universes`, in the order they
    /// first answered.
    public func nodes(outputting universes: [Int]) -> [String] {
        state.withLock { state in
            state.nodes.values.sorted { $0.node.address < $1.node.address }.filter { $0.node.outputs(anyOf: universes) }.map(\.node.address)
        }
    }

    public func run() async throws {
        DedicatedThread.start(named: "artnet poll") { [self] in pollUntilStopped() }
        // The thread notices within a second and ends by itself; nothing waits for it.
        try? await gracefulShutdown()
        state.withLock { $0.stopping = true }
    }

    private func pollUntilStopped() {
        while !state.withLock({ $0.stopping }) {
            let heard = poller.withLock { poller -> [ArtNetNode] in
                guard let poller else { return [] }
                poller.poll()
                // Replies come within a few ms; listen until the next poll, a second at a time so
                // that a stop is noticed.
                var nodes: [ArtNetNode] = []
                let next = MonotonicClock.nanoseconds() + Self.pollInterval
                while MonotonicClock.nanoseconds() < next, !state.withLock({ $0.stopping }) {
                    nodes += poller.replies(until: min(next, MonotonicClock.nanoseconds() + 1_000_000_000))
                }
                return nodes
            }
            let now = MonotonicClock.nanoseconds()
            state.withLock { state in
                for node in heard {
                    if state.nodes[node.address] == nil {
                        let outputs = node.outputUniverses.isEmpty ? "outputs not stated" : "outputs universes \(node.outputUniverses.map(String.init).joined(separator: ", "))"
                        logger.info("artnet://auto: found the Art-Net node \(node.address) \"\(node.shortName)\" (\(outputs))")
                    }
                    state.nodes[node.address] = (node, now)
                }
                for (address, entry) in state.nodes where now - entry.heardAt > Self.forgetAfter {
                    logger.info("artnet://auto: the Art-Net node \(address) \"\(entry.node.shortName)\" stopped answering; no longer sent to")
                    state.nodes[address] = nil
                }
            }
        }
    }
}
