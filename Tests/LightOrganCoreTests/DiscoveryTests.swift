import LightOrganCore
import Testing

@Suite("Discovery: service names and the sender's choice of receiver")
struct DiscoveryTests {
    @Test(
        "a taken name gets the next number, the Bonjour way",
        arguments: [
            ("stage", "stage (2)"), ("stage (2)", "stage (3)"), ("stage (9)", "stage (10)"), ("(2)", "(2) (2)"),
            ("stage(2)", "stage(2) (2)"), ("stage (1)", "stage (1) (2)"), ("stage (x)", "stage (x) (2)"),
        ])
    func alternativeNames(name: String, next: String) {
        #expect(ServiceName.alternative(to: name) == next)
    }

    @Test("an alternative name never exceeds 63 bytes, and is cut at a character boundary")
    func alternativeNamesFit() {
        let long = String(repeating: "é", count: 31) + "x"  // 63 bytes
        let next = ServiceName.alternative(to: long)
        #expect(next.utf8.count <= 63 && next.hasSuffix(" (2)") && next.hasPrefix("éé"))
    }

    @Test("the default name is the host name without its domain")
    func defaultName() {
        #expect(ServiceName.defaultName(hostName: "raspberrypi.local") == "raspberrypi")
        #expect(ServiceName.defaultName(hostName: "") == "lightorgan")
    }

    private func sighting(_ name: String, _ address: String, port: Int = 8181, on interface: String = "wlan0")
        -> DiscoveredReceiver
    {
        DiscoveredReceiver(name: name, hostName: "\(name).local", address: address, port: port, interface: interface)
    }

    @Test("without a wanted name the first by name is chosen, and kept while it is there")
    func firstByNameThenSticky() {
        let b = sighting("b", "192.0.2.2")
        let a = sighting("a", "192.0.2.1")
        let first = ReceiverChoice(sightings: [b, a], wanted: "", previous: nil)
        #expect(first.chosen == a && first.seen == [a, b])
        let aa = sighting("aa", "192.0.2.3")
        #expect(ReceiverChoice(sightings: [aa, b], wanted: "", previous: "b").chosen == b)
        #expect(ReceiverChoice(sightings: [aa, b], wanted: "", previous: "gone").chosen == aa)
        #expect(ReceiverChoice(sightings: [], wanted: "", previous: "b").chosen == nil)
    }

    @Test("a wanted name picks that receiver only (exact, else ignoring case)")
    func wantedName() {
        let stage = sighting("Stage", "192.0.2.1")
        let stage2 = sighting("Stage (2)", "192.0.2.2")
        #expect(ReceiverChoice(sightings: [stage, stage2], wanted: "Stage (2)", previous: "Stage").chosen == stage2)
        #expect(ReceiverChoice(sightings: [stage], wanted: "stage", previous: nil).chosen == stage)
        let missing = ReceiverChoice(sightings: [stage], wanted: "Bar", previous: nil)
        #expect(missing.chosen == nil)
        #expect(
            missing.summary(wanted: "Bar").contains("no receiver \"Bar\"")
                && missing.summary(wanted: "Bar").contains("Stage"))
    }

    @Test("one receiver seen on several interfaces is one, at its IPv4 address, else a global IPv6 one")
    func addressPreference() {
        let v6LinkLocal = sighting("pi", "fe80::1%wlan0")
        let v6Global = sighting("pi", "2001:db8::1", on: "eth0")
        let v4 = sighting("pi", "192.0.2.7", on: "eth0")
        #expect(ReceiverChoice(sightings: [v6LinkLocal, v4, v6Global], wanted: "", previous: nil).seen == [v4])
        #expect(ReceiverChoice(sightings: [v6LinkLocal, v6Global], wanted: "", previous: nil).chosen == v6Global)
        #expect(
            ReceiverChoice(sightings: [v6LinkLocal], wanted: "", previous: nil).chosen?.endpoint.description
                == "[fe80::1%wlan0]:8181")
    }

    @Test("the summary lists what is seen and says how to choose when there are several")
    func summary() {
        let choice = ReceiverChoice(
            sightings: [sighting("b", "192.0.2.2"), sighting("a", "192.0.2.1")], wanted: "", previous: nil)
        let text = choice.summary(wanted: "")
        #expect(text.contains("\"a\" (a.local, 192.0.2.1:8181), \"b\" (b.local, 192.0.2.2:8181)"))
        #expect(text.contains("streaming to \"a\"") && text.contains("sender.receiver_name"))
        #expect(ReceiverChoice(sightings: [], wanted: "", previous: nil).summary(wanted: "").contains("sender.host"))
    }
}
