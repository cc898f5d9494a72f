import LightOrganCore
import Testing

@Suite("PageStatistics: what the page shows about the senders, with the time passed in")
struct PageStatisticsTests {
    let start = ContinuousClock.now
    let laptop = (address: "192.168.1.20", peer: "192.168.1.20:50422")

    func at(milliseconds: Int) -> ContinuousClock.Instant { start + .milliseconds(milliseconds) }

    @Test("a negative id is a browser; others are unknown for their first second, then told by their rate")
    func senderKinds() {
        #expect(PageStatistics.senderKind(of: -1, frames: 0, openFor: nil) == .browser)
        #expect(PageStatistics.senderKind(of: -7, frames: 500, openFor: .seconds(5)) == .browser)
        #expect(PageStatistics.senderKind(of: 1, frames: 100, openFor: nil) == .unknown)
        #expect(PageStatistics.senderKind(of: 1, frames: 100, openFor: .milliseconds(999)) == .unknown)
        #expect(PageStatistics.senderKind(of: 1, frames: 30, openFor: .seconds(1)) == .lightorgan)
        #expect(PageStatistics.senderKind(of: 1, frames: 29, openFor: .seconds(1)) == .legacy)
        #expect(PageStatistics.senderKind(of: 1, frames: 60, openFor: .seconds(2)) == .lightorgan)
        #expect(PageStatistics.senderKind(of: 1, frames: 59, openFor: .seconds(2)) == .legacy)
        #expect(PageStatistics.senderKind(of: 1, frames: 0, openFor: .seconds(3)) == .legacy)
    }

    @Test("a sender's port is the number after the peer's last colon; a browser has none")
    func ports() {
        #expect(PageStatistics.port(of: 3, peer: "192.168.1.20:50422") == 50422)
        #expect(PageStatistics.port(of: 3, peer: "[fd00::5]:50123") == 50123)
        #expect(PageStatistics.port(of: 3, peer: "laptop") == nil)
        #expect(PageStatistics.port(of: -1, peer: "192.168.1.20:50422 (page microphone)") == nil)
        #expect(PageStatistics.port(of: -1, peer: "192.168.1.20:50422") == nil)
    }

    @Test("frame ages: none gives no percentiles; p50 and p99 index the sorted ages at ⌊q × count⌋, in ms")
    func percentiles() {
        var ages = PageStatistics.FrameAges()
        #expect(ages.percentiles() == nil)
        ages.record(2_500)
        #expect(ages.percentiles() == ReceiverStatus.FrameAge(p50: 2.5, p99: 2.5))
        ages = PageStatistics.FrameAges()
        for milliseconds in (1...100).reversed() { ages.record(milliseconds * 1000) }
        #expect(ages.percentiles() == ReceiverStatus.FrameAge(p50: 51, p99: 100))
    }

    @Test("frame ages keep the latest 512: a new age overwrites the oldest")
    func ring() {
        var ages = PageStatistics.FrameAges()
        for _ in 0..<PageStatistics.FrameAges.capacity { ages.record(1_000) }
        #expect(ages.samples.count == 512)
        for _ in 0..<256 { ages.record(9_000) }
        #expect(ages.samples.count == 512)
        #expect(ages.samples.prefix(256).allSatisfy { $0 == 9_000 }, "the oldest were overwritten first")
        #expect(ages.samples.suffix(256).allSatisfy { $0 == 1_000 })
        #expect(ages.percentiles() == ReceiverStatus.FrameAge(p50: 9, p99: 9))
        for _ in 0..<256 { ages.record(3_000) }
        #expect(ages.samples.allSatisfy { $0 != 1_000 })
        #expect(ages.percentiles() == ReceiverStatus.FrameAge(p50: 9, p99: 9))
        ages.record(4_000)
        #expect(ages.samples[0] == 4_000, "the ring wrapped around to its start")
    }

    @Test("the rate is the last full one-second window's, and 0 after two seconds without a frame")
    func rate() {
        var statistics = PageStatistics()
        _ = statistics.opened(1, address: laptop.address, at: start)
        func summary(_ milliseconds: Int) -> PageStatistics.Summary {
            statistics.summary(at: at(milliseconds: milliseconds), drivingPeer: laptop, openConnections: 1)
        }
        #expect(summary(0).framesPerSecond == 0, "nothing shown yet")
        // Frames every 10 ms from 0 to 990 ms: the window is not full yet.
        for tick in 0..<100 {
            let now = at(milliseconds: tick * 10)
            statistics.shown(1, completed: 1, arrivedAt: now, at: now, unixTime: 1000)
        }
        #expect(summary(990).framesPerSecond == 0)
        // The frame at 1000 ms closes the window the one at 0 ms opened: 100 frames in one second.
        statistics.shown(1, completed: 1, arrivedAt: at(milliseconds: 1000), at: at(milliseconds: 1000), unixTime: 1000)
        #expect(summary(1000).framesPerSecond == 100)
        #expect(summary(3000).framesPerSecond == 100, "two seconds after the last frame it still counts")
        #expect(summary(3001).framesPerSecond == 0, "more than two seconds: stale")
        // A frame every 200 ms from 1200 ms on: the windows closing at 2000 and 3000 ms hold 5 frames each.
        for tick in 1...10 {
            let now = at(milliseconds: 1000 + tick * 200)
            statistics.shown(1, completed: 1, arrivedAt: now, at: now, unixTime: 1000)
        }
        #expect(summary(3000).framesPerSecond == 5)
    }

    @Test("the driving sender: address, port, name, since when, its kind once it streamed a second")
    func drivingSender() {
        var statistics = PageStatistics()
        let isNewAddress = statistics.opened(4, address: laptop.address, at: start)
        #expect(isNewAddress)
        #expect(statistics.summary(at: start, drivingPeer: laptop, openConnections: 1).sender == nil)
        statistics.shown(4, completed: 1, arrivedAt: start, at: at(milliseconds: 1), unixTime: 1_700_000_000)
        #expect(statistics.drivingConnection == 4)
        var sender = statistics.summary(at: at(milliseconds: 10), drivingPeer: laptop, openConnections: 1).sender
        #expect(
            sender
                == ReceiverStatus.Sender(
                    address: "192.168.1.20", port: 50422, name: nil, kind: .unknown, since: 1_700_000_000))
        statistics.named("192.168.1.20", "laptop.local")
        for tick in 1..<50 {
            let now = at(milliseconds: tick * 20)
            statistics.shown(4, completed: 1, arrivedAt: now, at: now, unixTime: 1_700_000_001)
        }
        sender = statistics.summary(at: at(milliseconds: 1000), drivingPeer: laptop, openConnections: 1).sender
        #expect(sender?.name == "laptop.local")
        #expect(sender?.kind == .lightorgan, "50 frames in its first second")
        #expect(sender?.since == 1_700_000_000, "since when it began to drive, not its latest frame")
        sender = statistics.summary(at: at(milliseconds: 2000), drivingPeer: laptop, openConnections: 1).sender
        #expect(sender?.kind == .legacy, "50 frames over two seconds is below 30 a second")
        #expect(
            statistics.summary(at: at(milliseconds: 2000), drivingPeer: nil, openConnections: 0).sender == nil,
            "a connection the receiver no longer holds is not shown")
    }

    @Test("a new sender's frame starts a new since; closing or the lamp timeout leaves nobody driving")
    func takeoverAndEnd() {
        var statistics = PageStatistics()
        _ = statistics.opened(1, address: "192.168.1.20", at: start)
        _ = statistics.opened(2, address: "192.168.1.21", at: start)
        statistics.shown(1, completed: 1, arrivedAt: start, at: start, unixTime: 100)
        statistics.shown(2, completed: 1, arrivedAt: start, at: start, unixTime: 200)
        #expect(statistics.drivingConnection == 2)
        let phone = (address: "192.168.1.21", peer: "192.168.1.21:40000")
        #expect(statistics.summary(at: start, drivingPeer: phone, openConnections: 2).sender?.since == 200)
        statistics.closed(1)
        #expect(statistics.drivingConnection == 2, "another connection closing changes nothing")
        statistics.closed(2)
        #expect(statistics.drivingConnection == nil)
        statistics.shown(1, completed: 1, arrivedAt: start, at: start, unixTime: 300)
        statistics.lampsTimedOut()
        #expect(statistics.drivingConnection == nil)
    }

    @Test("a page's sound is shown as a browser without a port")
    func browser() {
        var statistics = PageStatistics()
        _ = statistics.opened(-1, address: "192.168.1.30", at: start)
        statistics.shown(-1, completed: 1, arrivedAt: start, at: start, unixTime: 5)
        let sender = statistics.summary(
            at: start, drivingPeer: ("192.168.1.30", "192.168.1.30:40000 (page microphone)"), openConnections: 1
        ).sender
        #expect(sender?.kind == .browser)
        #expect(sender?.port == nil)
    }

    @Test("drops count the frames a read completed beyond the newest; reconnects, addresses seen before")
    func dropsAndReconnects() {
        var statistics = PageStatistics()
        let newAddresses = [
            statistics.opened(1, address: "192.168.1.20", at: start),
            statistics.opened(2, address: "192.168.1.21", at: start),
            statistics.opened(3, address: "192.168.1.20", at: start),
        ]
        #expect(newAddresses == [true, true, false], "the same address again is not new")
        statistics.shown(1, completed: 3, arrivedAt: start, at: start, unixTime: 0)
        statistics.shown(1, completed: 1, arrivedAt: start, at: start, unixTime: 0)
        statistics.shown(1, completed: 0, arrivedAt: start, at: start, unixTime: 0)
        let summary = statistics.summary(at: start, drivingPeer: nil, openConnections: 3)
        #expect(summary.drops == 2)
        #expect(summary.reconnects == 1)
        #expect(summary.connections == 3)
    }

    @Test("a frame's age is from its arrival to its showing, whole microseconds")
    func frameAge() {
        var statistics = PageStatistics()
        _ = statistics.opened(1, address: "192.168.1.20", at: start)
        statistics.shown(
            1, completed: 1, arrivedAt: start, at: start + .microseconds(1234) + .nanoseconds(900), unixTime: 0)
        let summary = statistics.summary(at: start, drivingPeer: nil, openConnections: 1)
        #expect(summary.frameAges.samples == [1234])
        #expect(summary.frameAge == ReceiverStatus.FrameAge(p50: 1.234, p99: 1.234))
    }
}
