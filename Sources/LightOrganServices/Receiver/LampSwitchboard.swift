import FoundationEssentials
package import LightOrganCore
package import LightOrganNetwork
package import Logging
import Synchronization

/// Asks for the local-network name of a sender's address (`192.168.1.23` → `laptop.local`) and
/// answers later, on any thread, with nil when there is none (``HostNameResolver/lookUp(_:then:)``).
package typealias HostNameLookup =
    @Sendable (_ address: String, _ answer: @escaping @Sendable (String?) -> Void) -> Void

/// The receiver's decision point between the connections and the output.
///
/// It keeps the ``SenderArbiter`` (who drives the lights, who may stay connected) and the
/// ``LevelOutput``, behind one lock, and is the ``FrameSink`` of the listener: frames are applied
/// on the network thread that read them, with no hop to another task, so a frame reaches the
/// output microseconds after its bytes are read. What the page shows about the senders is
/// ``PageStatistics``, told of every connection and frame here under the same lock.
///
/// Invariant: when no connection has delivered a frame within the lamp timeout, the output is off;
/// after ``shutDown()`` it stays off and released.
package final class LampSwitchboard: FrameSink {
    private struct State {
        var arbiter: SenderArbiter
        var output: any LevelOutput
        var connections: [Int: FrameConnection] = [:]
        var refusedAddresses: Set<String> = []
        var isShutDown = false
        /// What the page shows about the senders.
        var page = PageStatistics()
    }

    private let state: Mutex<State>
    private let logger: Logger
    private let clock = ContinuousClock()
    private let nameLookup: HostNameLookup?

    /// `nameLookup` asks for the mDNS name of each new sender address (nil: names stay unknown).
    package init(output: any LevelOutput, rules: ReceiverRules, nameLookup: HostNameLookup? = nil, logger: Logger) {
        state = Mutex(State(arbiter: SenderArbiter(rules: rules), output: output))
        self.nameLookup = nameLookup
        self.logger = logger
    }

    package func opened(_ connection: FrameConnection) -> Bool {
        let now = clock.now
        var log: (Logger.Level, String)?
        var evicted: FrameConnection?
        var newAddress = false
        let admitted = state.withLock { state -> Bool in
            guard !state.isShutDown else { return false }
            switch state.arbiter.admit(
                connection.id, address: connection.address, peer: connection.peer, local: connection.isLocal, at: now)
            {
            case .accept(let evicting):
                state.connections[connection.id] = connection
                newAddress = state.page.opened(connection.id, address: connection.address, at: now)
                if let evicting {
                    evicted = state.connections.removeValue(forKey: evicting)
                }
                log = (.info, "sender \(connection.peer) connected (\(state.connections.count) open)")
                return true
            case .refuse(let reason):
                // Once per address at warning level; repeats go to the statistics (and --verbose).
                let first = state.refusedAddresses.insert(connection.address).inserted
                log = (first ? .warning : .debug, "refused \(connection.peer): \(reason)")
                return false
            }
        }
        if let evicted {
            logger.debug("closing idle \(evicted.peer) to make room for \(connection.peer) (receiver.max_connections)")
            evicted.close()
        }
        if let (level, message) = log { logger.log(level: level, "\(message)") }
        if admitted, newAddress, !connection.isLocal { lookUpName(of: connection.address) }
        return admitted
    }

    /// Asks once per address for the sender's local-network name, for the page and the log.
    private func lookUpName(of address: String) {
        nameLookup?(address) { [weak self] name in
            guard let self, let name else { return }
            state.withLock { $0.page.named(address, name) }
            logger.info("sender \(address) is \(name)")
        }
    }

    package func arrived(_ newest: LevelFrame?, completed: Int, bytes: Int, on connection: FrameConnection) {
        arrived(newest, beat: nil, completed: completed, bytes: bytes, on: connection)
    }

    /// A frame of a sender whose sound is analysed here (the receiver's own sound, a page's), with what the beat
    /// tracker said of it; nil `beat`: a sender over the network, whose beat stays on its side of the wire.
    package func arrived(
        _ newest: LevelFrame?, beat: BeatState?, completed: Int, bytes: Int, on connection: FrameConnection
    ) {
        let now = clock.now
        var message: String?
        var close = false
        state.withLock { state in
            guard !state.isShutDown else { return }
            switch state.arbiter.received(newest, completed: completed, bytes: bytes, from: connection.id, at: now) {
            case .ignore:
                break
            case .show(let frame, let previous):
                do {
                    try state.output.show(frame, beat: beat)
                } catch {
                    logger.error("output failed: \(error)")
                }
                state.page.shown(
                    connection.id, completed: completed, arrivedAt: now, at: clock.now, unixTime: Self.unixNow())
                if let previous, let old = state.connections[previous] {
                    message = "sender \(connection.peer) takes over the lights from \(old.peer)"
                }
            case .close(let reason, let lampsOff):
                if lampsOff { apply(.off, on: &state) }
                state.connections[connection.id] = nil
                message = "closing \(connection.peer): \(reason)"
                close = true
            }
        }
        if let message { logger.info("\(message)") }
        if close { connection.close() }
    }

    package func closed(_ connection: FrameConnection) {
        let known = state.withLock { state -> Bool in
            let known = state.connections.removeValue(forKey: connection.id) != nil
            state.page.closed(connection.id)
            if state.arbiter.closed(connection.id), !state.isShutDown { apply(.off, on: &state) }
            return known
        }
        if known { logger.info("sender \(connection.peer) disconnected") }
    }

    /// Applies the timeouts: lamps off after the lamp timeout, idle connections closed.
    package func sweep() {
        let now = clock.now
        var idle: [FrameConnection] = []
        var lampsOff = false
        state.withLock { state in
            guard !state.isShutDown else { return }
            let sweep = state.arbiter.sweep(at: now)
            if sweep.lampsOff {
                apply(.off, on: &state)
                lampsOff = true
                state.page.lampsTimedOut()
            }
            idle = sweep.idle.compactMap { state.connections.removeValue(forKey: $0) }
        }
        if lampsOff { logger.info("no frame for \(state.withLock { $0.arbiter.rules.lampTimeout }); lamps off") }
        for connection in idle {
            logger.info("closing \(connection.peer): no frame for the idle timeout (receiver.idle_timeout)")
            connection.close()
        }
    }

    /// The counters since the last call, the active peer and the open connections.
    package func takeStatistics() -> (counters: ReceiverCounters, activePeer: String?, open: Int) {
        state.withLock { state in
            let active = state.arbiter.active.flatMap { state.arbiter.peer(of: $0) }
            return (state.arbiter.takeCounters(), active, state.arbiter.openConnections)
        }
    }

    /// How long the lamps stay lit without a frame (`receiver.timeout`, changed by the page).
    package func setLampTimeout(_ timeout: Duration) {
        state.withLock { $0.arbiter.rules.lampTimeout = timeout }
    }

    /// Who drives the lamps and how well, for the page. The frame ages' percentiles are computed
    /// when ``PageStatistics/Summary/frameAge`` is read, outside the lock frames are shown under.
    package func pageSummary() -> PageStatistics.Summary {
        let now = clock.now
        return state.withLock { state in
            let driving = state.page.drivingConnection.flatMap { state.connections[$0] }
            return state.page.summary(
                at: now, drivingPeer: driving.map { ($0.address, $0.peer) }, openConnections: state.connections.count)
        }
    }

    private static func unixNow() -> Double { Date().timeIntervalSince1970 }

    /// Turns the lamps off, releases the output and closes every connection. Later frames are ignored.
    package func shutDown() {
        let connections = state.withLock { state -> [FrameConnection] in
            guard !state.isShutDown else { return [] }
            state.isShutDown = true
            state.output.shutDown()
            defer { state.connections = [:] }
            return Array(state.connections.values)
        }
        for connection in connections { connection.close() }
    }

    private func apply(_ frame: LevelFrame, on state: inout State) {
        do {
            try state.output.show(frame)
        } catch {
            logger.error("output failed: \(error)")
        }
    }
}
