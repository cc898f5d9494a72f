import LightOrganCore
public import LightOrganNetwork
import LightOrganPOSIX
public import Logging
public import ServiceLifecycle
import Synchronization

/// The Art-Net nodes on the network, for `artnet://auto` targets: polls every 3 s
/// (``ArtNetPoller/pollInterval``) on a thread of its own and keeps the nodes that answered
/// within ``forgetAfter``, logging each that comes and goes.
///
/// As a service it runs until graceful shutdown; ``nodes(outputting:)`` never waits.
public final class ArtNetDirectory: Service, Sendable {
    /// A node that has not answered for this long is dropped (three polls missed).
    static let forgetAfter: Int64 = 10_000_000_000

    private struct State {
        /// Each node and when it last answered (monotonic ns).
        var nodes: [String: (node: ArtNetNode, heardAt: Int64)] = [:]
        var stopping = false
    }

    /// Used by the polling thread alone; the mutex makes it sendable to that thread.
    private let poller: Mutex<ArtNetPoller>
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

    /// The addresses of the nodes heard lately that output any of `universes`, in the order of
    /// their address text.
    public func nodes(outputting universes: [Int]) -> [String] {
        state.withLock { state in
            state.nodes.values.sorted { $0.node.address < $1.node.address }.filter { $0.node.outputs(anyOf: universes) }
                .map(\.node.address)
        }
    }

    public func run() async throws {
        DedicatedThread.start(named: "artnet poll") { [self] in pollUntilStopped() }
        // The thread notices within 0.2 s and ends by itself; nothing waits for it.
        try? await gracefulShutdown()
        state.withLock { $0.stopping = true }
    }

    private func pollUntilStopped() {
        poller.withLock { poller in
            poller.pollUntil({ state.withLock { $0.stopping } }) { heard in
                let now = MonotonicClock.nanoseconds()
                state.withLock { state in
                    for node in heard {
                        if state.nodes[node.address] == nil {
                            let outputs =
                                node.outputUniverses.isEmpty
                                ? "outputs not stated"
                                : "outputs universes \(node.outputUniverses.map(String.init).joined(separator: ", "))"
                            logger.info(
                                "artnet://auto: found the Art-Net node \(node.address) \"\(node.shortName)\" (\(outputs))"
                            )
                        }
                        state.nodes[node.address] = (node, now)
                    }
                    for (address, entry) in state.nodes where now - entry.heardAt > Self.forgetAfter {
                        logger.info(
                            "artnet://auto: the Art-Net node \(address) \"\(entry.node.shortName)\" stopped answering; no longer sent to"
                        )
                        state.nodes[address] = nil
                    }
                }
            }
        }
    }
}
