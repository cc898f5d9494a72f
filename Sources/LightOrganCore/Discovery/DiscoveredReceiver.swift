/// A receiver found on the local network by DNS-SD (`_lightorgan._tcp` in `local.`), resolved.
///
/// One service is seen once per network interface and address family it is published on; each
/// sighting is one value. ``ReceiverChoice`` folds them into one address per name.
public struct DiscoveredReceiver: Sendable, Hashable {
    /// The DNS-SD instance name (`receiver.name` on the receiver), e.g. `raspberrypi` or `stage (2)`.
    public var name: String
    /// The host name the service points at, e.g. `raspberrypi.local`.
    public var hostName: String
    /// The numeric address it resolved to: `192.168.1.20`, or `fe80::1%wlan0` (link-local IPv6 with its interface).
    public var address: String
    /// TCP port, 1…65535.
    public var port: Int
    /// The local network interface it was seen on, e.g. `wlan0`.
    public var interface: String

    public init(name: String, hostName: String, address: String, port: Int, interface: String) {
        self.name = name
        self.hostName = hostName
        self.address = address
        self.port = port
        self.interface = interface
    }

    /// Whether ``address`` is IPv6.
    public var isIPv6: Bool { address.contains(":") }

    /// Where the sender connects.
    public var endpoint: Endpoint { Endpoint(host: address, port: port) }

    /// `name (host, address:port)`, for logs.
    public var description: String { "\"\(name)\" (\(hostName), \(endpoint))" }
}
