#if canImport(Glibc)
import Glibc
#endif

/// Binds `descriptor` (a TCP or UDP IPv4 socket) to 127.0.0.1 on a port the kernel picks and returns
/// that port; nil when it cannot.
///
/// Written with `getaddrinfo` and a `sockaddr_storage` read as bytes rather than `sockaddr_in`'s
/// fields: with several C modules declaring `netinet/in.h` (Glibc, NIO's CNIOLinux), which one owns
/// `sockaddr_in` depends on build order, and member import visibility then refuses its fields.
func bindToLoopback(_ descriptor: CInt) -> Int? {
    var hints = addrinfo()
    hints.ai_family = AF_INET
    hints.ai_flags = AI_NUMERICHOST | AI_NUMERICSERV
    var list: UnsafeMutablePointer<addrinfo>?
    guard getaddrinfo("127.0.0.1", "0", &hints, &list) == 0, let first = list else { return nil }
    defer { freeaddrinfo(first) }
    guard bind(descriptor, first.pointee.ai_addr, first.pointee.ai_addrlen) == 0 else { return nil }
    var storage = sockaddr_storage()
    var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
    let named = withUnsafeMutablePointer(to: &storage) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) == 0 }
    }
    guard named else { return nil }
    // sockaddr_in: family (2 bytes), then the port in network order.
    return withUnsafeBytes(of: &storage) { Int($0[2]) << 8 | Int($0[3]) }
}
