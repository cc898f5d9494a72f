import CAvahi
import Glibc

/// Finds the local-network (mDNS) name of an address: `192.168.1.23` → `laptop.local`, the way
/// `avahi-resolve --address` does, so that the page and the log can say which machine sends.
///
/// The answer comes from the machine at that address (its own Avahi or Bonjour responder); a
/// machine that runs none, or a daemon that is not running here, gives no name, and nothing waits
/// for it: ``lookUp(_:then:)`` returns at once and answers later, on the Avahi thread.
public final class HostNameResolver: @unchecked Sendable {
    // @unchecked: `client` is written on the Avahi poll thread (state changes) and read in
    // `lookUp` while that thread is held off (`AvahiConnection.whileHeld`).

    private let connection: AvahiConnection
    private var client: OpaquePointer?

    /// One pending lookup's answer, kept alive by Avahi's userdata until its callback.
    private final class Request {
        let answer: @Sendable (String?) -> Void
        init(_ answer: @escaping @Sendable (String?) -> Void) { self.answer = answer }
    }

    /// Connects to the Avahi daemon (and waits for it in the background when none runs yet).
    ///
    /// - Throws: ``DiscoveryError`` when Avahi cannot be used at all (no D-Bus system bus).
    public init() throws(DiscoveryError) {
        connection = try AvahiConnection()
        try connection.start { [unowned self] state in
            if case .running(let client) = state { self.client = client } else { self.client = nil }
        }
    }

    deinit { close() }

    /// Disconnects; lookups still pending are dropped unanswered. Not from the Avahi thread.
    public func close() {
        connection.close()
    }

    /// Asks for the name of `address` (IPv4 or IPv6 text; a `%zone` and an IPv4-mapped `::ffff:`
    /// prefix are dropped). `answer` gets the name (`laptop.local`), or nil when nobody answers
    /// within Avahi's timeout (about 5 s), the text is no address or no daemon runs. It runs once:
    /// on the Avahi thread (where it must not call back into this resolver), or at once on the
    /// caller's thread when there is nobody to ask.
    public func lookUp(_ address: String, then answer: @escaping @Sendable (String?) -> Void) {
        var text = address.split(separator: "%", maxSplits: 1).first.map(String.init) ?? address
        if text.lowercased().hasPrefix("::ffff:"), text.contains(".") { text = String(text.dropFirst(7)) }
        var parsed = AvahiAddress()
        guard !connection.isClosed,
            avahi_address_parse(text, AvahiProtocol(AVAHI_PROTO_UNSPEC), &parsed) != nil
        else {
            answer(nil)
            return
        }
        let request = Unmanaged.passRetained(Request(answer))
        let started =
            connection.whileHeld { () -> Bool in
                guard let client else { return false }
                return avahi_address_resolver_new(
                    client, AvahiIfIndex(AVAHI_IF_UNSPEC), AvahiProtocol(AVAHI_PROTO_UNSPEC), &parsed,
                    AvahiLookupFlags(0),
                    Self.callback, request.toOpaque()) != nil
            } ?? false
        if !started {
            request.release()
            answer(nil)
        }
    }

    private static let callback: AvahiAddressResolverCallback = { resolver, _, _, event, _, name, _, userdata in
        guard let userdata else { return }
        let request = Unmanaged<Request>.fromOpaque(userdata).takeRetainedValue()
        if let resolver { avahi_address_resolver_free(resolver) }
        request.answer(event == AVAHI_RESOLVER_FOUND ? name.map { String(cString: $0) } : nil)
    }
}
