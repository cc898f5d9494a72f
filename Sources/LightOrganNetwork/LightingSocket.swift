#if canImport(Glibc)
import Glibc
#endif

/// A UDP socket for one lighting target: resolves the device's name, and sends datagrams without
/// ever waiting (`MSG_DONTWAIT`): a full send buffer drops the packet, the next one is newer.
///
/// Broadcast is allowed (Art-Net to a broadcast address); multicast leaves with a TTL of 1, the
/// local network only (sACN groups 239.255.hi.lo). Not thread-safe: its owner serialises use.
final class LightingSocket {
    /// The resolved device, and the port every datagram goes to.
    let destination: sockaddr_storage
    private let length: socklen_t
    private let descriptor: CInt
    /// The resolved address as text, for logs (`192.168.1.60`).
    let addressText: String

    /// What sending one datagram came to.
    enum Outcome: Equatable {
        case sent
        /// The kernel's buffer was full: dropped.
        case dropped
        /// The network refused it (unreachable, no route…): errno.
        case failed(CInt)
    }

    /// Resolves `host` (a name or an address; blocks on DNS) and opens a socket for `port`.
    ///
    /// - Throws: ``NetworkError`` saying why, in one line.
    init(host: String, port: Int) throws(NetworkError) {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_DGRAM.rawValue)
        hints.ai_flags = AI_NUMERICSERV
        var list: UnsafeMutablePointer<addrinfo>?
        guard getaddrinfo(host, String(port), &hints, &list) == 0, let first = list else {
            let hint = host.hasSuffix(".local") ? " (a .local name needs libnss-mdns: sudo apt install libnss-mdns)" : ""
            throw NetworkError(description: "cannot resolve \(host)\(hint)")
        }
        defer { freeaddrinfo(first) }
        // IPv4 first: every lighting device speaks it; many do not speak IPv6.
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
            target.copyMemory(from: UnsafeRawBufferPointer(start: chosen.pointee.ai_addr, count: Int(chosen.pointee.ai_addrlen)))
        }
        let family = chosen.pointee.ai_family
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
        self.descriptor = descriptor
        self.destination = storage
        self.length = chosen.pointee.ai_addrlen
        self.addressText = NumericAddress.text(of: storage, length: chosen.pointee.ai_addrlen) ?? "?"
    }

    deinit { close(descriptor) }

    /// Sends `bytes` to the device, or, for sACN multicast, to the group of `multicastUniverse`.
    func send(_ bytes: [UInt8], count: Int? = nil, multicastUniverse: Int? = nil) -> Outcome {
        var target = destination
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
                        sendto(descriptor, payload.baseAddress, count ?? payload.count, Int32(MSG_DONTWAIT | MSG_NOSIGNAL), address, length)
                    }
                }
            }
        } while sent < 0 && errno == EINTR
        if sent >= 0 { return .sent }
        return errno == EAGAIN || errno == EWOULDBLOCK || errno == ENOBUFS ? .dropped : .failed(errno)
    }
}
