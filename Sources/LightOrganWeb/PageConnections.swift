import LightOrganCore
package import Logging
package import NIOCore
import Synchronization

/// The page server's open connections under ``PageAdmission``: admits or refuses each new one,
/// closes the one it evicts and those that stay too long in a stage, and logs refusals at info
/// (``RateLimitedLog``: one line per kind per 10 s, however many strangers knock).
///
/// Thin adapter: the decisions are ``PageAdmission``'s; this holds the channels they name. Any
/// event-loop thread may call it (one lock around both).
package final class PageConnections: Sendable {
    private struct State {
        var admission = PageAdmission()
        var channels: [PageAdmission.ConnectionID: any Channel] = [:]
        var nextID = 0
        var log = RateLimitedLog()
    }

    private let state = Mutex(State())
    private let logger: Logger

    package init(logger: Logger) {
        self.logger = logger
    }

    /// A connection was accepted: its id when it may stay (counted until it closes), nil when it
    /// must close now. Arms the handshake timeout.
    package func admit(_ channel: any Channel, address: String) -> PageAdmission.ConnectionID? {
        let now = ContinuousClock.now
        let (id, admission, evicted, line) = state.withLock { state in
            let id = state.nextID
            state.nextID += 1
            let admission = state.admission.admit(id, address: address, at: now)
            var evicted: (any Channel)?
            var line: String?
            switch admission {
            case .accept(let victim?):
                evicted = state.channels.removeValue(forKey: victim)
                state.channels[id] = channel
                line = state.log.line(
                    "page: closed a connection without the key to make room for \(address)", kind: "evicted", at: now)
            case .accept(nil):
                state.channels[id] = channel
            case .refuse(let reason):
                line = state.log.line("page: refused \(address): \(reason)", kind: "refused", at: now)
            }
            return (id, admission, evicted, line)
        }
        if let line { logger.info("\(line)") }
        if let evicted {
            logger.debug("page: closed \(evicted.remoteAddress.map(PageServer.describe) ?? "?") for \(address)")
            evicted.close(promise: nil)
        }
        guard case .accept = admission else { return nil }
        channel.closeFuture.whenComplete { [self] _ in
            state.withLock { state in
                state.admission.closed(id)
                state.channels[id] = nil
            }
        }
        closeWhenOverdue(id, channel: channel, after: PageAdmission.handshakeTimeout)
        return id
    }

    /// A WebSocket was upgraded: it has ``PageAdmission/helloTimeout`` for its hello (or start).
    func upgraded(_ id: PageAdmission.ConnectionID, channel: any Channel) {
        state.withLock { $0.admission.upgraded(id, at: .now) }
        closeWhenOverdue(id, channel: channel, after: PageAdmission.helloTimeout)
    }

    /// A `/live` socket said hello: with the key it is never closed to make room.
    func greeted(_ id: PageAdmission.ConnectionID, withKey: Bool) {
        state.withLock { $0.admission.greeted(id, withKey: withKey, at: .now) }
    }

    /// An `/audio` socket started with the key.
    func startedSound(_ id: PageAdmission.ConnectionID) {
        state.withLock { $0.admission.startedSound(id, at: .now) }
    }

    /// One timer per stage a connection enters (not a sweep waking every page server each second).
    private func closeWhenOverdue(_ id: PageAdmission.ConnectionID, channel: any Channel, after delay: Duration) {
        channel.eventLoop.scheduleTask(in: TimeAmount(delay) + .milliseconds(1)) {
            [self] in
            let now = ContinuousClock.now
            let (overdue, line) = state.withLock { state -> (Bool, String?) in
                guard let reason = state.admission.overdue(id, at: now) else { return (false, nil) }
                let address = channel.remoteAddress?.ipAddress ?? "?"
                return (true, state.log.line("page: closed \(address): \(reason)", kind: "overdue", at: now))
            }
            guard overdue else { return }
            if let line { logger.info("\(line)") }
            logger.debug("page: closed \(channel.remoteAddress.map(PageServer.describe) ?? "?"): overdue")
            channel.close(promise: nil)
        }
    }
}
