import LightOrganNetwork
import Testing

#if canImport(Glibc)
import Glibc
#endif

@Suite struct NumericAddressTests {
    @Test func anIPv4AddressWithAndWithoutItsPort() {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(8181).bigEndian
        inet_pton(AF_INET, "192.168.1.60", &address.sin_addr)
        let length = socklen_t(MemoryLayout<sockaddr_in>.size)
        withUnsafePointer(to: address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { generic in
                #expect(NumericAddress.text(of: generic, length: length) == "192.168.1.60")
                #expect(NumericAddress.text(of: generic, length: length, withPort: true) == "192.168.1.60:8181")
            }
        }
    }

    @Test func anIPv6AddressFromStorage() {
        var storage = sockaddr_storage()
        withUnsafeMutablePointer(to: &storage) { pointer in
            pointer.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { address in
                address.pointee.sin6_family = sa_family_t(AF_INET6)
                address.pointee.sin6_port = in_port_t(443).bigEndian
                inet_pton(AF_INET6, "fd00::60", &address.pointee.sin6_addr)
            }
        }
        let length = socklen_t(MemoryLayout<sockaddr_in6>.size)
        #expect(NumericAddress.text(of: storage, length: length) == "fd00::60")
        #expect(NumericAddress.text(of: storage, length: length, withPort: true) == "[fd00::60]:443")
    }

    @Test func anAddressOfUnknownFamilyHasNoText() {
        var storage = sockaddr_storage()
        storage.ss_family = sa_family_t(AF_UNIX)
        #expect(NumericAddress.text(of: storage, length: socklen_t(MemoryLayout<sockaddr_storage>.size)) == nil)
    }
}
