import CAvahi
import Glibc
import Synchronization

/// A client of the Avahi daemon (the system's mDNS/DNS-SD responder, reached over the D-Bus
/// system bus) with its own event thread: libavahi-client's threaded poll. It is the one place
/// where ``ReceiverPublisher``, ``ReceiverBrowser`` and ``HostNameResolver`` set up, poll and
/// close Avahi.
///
/// Made in two steps, so that its owner can hold it in a `let` and still hand its own methods
/// to it: `init()` makes the poll, ``start(stateChanged:)`` the client and the thread.
///
/// It waits for the daemon when none runs (`AVAHI_CLIENT_NO_FAIL`) and connects anew when the
/// daemon restarts. Every state change is handed to `stateChanged` on the poll thread, with the
/// poll's lock held, together with the client pointer to use: that is the only place where
/// Avahi objects (entry groups, browsers, resolvers) are made or freed, from the client that
/// ``State/running(_:)`` carries.
///
/// After the daemon was lost (``State/lost``) every object made from the old client is gone.
final class AvahiConnection: @unchecked Sendable {
    // @unchecked: `client` and everything made from it are used only on the poll thread (in
    // Avahi's callbacks), in `start` before that thread runs, or in `close()` after it has
    // stopped; the poll serialises them. `stateChanged` is written once, in `start`, before the
    // thread runs.

    /// What the daemon connection is doing.
    enum State {
        /// Connected, the daemon's server runs: publish and browse now, with this client.
        case running(OpaquePointer)
        /// No daemon answers (yet); it is waited for.
        case waitingForDaemon
        /// The host name is being registered or collides: published entries must be withdrawn
        /// and are published again on the next ``running``.
        case registering
        /// The daemon went away; every Avahi object made from the client is gone. A new client
        /// waits for the daemon to come back.
        case lost
        /// A failure that does not heal (the message says which).
        case failed(String)
    }

    private let poll: OpaquePointer
    private var client: OpaquePointer?
    private let closed = Atomic<Bool>(false)
    private var stateChanged: (State) -> Void = { _ in }

    /// Makes the poll; nothing runs until ``start(stateChanged:)``.
    ///
    /// - Throws: ``DiscoveryError/unavailable(_:)`` when Avahi cannot make its poll (out of memory).
    init() throws(DiscoveryError) {
        guard let poll = avahi_threaded_poll_new() else { throw .unavailable("out of memory") }
        self.poll = poll
    }

    /// Connects and starts the poll thread; `stateChanged` is called on that thread for every
    /// state, the first time before this returns. Called once, before anything else but `close()`.
    ///
    /// - Throws: ``DiscoveryError/unavailable(_:)`` when not even the D-Bus system bus answers, or the
    ///   thread cannot start; the connection is closed then.
    func start(stateChanged: @escaping (State) -> Void) throws(DiscoveryError) {
        self.stateChanged = stateChanged
        // Made before the thread starts: the callbacks made from inside avahi_client_new run here.
        var error: Int32 = 0
        client = newClient(error: &error)
        guard client != nil else {
            close()
            throw .unavailable(Self.describe(error))
        }
        guard avahi_threaded_poll_start(poll) >= 0 else {
            close()
            throw .unavailable("cannot start the Avahi event thread")
        }
    }

    deinit { close() }

    /// Whether ``close()`` was called (or ``start(stateChanged:)`` failed).
    var isClosed: Bool { closed.load(ordering: .acquiring) }

    /// Stops the thread and frees the client with all its objects (withdrawing what it published),
    /// then the poll. Only the first call does so and returns true; later ones return false. Safe
    /// from any thread but the poll thread.
    @discardableResult
    func close() -> Bool {
        guard !closed.exchange(true, ordering: .acquiringAndReleasing) else { return false }
        // avahi_threaded_poll_stop returns at once when the thread never started (start failed).
        avahi_threaded_poll_stop(poll)
        if let client { avahi_client_free(client) }
        client = nil
        avahi_threaded_poll_free(poll)
        return true
    }

    /// Runs `body` while the poll thread is held off, so that Avahi objects may be made from another
    /// thread; nil when the connection is closed. Must not be called from the poll thread.
    func whileHeld<T>(_ body: () -> T) -> T? {
        guard !isClosed else { return nil }
        avahi_threaded_poll_lock(poll)
        defer { avahi_threaded_poll_unlock(poll) }
        return body()
    }

    /// A client on this poll that waits for the daemon when none runs; nil (and `error` set) when
    /// not even the D-Bus system bus answers. Its first state change is reported before it returns.
    private func newClient(error: inout Int32) -> OpaquePointer? {
        avahi_client_new(
            avahi_threaded_poll_get(poll), AVAHI_CLIENT_NO_FAIL, Self.clientCallback,
            Unmanaged.passUnretained(self).toOpaque(), &error)
    }

    /// Avahi's text for an error code.
    static func describe(_ code: Int32) -> String {
        avahi_strerror(code).map { String(cString: $0) } ?? "Avahi error \(code)"
    }

    private static let clientCallback: AvahiClientCallback = { client, state, userdata in
        guard let client, let userdata else { return }
        Unmanaged<AvahiConnection>.fromOpaque(userdata).takeUnretainedValue().changed(client, state)
    }

    private func changed(_ client: OpaquePointer, _ state: AvahiClientState) {
        switch state {
        case AVAHI_CLIENT_S_RUNNING:
            stateChanged(.running(client))
        case AVAHI_CLIENT_CONNECTING:
            stateChanged(.waitingForDaemon)
        case AVAHI_CLIENT_S_REGISTERING, AVAHI_CLIENT_S_COLLISION:
            stateChanged(.registering)
        case AVAHI_CLIENT_FAILURE:
            let code = avahi_client_errno(client)
            guard code == Int32(AVAHI_ERR_DISCONNECTED) else {
                stateChanged(.failed(Self.describe(code)))
                return
            }
            // The daemon restarted or stopped: start over with a client that waits for it.
            stateChanged(.lost)
            avahi_client_free(client)
            var error: Int32 = 0
            self.client = newClient(error: &error)
            if self.client == nil { stateChanged(.failed(Self.describe(error))) }
        default:
            break
        }
    }
}
