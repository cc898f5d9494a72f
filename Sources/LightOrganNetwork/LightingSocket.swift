import LightOrganCore

#if canImport(Glibc)
import Glibc
#endif

/// A UDP socket for one lighting target: resolves the device's name (or names: the Art-Net nodes
/// of `artnet://auto`), and sends datagrams without ever waiting (`MSG_DONTWAIT`): a full send
/// buffer drops the packet, the next one is newer.
///
/// Broadcast is allowed (Art-Net to a broadcast address); multicast leaves with a TTL of 1, the
/// local network only (sACN groups 239.255.hi.lo). With an interface, multicast leaves by it
/// (`IP_MULTICAST_IF`), the socket is bound to it (`SO_BINDTODEVICE`, so broadcast and unicast
/// leave by it too), and the host word `broadcast` means that interface's own broadcast address.
/// Not thread-safe: its owner serialises use.
final class LightingSocket {
    /// One address every datagram goes to.
    struct Destination {
        var address: sockaddr_storage
        var length: socklen_t
        /// The address as text, for logs (`192.168.1.60`).
        var text: String
    }

    /// The resolved devices, with the port every datagram goes to (at least one).
    let destinations: [Destination]
    /// The interface it is bound to; empty: the one the routing table picks.
    let interface: String
    private let descriptor: CInt

    /// The resolved addresses as text, for logs (`192.168.1.60`, `10.0.0.7, 10.0.0.8`).
    var addressText: String { destinations.map(\.text).joined(separator: ", ") }

    /// What sending one datagram came to.
    enum Outcome: Equatable {
        case sent
        /// The kernel's buffer was full: dropped.
        case dropped
        /// The network refused it (unreachable, no route…): errno.
        case failed(CInt)
    }

    /// Resolves `hosts` (names or addresses, or the word ``LightingTarget/broadcast``; blocks on
    /// DNS) and opens a socket for `port`, bound to `interface` when one is named.
    ///
    /// - Throws: ``NetworkError`` saying why, in one line: a name that does not resolve, an
    ///   interface this machine does not have (listing those it has).
    init(hosts: [String], port: Int, interface: String = "") throws(NetworkError) {
        let index = interface.isEmpty ? 0 : try Self.index(of: interface)
        var destinations: [Destination] = []
        for host in hosts {
            let address =
                host == LightingTarget.broadcast
                ? (interface.isEmpty ? nil : Self.broadcastAddress(of: interface)) ?? "255.255.255.255" : host
            destinations.append(try Self.resolve(address, port: port))
        }
        guard let family = destinations.first.map({ CInt($0.address.ss_family) }) else {
            throw NetworkError(description: "no address to send to")
        }
        // One socket, one family: every lighting device speaks IPv4, the first address decides.
        destinations.removeAll { CInt($0.address.ss_family) != family }
        let descriptor = socket(family, Int32(SOCK_DGRAM.rawValue | SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else {
            throw NetworkError(description: "cannot open a UDP socket: \(NetworkError.errnoText(errno))")
        }
        var on: CInt = 1
        if family == AF_INET {
            setsockopt(descriptor, SOL_SOCKET, SO_BROADCAST, &on, socklen_t(MemoryLayout<CInt>.size))
            var ttl: UInt8 = 1
            setsockopt(descriptor, CInt(IPPROTO_IP), IP_MULTICAST_TTL, &ttl, socklen_t(MemoryLayout<UInt8>.size))
        }
        if index != 0 {
            // struct ip_mreqn: group (unused here), local address (any), the interface's index.
            var request: [CInt] = [0, 0, CInt(index)]
            if family == AF_INET {
                setsockopt(
                    descriptor, CInt(IPPROTO_IP), IP_MULTICAST_IF, &request, socklen_t(3 * MemoryLayout<CInt>.size))
            } else {
                var interfaceIndex = CInt(index)
                setsockopt(
                    descriptor, CInt(IPPROTO_IPV6), IPV6_MULTICAST_IF, &interfaceIndex,
                    socklen_t(MemoryLayout<CInt>.size))
            }
            Self.bind(descriptor, toDevice: interface)
        }
        self.descriptor = descriptor
        self.destinations = destinations
        self.interface = interface
    }

    deinit { close(descriptor) }

    /// Sends `bytes` to every destination, or, for sACN multicast, to the group of
    /// `multicastUniverse`; the outcome of the last send that did not succeed, else `.sent`.
    func send(_ bytes: [UInt8], count: Int? = nil, multicastUniverse: Int? = nil) -> Outcome {
        var outcome = Outcome.sent
        for destination in destinations {
            var target = destination.address
            if let universe = multicastUniverse {
                // 239.255.hi.lo: the universe's group (E1.31 §9.3.1).
                withUnsafeMutableBytes(of: &target) { raw in
                    // sockaddr_in: family (2 bytes), port (2), then the address in network order.
                    raw[4] = 239
                    raw[5] = 255
                    raw[6] = UInt8(universe >> 8 & 0xff)
                    raw[7] = UInt8(universe & 0xff)
                }
            }
            var sent: Int
            repeat {
                sent = bytes.withUnsafeBytes { payload in
                    withUnsafePointer(to: &target) { pointer in
                        pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { address in
                            sendto(
                                descriptor, payload.baseAddress, count ?? payload.count,
                                Int32(MSG_DONTWAIT | MSG_NOSIGNAL), address, destination.length)
                        }
                    }
                }
            } while sent < 0 && errno == EINTR
            if sent < 0 {
                outcome = errno == EAGAIN || errno == EWOULDBLOCK || errno == ENOBUFS ? .dropped : .failed(errno)
            }
            if multicastUniverse != nil { break }  // one group, whatever the host word resolved to
        }
        return outcome
    }

    /// `host` resolved for `port`, IPv4 first (every lighting device speaks it; many not IPv6).
    private static func resolve(_ host: String, port: Int) throws(NetworkError) -> Destination {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_DGRAM.rawValue)
        hints.ai_flags = AI_NUMERICSERV
        var list: UnsafeMutablePointer<addrinfo>?
        guard getaddrinfo(host, String(port), &hints, &list) == 0, let first = list else {
            let hint =
                host.hasSuffix(".local") ? " (a .local name needs libnss-mdns: sudo apt install libnss-mdns)" : ""
            throw NetworkError(description: "cannot resolve \(host)\(hint)")
        }
        defer { freeaddrinfo(first) }
        var chosen = first
        var entry: UnsafeMutablePointer<addrinfo>? = first
        while let candidate = entry {
            if candidate.pointee.ai_family == AF_INET {
                chosen = candidate
                break
            }
            entry = candidate.pointee.ai_next
        }
        var storage = sockaddr_storage()
        withUnsafeMutableBytes(of: &storage) { target in
            target.copyMemory(
                from: UnsafeRawBufferPointer(start: chosen.pointee.ai_addr, count: Int(chosen.pointee.ai_addrlen)))
        }
        let length = chosen.pointee.ai_addrlen
        return Destination(
            address: storage, length: length, text: NumericAddress.text(of: storage, length: length) ?? "?")
    }

    /// The IPv4 directed broadcast address of `interface` (`10.0.0.255`: its address with every
    /// host bit set, from its netmask), nil when it has no IPv4 address. Computed rather than
    /// read, since an address added without `brd` has none recorded.
    static func broadcastAddress(of interface: String) -> String? {
        var list: UnsafeMutablePointer<ifaddrs>?
        guard getifaddrs(&list) == 0, let first = list else { return nil }
        defer { freeifaddrs(first) }
        var entry: UnsafeMutablePointer<ifaddrs>? = first
        while let current = entry {
            defer { entry = current.pointee.ifa_next }
            guard String(cString: current.pointee.ifa_name) == interface,
                let address = current.pointee.ifa_addr, CInt(address.pointee.sa_family) == AF_INET,
                let mask = current.pointee.ifa_netmask
            else { continue }
            let host = address.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { $0.pointee.sin_addr.s_addr }
            let bits = mask.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { $0.pointee.sin_addr.s_addr }
            var broadcast = sockaddr_in()
            broadcast.sin_family = sa_family_t(AF_INET)
            broadcast.sin_addr.s_addr = host | ~bits  // both in network order: the bits line up
            return withUnsafePointer(to: &broadcast) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    NumericAddress.text(of: $0, length: socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
        }
        return nil
    }

    /// Binds a socket to `interface` (`SO_BINDTODEVICE`): what it sends leaves by that link.
    /// Linux 5.7 and later let any user do this; where it is refused, multicast still leaves by the
    /// interface (`IP_MULTICAST_IF`) and a directed broadcast address routes by its subnet.
    static func bind(_ descriptor: CInt, toDevice interface: String) {
        let name = Array(interface.utf8CString)
        _ = setsockopt(descriptor, SOL_SOCKET, SO_BINDTODEVICE, name, socklen_t(name.count))
    }

    /// The kernel's index of `interface`.
    ///
    /// - Throws: ``NetworkError`` naming the interfaces this machine has, when it has not that one.
    static func index(of interface: String) throws(NetworkError) -> CUnsignedInt {
        let index = if_nametoindex(interface)
        guard index != 0 else {
            throw NetworkError(
                description:
                    "this machine has no network interface \(interface) (it has \(interfaceNames().joined(separator: ", "))); "
                    + "fix interface= or lighting.interface (`ip link` lists them)")
        }
        return index
    }

    /// The names of this machine's network interfaces, for messages.
    static func interfaceNames() -> [String] {
        guard let list = if_nameindex() else { return [] }
        defer { if_freenameindex(list) }
        var names: [String] = []
        var entry = list
        while entry.pointee.if_index != 0, let name = entry.pointee.if_name {
            names.append(String(cString: name))
            entry += 1
        }
        return names
    }
}
