import LightOrganCore
import LightOrganWeb
import Testing

@Suite("Which page connections stay open: the owner always gets in")
struct PageAdmissionTests {
    let start = ContinuousClock.now
    func at(_ milliseconds: Int) -> ContinuousClock.Instant { start + .milliseconds(milliseconds) }

    /// `count` connections from `addresses` (round robin), ids from `first`, each greeted without
    /// the key when `looking`.
    func fill(_ admission: inout PageAdmission, count: Int, addresses: [String], first: Int = 0, looking: Bool) {
        for index in 0..<count {
            let id = first + index
            #expect(
                admission.admit(id, address: addresses[index % addresses.count], at: at(index))
                    == .accept(evicting: nil))
            if looking {
                admission.upgraded(id, at: at(index))
                admission.greeted(id, withKey: false, at: at(index))
            }
        }
    }

    /// The connection `id` from `address` closes to make room for: nil (and an issue) when it is not admitted
    /// by closing one.
    func evicted(by id: Int, from address: String, _ admission: inout PageAdmission, at time: Int) -> Int? {
        guard case .accept(let evicted?) = admission.admit(id, address: address, at: at(time)) else {
            Issue.record("connection \(id) from \(address) was not admitted by closing another")
            return nil
        }
        return evicted
    }

    /// Every place but one taken by strangers' view-only pages (ids from 0), then the owner's connection 500
    /// from 10.0.0.5, still opening.
    func ownerAmongStrangers(_ strangers: [String]) -> PageAdmission {
        var admission = PageAdmission()
        fill(&admission, count: PageAdmission.capacity - 1, addresses: strangers, looking: true)
        #expect(admission.admit(500, address: "10.0.0.5", at: at(100)) == .accept(evicting: nil))
        return admission
    }

    @Test("one address holds at most perAddress connections; others still get in")
    func perAddressLimit() {
        var admission = PageAdmission()
        fill(&admission, count: PageAdmission.perAddress, addresses: ["10.0.0.9"], looking: true)
        guard case .refuse(let reason) = admission.admit(100, address: "10.0.0.9", at: at(50)) else {
            Issue.record("a 13th connection from one address was accepted")
            return
        }
        #expect(reason.contains("10.0.0.9"))
        #expect(admission.admit(101, address: "10.0.0.2", at: at(50)) == .accept(evicting: nil))
        admission.closed(0)
        #expect(admission.admit(102, address: "10.0.0.9", at: at(60)) == .accept(evicting: nil), "a place freed")
    }

    @Test("an address opens 30 connections at once, then 3 a second: a stranger's churn of TLS handshakes stays small")
    func ratePerAddress() {
        var admission = PageAdmission()
        for id in 0..<30 {
            #expect(admission.admit(id, address: "10.0.9.1", at: at(id)) == .accept(evicting: nil))
            admission.closed(id)
        }
        guard case .refuse(let reason) = admission.admit(30, address: "10.0.9.1", at: at(40)) else {
            Issue.record("a 31st connection within 40 ms was admitted")
            return
        }
        #expect(reason.contains("faster than 3 a second"))
        #expect(admission.admit(31, address: "10.0.0.5", at: at(40)) == .accept(evicting: nil), "another address")
        #expect(
            admission.admit(32, address: "10.0.9.1", at: at(400)) == .accept(evicting: nil), "a third of a second later"
        )
        #expect(admission.admit(33, address: "10.0.9.1", at: at(450)) != .accept(evicting: nil))
    }

    @Test("strangers' view-only pages in every place but one: the owner's connection in its handshake stays")
    func ownersHandshakeStays() {
        let strangers = (1...16).map { "10.0.9.\($0)" }
        var admission = ownerAmongStrangers(strangers)
        // A stranger's idle connections keep coming while the owner's TLS handshake runs.
        for id in 600..<700 {
            let closed = evicted(by: id, from: strangers[id % 16], &admission, at: id)
            #expect(closed != nil && closed != 500, "the owner's connection was closed for a stranger's")
        }
        #expect(admission.stage(of: 500) == .opening)
    }

    @Test("view-only pages give way to a newcomer; pages with the key never do")
    func viewOnlyGiveWay() {
        var admission = ownerAmongStrangers((1...8).map { "10.0.9.\($0)" })
        admission.upgraded(500, at: at(110))
        admission.greeted(500, withKey: true, at: at(120))
        #expect(admission.stage(of: 500) == .owner)
        // The owner's page reloads: each of its new connections makes room among the strangers.
        for id in 501...504 {
            let closed = evicted(by: id, from: "10.0.0.5", &admission, at: 200)
            #expect(closed.map { $0 < 500 } == true, "a stranger's view-only page, never the owner's")
        }
        #expect(admission.stage(of: 500) == .owner)
    }

    @Test("the address holding the most gives way first")
    func busiestAddressFirst() {
        var admission = PageAdmission()
        // 10.0.9.1 holds 12, the 52 others one each (oldest), all view-only.
        fill(&admission, count: 52, addresses: (1...52).map { "10.0.8.\($0)" }, looking: true)
        fill(&admission, count: 12, addresses: ["10.0.9.1"], first: 100, looking: true)
        #expect(admission.admit(999, address: "10.0.0.5", at: at(500)) == .accept(evicting: 100))
    }

    @Test("only when every place holds the key is a newcomer refused")
    func fullOfOwners() {
        var admission = PageAdmission()
        for id in 0..<PageAdmission.capacity {
            _ = admission.admit(id, address: "10.0.1.\(id / 8)", at: at(id))
            admission.startedSound(id, at: at(id))
        }
        guard case .refuse(let reason) = admission.admit(999, address: "10.0.0.5", at: at(100)) else {
            Issue.record("a page with the key was closed to make room")
            return
        }
        #expect(reason.contains("with the key"))
    }

    @Test("a connection opening for 5 s, or a socket without hello for 5 s, is overdue; a greeted one never")
    func timeouts() {
        var admission = PageAdmission()
        _ = admission.admit(1, address: "10.0.0.1", at: at(0))
        _ = admission.admit(2, address: "10.0.0.1", at: at(0))
        _ = admission.admit(3, address: "10.0.0.1", at: at(0))
        admission.upgraded(2, at: at(1000))
        admission.upgraded(3, at: at(1000))
        admission.greeted(3, withKey: false, at: at(1500))
        #expect(admission.overdue(1, at: at(4999)) == nil)
        #expect(admission.overdue(1, at: at(5000)) != nil)
        #expect(admission.overdue(2, at: at(5999)) == nil, "its hello deadline counts from the upgrade")
        #expect(admission.overdue(2, at: at(6000))?.contains("hello") == true)
        #expect(admission.overdue(3, at: at(3_600_000)) == nil)
        admission.closed(1)
        #expect(admission.overdue(1, at: at(9000)) == nil, "closed: nothing to do")
    }
}

@Suite("A log line a stranger can provoke is rate-limited")
struct RateLimitedLogTests {
    @Test("one line per kind per interval, the held-back ones counted in the next")
    func limits() {
        let start = ContinuousClock.now
        var log = RateLimitedLog(interval: .seconds(10))
        #expect(log.line("refused a", kind: "refused", at: start) == "refused a")
        #expect(log.line("closed b", kind: "overdue", at: start) == "closed b", "another kind is not held back")
        for second in 1...9 { #expect(log.line("refused x", kind: "refused", at: start + .seconds(second)) == nil) }
        #expect(
            log.line("refused c", kind: "refused", at: start + .seconds(10))
                == "refused c (and 9 more like it since the last such line)")
        #expect(log.line("refused d", kind: "refused", at: start + .seconds(25)) == "refused d")
    }
}
