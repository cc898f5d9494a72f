import LightOrganCore

#if canImport(Glibc)
public import Glibc
#endif

/// A socket address as numeric text, for logs and the page: `192.168.1.60`, `fe80::1%eth0`, or with
/// the port `192.168.1.60:8181`, `[fd00::60]:8181`. Never asks DNS (`NI_NUMERICHOST`).
public enum NumericAddress {
    /// The host of `address` (`length` bytes of a `sockaddr_in` or `sockaddr_in6`), and with
    /// `withPort` its port after a colon (an IPv6 host then in brackets); nil for other families or
    /// when the C library cannot write it.
    public static func text(of address: UnsafePointer<sockaddr>, length: socklen_t, withPort: Bool = false) -> String? {
        let family = CInt(address.pointee.sa_family)
        guard family == AF_INET || family == AF_INET6 else { return nil }
        var host = [CChar](repeating: 0, count: Int(NI_MAXHOST))
        var service = [CChar](repeating: 0, count: Int(NI_MAXSERV))
        let written =
            withPort
            ? getnameinfo(
                address, length, &host, socklen_t(host.count), &service, socklen_t(service.count),
                NI_NUMERICHOST | NI_NUMERICSERV)
            : getnameinfo(address, length, &host, socklen_t(host.count), nil, 0, NI_NUMERICHOST)
        guard written == 0 else { return nil }
        let hostText = String(cCharacters: host)
        guard withPort else { return hostText }
        return family == AF_INET6
            ? "[\(hostText)]:\(String(cCharacters: service))" : "\(hostText):\(String(cCharacters: service))"
    }

    /// The host of an address held in a `sockaddr_storage` of `length` meaningful bytes.
    public static func text(of storage: sockaddr_storage, length: socklen_t, withPort: Bool = false) -> String? {
        withUnsafePointer(to: storage) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                text(of: $0, length: length, withPort: withPort)
            }
        }
    }
}
