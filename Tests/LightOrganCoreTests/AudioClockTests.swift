import LightOrganCore
import LightOrganTestSupport
import Testing

@Suite("Frames of a live source at the pace its audio was made")
struct AudioClockTests {
    static let rate = 48_000.0
    static let millisecond: Int64 = 1_000_000

    /// Feeds `clock` a source made from `start` (ns) that hands over `block` samples at once, each
    /// block `lateness(k)` ns after its last sample was made, read in 480-sample pieces 20 µs apart.
    static func feed(
        _ clock: inout AudioClock, blocks: Range<Int>, block: Int = 1_920, start: Int64 = 5_000 * millisecond,
        lateness: (Int) -> Int64 = { _ in 0 }
    ) {
        for k in blocks {
            let end = (k + 1) * block
            let arrival = start + Int64(Double(end) * 1e9 / rate) + lateness(k)
            for piece in 1...(block / 480) {
                clock.observe(samples: k * block + piece * 480, at: arrival + Int64(piece) * 20_000)
            }
        }
    }

    @Test("audio handed over in 40 ms blocks is timed by the end of each block, not by when each piece is read")
    func blocks() throws {
        var clock = AudioClock(sampleRate: Self.rate)
        #expect(clock.origin == nil)
        Self.feed(&clock, blocks: 0..<50)
        let origin = try #require(clock.origin)
        // The last piece of a block is read 80 µs after the block arrives.
        #expect(abs(origin - 5_000 * Self.millisecond) <= Self.millisecond / 10)
        // Sample 480 of block 10 was made 30 ms before its block arrived.
        let made = try #require(clock.nanoseconds(atSample: 10 * 1_920 + 480))
        #expect(abs(made - (5_000 + 410) * Self.millisecond) <= Self.millisecond / 10)
    }

    @Test(
        "one block handed over early or late does not move the clock; a gap in the audio is taken up within the window")
    func outliersAndGaps() throws {
        var clock = AudioClock(sampleRate: Self.rate)
        Self.feed(
            &clock, blocks: 0..<100,
            lateness: { k in k == 60 ? -8 * Self.millisecond : (k == 70 ? 30 * Self.millisecond : 0) })
        #expect(abs(try #require(clock.origin) - 5_000 * Self.millisecond) <= Self.millisecond / 10)
        // 300 ms of audio lost (an overrun): from block 100 on, every block comes 300 ms later than its count says.
        Self.feed(&clock, blocks: 100..<200, lateness: { _ in 300 * Self.millisecond })
        #expect(abs(try #require(clock.origin) - 5_300 * Self.millisecond) <= Self.millisecond / 10)
    }

    @Test("on a busy machine blocks come up to 30 ms late, never early: the clock keeps to when the audio was made")
    func lateBlocks() throws {
        var clock = AudioClock(sampleRate: Self.rate)
        var generator = SplitMix64(seed: 14)
        let lateness = (0..<200).map { _ in Int64.random(in: 0...30, using: &generator) * Self.millisecond }
        Self.feed(&clock, blocks: 0..<200, lateness: { lateness[$0] })
        // Two or three blocks a slice: the median of the slices' earliest arrivals is 6–11 ms late here.
        let error = try #require(clock.origin) - 5_000 * Self.millisecond
        #expect(error >= 0 && error <= 5 * Self.millisecond, "\(Double(error) / 1e6) ms")
    }

    @Test("audio lost (an overrun, a recorder restarted) is taken up within half a second")
    func gapsQuickly() throws {
        var clock = AudioClock(sampleRate: Self.rate)
        Self.feed(&clock, blocks: 0..<100)
        // 300 ms lost: from block 100 on every block comes 300 ms later than its count says.
        Self.feed(&clock, blocks: 100..<113, lateness: { _ in 300 * Self.millisecond })
        #expect(abs(try #require(clock.origin) - 5_300 * Self.millisecond) <= Self.millisecond / 10)
        // One PipeWire quantum lost (512 samples, 10.7 ms): taken up as quickly.
        Self.feed(&clock, blocks: 113..<126, lateness: { _ in 300 * Self.millisecond + 10_666_667 })
        #expect(abs(try #require(clock.origin) - 5_310_666_667) <= Self.millisecond / 10)
    }

    @Test("frames are due their delay after their audio was made, one at a time, though they came in a block")
    func timeline() throws {
        var timeline = FrameTimeline(sampleRate: Self.rate, framesPerSecond: 100)
        timeline.delayNanoseconds = 100 * Self.millisecond
        // A 40 ms block (4 frames) made by 5040 ms arrives at once.
        let arrival = 5_040 * Self.millisecond
        timeline.observe(samples: 1_920, at: arrival)
        for n in 1...4 { timeline.add(LevelFrame(bass: UInt8(n), mid: 0, treble: 0), endingAtSample: n * 480) }
        #expect(timeline.waiting == 4)
        #expect(timeline.nextDue == 5_110 * Self.millisecond, "frame 1 ends at 10 ms of audio")
        #expect(timeline.takeDue(now: 5_109 * Self.millisecond) == nil)
        #expect(timeline.takeDue(now: 5_110 * Self.millisecond)?.bass == 1)
        #expect(timeline.nextDue == 5_120 * Self.millisecond)
        // Woken late: what is due comes as one frame, the newest.
        #expect(timeline.takeDue(now: 5_135 * Self.millisecond)?.bass == 3)
        #expect(timeline.waiting == 1)
        // No delay: due as soon as it is in.
        timeline.delayNanoseconds = 0
        #expect(timeline.takeDue(now: arrival)?.bass == 4)
        #expect(timeline.nextDue == nil)
    }

    @Test("where a player says a sample is heard, each frame is due when its last sample is, whatever the clock says")
    func heardFromThePlayer() {
        var timeline = FrameTimeline(sampleRate: Self.rate, framesPerSecond: 100)
        timeline.delayNanoseconds = 2_000 * Self.millisecond
        // The first 0.2 s arrives at once at 5 s: the clock puts sample 0 at 4,800 ms.
        timeline.observe(samples: 9_600, at: 5_000 * Self.millisecond)
        for n in 1...3 { timeline.add(LevelFrame(bass: UInt8(n), mid: 0, treble: 0), endingAtSample: n * 480) }
        #expect(timeline.nextDue == 6_810 * Self.millisecond, "before the player's word: the clock and the delay")
        // The player wrote up to sample 480 at 5,001 ms, which its device plays 40 ms later.
        timeline.heard = (sample: 480, nanoseconds: 5_041 * Self.millisecond)
        #expect(timeline.nextDue == 5_041 * Self.millisecond)
        // A burst moves the clock's origin a second earlier: the frames stay where they are heard.
        timeline.observe(samples: 57_600, at: 5_001 * Self.millisecond)
        #expect(timeline.nextDue == 5_041 * Self.millisecond)
        #expect(timeline.takeDue(now: 5_050 * Self.millisecond)?.bass == 1)
        #expect(timeline.nextDue == 5_051 * Self.millisecond, "frame 2 ends 10 ms of audio after sample 480")
    }

    @Test("each frame leaves with its beat; a beat on a frame a late wake-up skips goes with the newest")
    func beatsTravelWithTheFrames() {
        var timeline = FrameTimeline(sampleRate: Self.rate, framesPerSecond: 100)
        timeline.observe(samples: 1_920, at: 5_040 * Self.millisecond)
        let held = BeatState(beat: 0, bpm: 120, phase: 0.5, confidence: 1)
        var downbeat = held
        downbeat.beat = 1
        for n in 1...4 {
            timeline.add(
                LevelFrame(bass: UInt8(n), mid: 0, treble: 0), beat: n == 2 ? downbeat : held, endingAtSample: n * 480)
        }
        let first = timeline.takeDueWithBeat(now: 5_010 * Self.millisecond)
        #expect(first?.frame.bass == 1 && first?.beat == held)
        // Frames 2 (the downbeat) and 3 are due at once: frame 3 leaves, with the downbeat.
        let late = timeline.takeDueWithBeat(now: 5_030 * Self.millisecond)
        #expect(late?.frame.bass == 3 && late?.beat.beat == 1 && late?.beat.bpm == 120)
        #expect(timeline.takeDueWithBeat(now: 5_040 * Self.millisecond)?.beat == held)
    }

    @Test("a timeline holds at most its capacity, dropping the oldest")
    func capacity() {
        var timeline = FrameTimeline(sampleRate: Self.rate, capacity: 3)
        timeline.observe(samples: 0, at: 0)
        for n in 1...5 { timeline.add(LevelFrame(bass: UInt8(n), mid: 0, treble: 0), endingAtSample: n * 480) }
        #expect(timeline.waiting == 3)
        #expect(timeline.nextDue == 30 * Self.millisecond, "frames 1 and 2 were dropped")
        #expect(
            FrameTimeline(sampleRate: Self.rate, framesPerSecond: 100).capacity == 300, "2 s of delay and a second more"
        )
    }
}
