public import LightOrganCore
public import LightOrganDiscovery
public import Logging
public import ServiceLifecycle
import Synchronization

/// The receiver of a sender with `sender.host: auto`, found by DNS-SD.
///
/// As a service it follows a ``ReceiverBrowser`` and keeps a ``ReceiverChoice``: the receiver
/// named by `sender.receiver_name`, else the one already chosen while it is there, else the first
/// by name. It logs what it sees and what it chose whenever that changes, and when discovery is
/// unavailable, why and what to do. ``locate()`` waits until a receiver is chosen.
public final class DiscoveryLocator: ReceiverLocator, Service {
    private struct State {
        var choice: ReceiverChoice?
        var waiters: [Int: CheckedContinuation<Endpoint?, Never>] = [:]
        var nextWaiter = 0
        /// ``run()`` has returned: no receiver will be found any more.
        var isFinished = false
    }

    private let wanted: String
    private let logger: Logger
    private let service: DiscoveredService
    private let browser: ReceiverBrowser
    private let state = Mutex(State())

    /// Starts browsing; `wanted` is `sender.receiver_name` (empty: any).
    ///
    /// - Throws: ``DiscoveryError`` when Avahi cannot be used at all.
    public init(wanted: String, logger: Logger, service: DiscoveredService = .receiver) throws(DiscoveryError) {
        self.wanted = wanted
        self.logger = logger
        self.service = service
        browser = try ReceiverBrowser(logger: logger, serviceType: service.type)
    }

    /// The address chosen now, if any, without waiting (for a lighting target's thread).
    public var current: Endpoint? { state.withLock { $0.choice?.chosen?.endpoint } }

    public var description: String {
        state.withLock { $0.choice?.chosen.map { "\"\($0.name)\"" } }
            ?? (wanted.isEmpty ? "the discovered receiver" : "\"\(wanted)\"")
    }

    /// Follows the browser until graceful shutdown or cancellation.
    public func run() async throws {
        await withGracefulShutdownHandler {
            await withTaskCancellationHandler {
                await follow()
            } onCancel: {
                browser.close()
            }
        } onGracefulShutdown: {
            self.browser.close()
        }
        let waiters = state.withLock { state in
            state.isFinished = true
            defer { state.waiters = [:] }
            return state.waiters.values
        }
        for waiter in waiters { waiter.resume(returning: nil) }
    }

    private func follow() async {
        var lastMessage = ""
        for await update in browser.updates {
            let message: String
            var level = Logger.Level.info
            switch update {
            case .unavailable(let why):
                message = why
                level = .warning
            case .receivers(let sightings, let settled):
                // Only this loop writes the choice: reading the previous one first is race-free.
                let previous = state.withLock { $0.choice?.chosen?.name }
                let choice = ReceiverChoice(sightings: sightings, wanted: wanted, previous: previous)
                // Until the first look is complete, only the receiver asked for by name is taken:
                // "the first by name" needs the whole list.
                guard settled || (!wanted.isEmpty && choice.chosen != nil) else { continue }
                let waiters = state.withLock { state -> [CheckedContinuation<Endpoint?, Never>] in
                    state.choice = choice
                    guard choice.chosen != nil else { return [] }
                    defer { state.waiters = [:] }
                    return Array(state.waiters.values)
                }
                if let endpoint = choice.chosen?.endpoint {
                    for waiter in waiters { waiter.resume(returning: endpoint) }
                }
                message = choice.summary(wanted: wanted, service: service)
            }
            if message != lastMessage { logger.log(level: level, "\(message)") }
            lastMessage = message
        }
    }

    public func locate() async -> Endpoint? {
        if let endpoint = state.withLock({ $0.choice?.chosen?.endpoint }) { return endpoint }
        let id = state.withLock { state in
            defer { state.nextWaiter += 1 }
            return state.nextWaiter
        }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let ready = state.withLock { state -> Endpoint?? in
                    if let endpoint = state.choice?.chosen?.endpoint { return .some(endpoint) }
                    if Task.isCancelled || state.isFinished { return .some(nil) }
                    state.waiters[id] = continuation
                    return nil
                }
                if let ready { continuation.resume(returning: ready) }
            }
        } onCancel: {
            state.withLock { $0.waiters.removeValue(forKey: id) }?.resume(returning: nil)
        }
    }
}
