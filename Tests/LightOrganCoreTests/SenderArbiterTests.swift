import LightOrganCore
import Testing

@Suite("Which sender drives the lights, and who may stay connected")
struct SenderArbiterTests {
    let start = ContinuousClock.now
    func at(_ milliseconds: Int) -> ContinuousClock.Instant { start + .milliseconds(milliseconds) }
    let frame = LevelFrame(bass: 200, mid: 100, treble: 50)

    func arbiter(_ configure: (inout ReceiverRules) -> Void = { _ in }) -> SenderArbiter {
        var rules = ReceiverRules()
        configure(&rules)
        return SenderArbiter(rules: rules)
    }

    /// Senders 1 ("a", 10.0.0.1) and 2 ("b", 10.0.0.2) admitted at 0 ms; 1 drives from its frame at `ms`.
    func aDrivingBesideB(from ms: Int) -> SenderArbiter {
        var arbiter = arbiter()
        _ = arbiter.admit(1, address: "10.0.0.1", peer: "a", at: at(0))
        _ = arbiter.admit(2, address: "10.0.0.2", peer: "b", at: at(0))
        _ = arbiter.received(frame, completed: 1, bytes: 3, from: 1, at: at(ms))
        return arbiter
    }

    @Test("the first sender drives; a newer one takes over only after streaming for the takeover delay")
    func takeover() {
        var arbiter = arbiter()
        #expect(arbiter.admit(1, address: "10.0.0.1", peer: "a", at: at(0)) == .accept(evicting: nil))
        #expect(
            arbiter.received(frame, completed: 1, bytes: 3, from: 1, at: at(0)) == .show(frame, takingOverFrom: nil))
        #expect(arbiter.admit(2, address: "10.0.0.2", peer: "b", at: at(5)) == .accept(evicting: nil))
        var shownFromB: [Int] = []
        for ms in stride(from: 10, through: 400, by: 10) {
            _ = arbiter.received(frame, completed: 1, bytes: 3, from: 1, at: at(ms))
            if case .show(_, let previous) = arbiter.received(.off, completed: 1, bytes: 3, from: 2, at: at(ms)) {
                shownFromB.append(ms)
                if shownFromB.count == 1 { #expect(previous == 1) }
            }
        }
        #expect(shownFromB.first == 260, "b streams from 10 ms; takes over 250 ms later")
        #expect(arbiter.active == 2)
        // The older one is now ignored while b streams, and counted.
        #expect(arbiter.received(frame, completed: 1, bytes: 3, from: 1, at: at(405)) == .ignore)
        #expect(arbiter.counters.ignored > 0)
    }

    @Test("when the driving sender leaves, the lamps go off and another streaming sender drives at once")
    func fallBack() {
        var arbiter = aDrivingBesideB(from: 1)
        #expect(
            arbiter.received(frame, completed: 1, bytes: 3, from: 2, at: at(2)) == .ignore,
            "b is newer but has not streamed long enough")
        let wasLit = arbiter.closed(1)
        #expect(wasLit, "a drove lit lamps: they must go off")
        #expect(
            arbiter.received(frame, completed: 1, bytes: 3, from: 2, at: at(20)) == .show(frame, takingOverFrom: nil))
    }

    @Test("a quiet driver is replaced at once, and after the lamp timeout the lamps go off once")
    func quietAndTimeout() {
        var arbiter = arbiter { $0.lampTimeout = .seconds(1) }
        _ = arbiter.admit(1, address: "10.0.0.1", peer: "a", at: at(0))
        _ = arbiter.admit(2, address: "10.0.0.2", peer: "b", at: at(0))
        _ = arbiter.received(frame, completed: 1, bytes: 3, from: 2, at: at(0))
        #expect(
            arbiter.received(frame, completed: 1, bytes: 3, from: 1, at: at(200)) == .show(frame, takingOverFrom: 2))
        #expect(arbiter.sweep(at: at(1100)).lampsOff == false)
        #expect(arbiter.sweep(at: at(1200)).lampsOff == true)
        #expect(arbiter.sweep(at: at(1300)).lampsOff == false)
        #expect(arbiter.active == nil)
    }

    @Test("both senders silent together, then their backlog in one burst: the driver keeps the lights, in either order")
    func commonStallDoesNotFlicker() {
        for olderFirst in [true, false] {
            var arbiter = arbiter()
            _ = arbiter.admit(1, address: "10.0.0.1", peer: "old", at: at(0))
            _ = arbiter.admit(2, address: "10.0.0.2", peer: "new", at: at(0))
            var shown: [Int] = []
            func deliver(_ id: Int, at ms: Int) {
                if case .show = arbiter.received(frame, completed: 1, bytes: 3, from: id, at: at(ms)) {
                    shown.append(id)
                }
            }
            for ms in stride(from: 0, to: 400, by: 10) {  // both stream; the newer takes over at 260 ms
                deliver(1, at: ms)
                if ms >= 10 { deliver(2, at: ms) }
            }
            // Nothing for 300 ms, then both at once, in socket order.
            for id in olderFirst ? [1, 2] : [2, 1] { deliver(id, at: 690) }
            for ms in stride(from: 700, to: 800, by: 10) {
                deliver(1, at: ms)
                deliver(2, at: ms)
            }
            let switches = zip(shown, shown.dropFirst()).filter { $0 != $1 }.count
            #expect(switches == 1, "older first: \(olderFirst); shown \(shown)")
            #expect(arbiter.active == 2)
        }
    }

    @Test("a driver that stops while another streams is replaced once the other was heard through its silence")
    func quietWhileOtherStreams() {
        var arbiter = aDrivingBesideB(from: 0)
        var takenAt: Int?
        for ms in stride(from: 10, through: 300, by: 10) where takenAt == nil {  // a (older) is silent from 0 ms
            if case .show = arbiter.received(.off, completed: 1, bytes: 3, from: 2, at: at(ms)) { takenAt = ms }
        }
        #expect(takenAt == 150, "quiet after 150 ms, b heard all along")
    }

    @Test("time the receiver itself was stopped does not count: a sender stays connected and driving")
    func receiverPaused() {
        var arbiter = arbiter { $0.idleTimeout = .seconds(10) }
        _ = arbiter.admit(1, address: "10.0.0.1", peer: "a", at: at(0))
        for ms in stride(from: 0, through: 1000, by: 100) {
            _ = arbiter.received(frame, completed: 1, bytes: 3, from: 1, at: at(ms))
            _ = arbiter.sweep(at: at(ms))
        }
        // Stopped for 12 s; the first sweep after it comes before the backlog is read.
        let afterPause = arbiter.sweep(at: at(13_000))
        #expect(!afterPause.lampsOff && afterPause.idle.isEmpty)
        #expect(arbiter.active == 1)
        #expect(
            arbiter.received(frame, completed: 1200, bytes: 3600, from: 1, at: at(13_001))
                == .show(frame, takingOverFrom: nil))
        // Real silence after that still counts.
        #expect(arbiter.sweep(at: at(13_600)).lampsOff == false)
        #expect(arbiter.sweep(at: at(14_100)).lampsOff == true)
    }

    @Test("an all-off frame then silence: the timeout has nothing to turn off")
    func offFrameThenTimeout() {
        var arbiter = arbiter()
        _ = arbiter.admit(1, address: "10.0.0.1", peer: "a", at: at(0))
        _ = arbiter.received(.off, completed: 1, bytes: 3, from: 1, at: at(0))
        #expect(arbiter.sweep(at: at(2000)).lampsOff == false)
    }

    @Test("connections without a complete frame are closed after the idle timeout; partial bytes do not count")
    func idle() {
        var arbiter = arbiter { $0.idleTimeout = .seconds(2) }
        _ = arbiter.admit(1, address: "10.0.0.1", peer: "a", at: at(0))
        _ = arbiter.admit(2, address: "10.0.0.2", peer: "b", at: at(0))
        #expect(arbiter.received(nil, completed: 0, bytes: 2, from: 2, at: at(100)) == .ignore)
        for ms in stride(from: 0, through: 2500, by: 500) {
            _ = arbiter.received(frame, completed: 1, bytes: 3, from: 1, at: at(ms))
        }
        #expect(arbiter.sweep(at: at(1900)).idle == [])
        #expect(arbiter.sweep(at: at(2000)).idle == [2])
        #expect(arbiter.openConnections == 1)
    }

    @Test("the allow list refuses others; a full receiver closes the idlest connection, never the driving one")
    func admission() {
        var arbiter = arbiter {
            $0.allow = [AddressRange("192.168.1.0/24")!, AddressRange("::1")!]
            $0.maxConnections = 2
        }
        guard case .refuse(let reason) = arbiter.admit(1, address: "10.0.0.1", peer: "x", at: at(0)) else {
            Issue.record("10.0.0.1 was let in")
            return
        }
        #expect(reason.contains("10.0.0.1") && reason.contains("receiver.allow") && reason.contains("192.168.1.0/24"))
        #expect(arbiter.admit(2, address: "192.168.1.5", peer: "a", at: at(0)) == .accept(evicting: nil))
        _ = arbiter.received(frame, completed: 1, bytes: 3, from: 2, at: at(10))
        #expect(arbiter.admit(3, address: "::1", peer: "b", at: at(20)) == .accept(evicting: nil))
        #expect(arbiter.admit(4, address: "::1", peer: "c", at: at(30)) == .accept(evicting: 3))
        #expect(arbiter.admit(5, address: "::1", peer: "d", at: at(40)) == .accept(evicting: 4))
        #expect(arbiter.active == 2)
        var solo = self.arbiter { $0.maxConnections = 1 }
        _ = solo.admit(1, address: "::1", peer: "a", at: at(0))
        _ = solo.received(frame, completed: 1, bytes: 3, from: 1, at: at(0))
        #expect(
            solo.admit(2, address: "::1", peer: "b", at: at(1))
                == .refuse(reason: "receiver.max_connections (1) reached"))
        #expect(arbiter.counters.refused == 1 && arbiter.counters.evicted == 2)
    }

    @Test("a flood is cut off before it can take the lights; the driving sender keeps them")
    func flood() {
        var arbiter = arbiter()
        _ = arbiter.admit(1, address: "10.0.0.1", peer: "a", at: at(0))
        _ = arbiter.admit(2, address: "10.0.0.2", peer: "flood", at: at(0))
        var closedAt: Int?
        for ms in 0..<300 {
            if ms % 10 == 0 { _ = arbiter.received(frame, completed: 1, bytes: 3, from: 1, at: at(ms)) }
            guard closedAt == nil else { continue }
            let verdict = arbiter.received(.off, completed: 3413, bytes: 10_240, from: 2, at: at(ms))  // 10 MB/s
            if case .close(let reason, let lampsOff) = verdict {
                closedAt = ms
                #expect(!lampsOff)
                #expect(reason.contains("flooding"))
            } else {
                #expect(verdict == .ignore)
            }
        }
        #expect(closedAt == 6)
        #expect(arbiter.active == 1)
        #expect(arbiter.counters.flooded == 1)
    }

    @Test("statistics count received, applied, superseded (backlog) and keep the last frame across intervals")
    func counters() {
        var arbiter = arbiter()
        _ = arbiter.admit(1, address: "10.0.0.1", peer: "a", at: at(0))
        _ = arbiter.received(frame, completed: 1000, bytes: 3000, from: 1, at: at(0))
        let first = arbiter.takeCounters()
        #expect(first.received == 1000 && first.applied == 1 && first.superseded == 999 && first.lastFrame == frame)
        let second = arbiter.takeCounters()
        #expect(second.received == 0 && second.lastFrame == frame)
    }
}
