import CAvahi
import Glibc
public import LightOrganCore
public import Logging

/// Finds receivers (or WLED devices) on the local network: browses DNS-SD for `_lightorgan._tcp`
/// (or `_wled._tcp`) through the Avahi
/// daemon and resolves each service to a host, an address and a port.
///
/// Every service seen gets a resolver that stays open, so a receiver that comes back on another
/// address or port is seen again. What is known is delivered as ``Update``s on ``updates``, each
/// with every resolved sighting.
public final class ReceiverBrowser: @unchecked Sendable {
    // @unchecked: `browser`, `resolvers`, `sightings`, `settled` are used only on the Avahi poll
    // thread (in callbacks); ``AvahiConnection`` serialises them and stops that thread before freeing.

    /// What discovery knows now.
    public enum Update: Sendable, Equatable {
        /// Every resolved receiver seen now. `settled`: the first look at the network is over
        /// (Avahi's "all for now", and every service then seen resolved or given up), so the list
        /// is complete as far as anyone can tell: an empty one means none is there.
        case receivers([DiscoveredReceiver], settled: Bool)
        /// Discovery cannot work now; the text says why and what to do. It may come back.
        case unavailable(String)
    }

    private struct SightingKey: Hashable {
        var interface: AvahiIfIndex
        var proto: AvahiProtocol
        var name: String
        var domain: String

        /// The key of what a browser or resolver callback reports.
        init(
            _ interface: AvahiIfIndex, _ proto: AvahiProtocol, _ name: UnsafePointer<CChar>,
            _ domain: UnsafePointer<CChar>
        ) {
            self.interface = interface
            self.proto = proto
            self.name = String(cString: name)
            self.domain = String(cString: domain)
        }
    }

    /// The updates, newest last; the stream ends with ``close()``.
    public let updates: AsyncStream<Update>
    private let continuation: AsyncStream<Update>.Continuation
    private let logger: Logger
    /// The DNS-SD type browsed: `_lightorgan._tcp`, or `_wled._tcp` for WLED devices.
    private let serviceType: String
    private let connection: AvahiConnection
    private var browser: OpaquePointer?
    private var resolvers: [SightingKey: OpaquePointer] = [:]
    private var sightings: [SightingKey: DiscoveredReceiver] = [:]
    /// Avahi said "all for now".
    private var browsedAll = false
    /// Resolvers that have not answered yet.
    private var pending: Set<SightingKey> = []

    /// Starts browsing.
    ///
    /// - Throws: ``DiscoveryError`` when Avahi cannot be used at all (no D-Bus system bus).
    public init(logger: Logger, serviceType: String = ServiceName.serviceType) throws(DiscoveryError) {
        (updates, continuation) = AsyncStream.makeStream(bufferingPolicy: .bufferingNewest(16))
        self.logger = logger
        self.serviceType = serviceType
        connection = try AvahiConnection()
        try connection.start { [unowned self] state in stateChanged(state) }
    }

    deinit { close() }

    /// Stops browsing and ends ``updates``. Safe to call more than once, from any thread but the
    /// Avahi thread.
    public func close() {
        guard connection.close() else { return }
        browser = nil
        resolvers = [:]
        continuation.finish()
    }

    private func stateChanged(_ state: AvahiConnection.State) {
        switch state {
        case .running(let client):
            guard browser == nil else { return }
            browser = avahi_service_browser_new(
                client, AvahiIfIndex(AVAHI_IF_UNSPEC), AvahiProtocol(AVAHI_PROTO_UNSPEC), serviceType, nil,
                AvahiLookupFlags(0), Self.browserCallback, Unmanaged.passUnretained(self).toOpaque())
            if browser == nil {
                continuation.yield(
                    .unavailable("cannot browse: \(AvahiConnection.describe(avahi_client_errno(client)))"))
            }
        case .waitingForDaemon:
            continuation.yield(.unavailable(Self.noDaemon))
        case .registering:
            break
        case .lost:
            // The client and everything made from it are gone.
            browser = nil
            resolvers = [:]
            sightings = [:]
            pending = []
            browsedAll = false
            continuation.yield(.unavailable(Self.noDaemon))
        case .failed(let why):
            continuation.yield(.unavailable("Avahi failed: \(why)"))
        }
    }

    /// What to tell a user whose machine runs no Avahi daemon.
    static let noDaemon =
        "discovery is unavailable: no Avahi daemon answers (start it: sudo systemctl start avahi-daemon), "
        + "or set the receiver's address in sender.host"

    private static let browserCallback: AvahiServiceBrowserCallback = {
        _, interface, proto, event, name, type, domain, _, userdata in
        guard let userdata else { return }
        let browser = Unmanaged<ReceiverBrowser>.fromOpaque(userdata).takeUnretainedValue()
        browser.browsed(event, interface: interface, proto: proto, name: name, type: type, domain: domain)
    }

    private func browsed(
        _ event: AvahiBrowserEvent, interface: AvahiIfIndex, proto: AvahiProtocol,
        name: UnsafePointer<CChar>?, type: UnsafePointer<CChar>?, domain: UnsafePointer<CChar>?
    ) {
        switch event {
        case AVAHI_BROWSER_NEW:
            guard let name, let type, let domain, let client = connectionClient() else { return }
            let key = SightingKey(interface, proto, name, domain)
            guard resolvers[key] == nil else { return }
            let resolver = avahi_service_resolver_new(
                client, interface, proto, name, type, domain, proto, AvahiLookupFlags(0), Self.resolverCallback,
                Unmanaged.passUnretained(self).toOpaque())
            if let resolver {
                resolvers[key] = resolver
                pending.insert(key)
            }
        case AVAHI_BROWSER_REMOVE:
            guard let name, let domain else { return }
            let key = SightingKey(interface, proto, name, domain)
            if let resolver = resolvers.removeValue(forKey: key) { avahi_service_resolver_free(resolver) }
            let wasPending = pending.remove(key) != nil
            if sightings.removeValue(forKey: key) != nil || wasPending { deliver() }
        case AVAHI_BROWSER_ALL_FOR_NOW:
            if !browsedAll {
                browsedAll = true
                deliver()
            }
        case AVAHI_BROWSER_FAILURE:
            let why = connectionClient().map { AvahiConnection.describe(avahi_client_errno($0)) } ?? "unknown error"
            continuation.yield(.unavailable("browsing the network failed: \(why)"))
        default:
            break
        }
    }

    private func connectionClient() -> OpaquePointer? {
        browser.flatMap { avahi_service_browser_get_client($0) }
    }

    private static let resolverCallback: AvahiServiceResolverCallback = {
        _, interface, proto, event, name, _, domain, hostName, address, port, _, _, userdata in
        guard let userdata, let name, let domain else { return }
        let browser = Unmanaged<ReceiverBrowser>.fromOpaque(userdata).takeUnretainedValue()
        let key = SightingKey(interface, proto, name, domain)
        guard event == AVAHI_RESOLVER_FOUND, let hostName, let address else {
            browser.unresolved(key)
            return
        }
        browser.resolved(key, hostName: String(cString: hostName), address: address, port: Int(port))
    }

    private func resolved(_ key: SightingKey, hostName: String, address: UnsafePointer<AvahiAddress>, port: Int) {
        var text = [CChar](repeating: 0, count: 64)
        avahi_address_snprint(&text, text.count, address)
        var numeric = String(cCharacters: text)
        let interface = Self.interfaceName(key.interface)
        if numeric.lowercased().hasPrefix("fe80:") { numeric += "%\(interface)" }
        let sighting = DiscoveredReceiver(
            name: key.name, hostName: hostName, address: numeric, port: port, interface: interface)
        let wasPending = pending.remove(key) != nil
        guard sightings[key] != sighting || wasPending else { return }
        sightings[key] = sighting
        deliver()
    }

    private func unresolved(_ key: SightingKey) {
        logger.debug("could not resolve receiver \"\(key.name)\" on \(Self.interfaceName(key.interface))")
        if let resolver = resolvers.removeValue(forKey: key) { avahi_service_resolver_free(resolver) }
        let wasPending = pending.remove(key) != nil
        if sightings.removeValue(forKey: key) != nil || wasPending { deliver() }
    }

    private func deliver() {
        continuation.yield(.receivers(Array(sightings.values), settled: browsedAll && pending.isEmpty))
    }

    private static func interfaceName(_ index: AvahiIfIndex) -> String {
        var name = [CChar](repeating: 0, count: Int(IF_NAMESIZE) + 1)
        guard index >= 0, if_indextoname(UInt32(index), &name) != nil else { return "interface \(index)" }
        return String(cCharacters: name)
    }
}
