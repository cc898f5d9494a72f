import LightOrganNetwork
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The socket addresses are made by getaddrinfo from numeric text, as the kernel hands them over: the test then
/// touches no member of sockaddr_in or sockaddr_in6, whose C definitions other modules (NIO's CNIOLinux) also
/// import.
@Suite struct NumericAddressTests {
    /// The numeric address `host`, port `port`, as getaddrinfo gives it; nil when it is not numeric.
    private func resolved<Result>(_ host: String, port: String, _ body: (UnsafePointer<sockaddr>, socklen_t) -> Result)
        -> Result?
    {
        var hints = addrinfo()
        hints.ai_flags = AI_NUMERICHOST | AI_NUMERICSERV
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var list: UnsafeMutablePointer<addrinfo>?
        guard getaddrinfo(host, port, &hints, &list) == 0, let first = list, let address = first.pointee.ai_addr else {
            return nil
        }
        defer { freeaddrinfo(list) }
        return body(address, first.pointee.ai_addrlen)
    }

    @Test func anIPv4AddressWithAndWithoutItsPort() {
        let texts = resolved("192.168.1.60", port: "8181") { address, length in
            (
                NumericAddress.text(of: address, length: length),
                NumericAddress.text(of: address, length: length, withPort: true)
            )
        }
        #expect(texts?.0 == "192.168.1.60")
        #expect(texts?.1 == "192.168.1.60:8181")
    }

    @Test func anIPv6AddressFromStorage() {
        let storage = resolved("fd00::60", port: "443") { address, length -> (sockaddr_storage, socklen_t) in
            var storage = sockaddr_storage()
            withUnsafeMutableBytes(of: &storage) { bytes in
                bytes.copyMemory(from: UnsafeRawBufferPointer(start: address, count: Int(length)))
            }
            return (storage, length)
        }
        #expect(storage.map { NumericAddress.text(of: $0.0, length: $0.1) } == "fd00::60")
        #expect(storage.map { NumericAddress.text(of: $0.0, length: $0.1, withPort: true) } == "[fd00::60]:443")
    }

    @Test func anAddressOfUnknownFamilyHasNoText() {
        var storage = sockaddr_storage()
        storage.ss_family = sa_family_t(AF_UNIX)
        #expect(NumericAddress.text(of: storage, length: socklen_t(MemoryLayout<sockaddr_storage>.size)) == nil)
    }
}
