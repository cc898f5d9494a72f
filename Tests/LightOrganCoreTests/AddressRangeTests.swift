import LightOrganCore
import Testing

@Suite("Address ranges for receiver.allow")
struct AddressRangeTests {
    @Test("IPv4 ranges match their addresses, also when the socket reports them IPv4-mapped")
    func ipv4() throws {
        let lan = try #require(AddressRange("192.168.1.0/24"))
        #expect(lan.contains("192.168.1.20"))
        #expect(lan.contains("::ffff:192.168.1.20"))
        #expect(!lan.contains("192.168.2.20"))
        #expect(!lan.contains("fe80::1"))
        let host = try #require(AddressRange("10.0.0.7"))
        #expect(host.contains("10.0.0.7") && !host.contains("10.0.0.8"))
        let odd = try #require(AddressRange("172.16.0.0/12"))
        #expect(odd.contains("172.31.255.255") && !odd.contains("172.32.0.0"))
    }

    @Test("IPv6 ranges, with :: shorthand and zone ids")
    func ipv6() throws {
        let ula = try #require(AddressRange("fd00::/8"))
        #expect(ula.contains("fd12:3456::1"))
        #expect(!ula.contains("fe80::1"))
        let loopback = try #require(AddressRange("::1"))
        #expect(loopback.contains("::1") && loopback.contains("0:0:0:0:0:0:0:1"))
        let linkLocal = try #require(AddressRange("fe80::/10"))
        #expect(linkLocal.contains("fe80::1%wlan0"))
        #expect(AddressRange.everything.contains("anything"))
    }

    @Test(
        "text that is not an address or range is refused",
        arguments: [
            "", "192.168.1", "192.168.1.256", "192.168.1.0/33", "fd00::/129", "1:2:3:4:5:6:7:8:9", "1::2::3",
            "pi.local", "10.0.0.1/x", "::g",
        ])
    func invalid(_ text: String) {
        #expect(AddressRange(text) == nil)
    }
}

@Suite("Receiver addresses for sender.hosts")
struct EndpointTests {
    @Test("host, host:port, [IPv6]:port and bare IPv6")
    func parsing() {
        #expect(Endpoint(parsing: "pi.local") == Endpoint(host: "pi.local", port: nil))
        #expect(Endpoint(parsing: "192.168.1.20:9000") == Endpoint(host: "192.168.1.20", port: 9000))
        #expect(Endpoint(parsing: "[fe80::1%wlan0]:8181") == Endpoint(host: "fe80::1%wlan0", port: 8181))
        #expect(Endpoint(parsing: "fd00::5") == Endpoint(host: "fd00::5", port: nil))
        #expect(Endpoint(parsing: "pi:0") == nil)
        #expect(Endpoint(parsing: "pi:x") == nil)
        #expect(Endpoint(parsing: "[::1") == nil)
        #expect(Endpoint(parsing: "[fd00::5]:8181")?.description == "[fd00::5]:8181")
    }
}
