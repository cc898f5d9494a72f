import Glibc
import LightOrganCore
import LightOrganServices
import LightOrganTestSupport
import NIOCore
import NIOEmbedded
import NIOPosix
import Synchronization
import Testing

@Suite("LampTap: the brightness limit and the wiring checks, through the output's one interface")
struct LampTapTests {
    let strip = StripDescription(device: "virtual", pixels: 4, led: .ws2812b, effect: .scroll)
    let lines = [LampTap.Line(band: .bass, offset: 5), LampTap.Line(band: .mid, offset: 6)]

    /// A tap on an embedded loop over a recorded output with ``strip``, its strip check started.
    func startedStripCheck() throws -> (EmbeddedEventLoop, RecordingOutput, LampTap) {
        let loop = EmbeddedEventLoop()
        let output = RecordingOutput(strip: strip)
        let tap = LampTap(output: output, lines: lines, maxBrightness: 100, eventLoop: loop)
        try tap.checkStrip()
        loop.run()
        return (loop, output, tap)
    }

    @Test("frames are scaled by the brightness limit and published for the page")
    func scaled() throws {
        let loop = EmbeddedEventLoop()
        let output = RecordingOutput()
        let tap = LampTap(output: output, lines: lines, maxBrightness: 50, eventLoop: loop)
        try tap.show(LevelFrame(bass: 200, mid: 100, treble: 0))
        #expect(output.last == .frame(LevelFrame(bass: 100, mid: 50, treble: 0)))
        #expect(tap.levels.frame == LevelFrame(bass: 100, mid: 50, treble: 0))
    }

    @Test("a frame of music goes through the look: bpm_strobe flashes on the beat, the output gets the cue")
    func musicThroughTheLook() throws {
        let output = RecordingOutput(strip: strip)
        let tap = LampTap(
            output: output, lines: lines, maxBrightness: 50, look: LightLook(effect: .bpmStrobe),
            eventLoop: EmbeddedEventLoop())
        let beat = BeatState(beat: 3, bpm: 128, phase: 0, confidence: 1)
        try tap.show(LevelFrame(bass: 60, mid: 0, treble: 0), beat: beat)
        #expect(output.last == .frame(LevelFrame(bass: 128, mid: 128, treble: 128)), "at full, then the limit")
        #expect(output.looks.withLock { $0.last?.beat } == beat)
        #expect(tap.beat.bpm == 128 && tap.beat.beat == 3 && tap.beat.place == 3)
        try tap.show(LevelFrame(bass: 60, mid: 0, treble: 0), beat: nil)
        #expect(output.last == .frame(LevelFrame(bass: 30, mid: 0, treble: 0)), "a network sender: the levels")
        #expect(tap.beat.bpm == 0)
    }

    @Test("an effect change from the page waits for the downbeat while a beat is held, then reaches the output")
    func effectOnTheDownbeat() throws {
        let output = RecordingOutput(strip: strip)
        let tap = LampTap(output: output, lines: lines, maxBrightness: 100, eventLoop: EmbeddedEventLoop())
        try tap.show(.off, beat: BeatState(beat: 2, bpm: 120, phase: 0, confidence: 1))
        tap.apply(.stripEffect(.beatPulse))
        tap.apply(.stripBrightness(40))
        #expect(output.last == .change(.stripBrightness(40)), "the brightness at once, the effect waits")
        try tap.show(.off, beat: BeatState(beat: 0, bpm: 120, phase: 0.5, confidence: 1))
        #expect(!output.events.withLock { $0.contains(.change(.stripEffect(.beatPulse))) })
        try tap.show(.off, beat: BeatState(beat: 1, bpm: 120, phase: 0, confidence: 1))
        #expect(output.events.withLock { $0.contains(.change(.stripEffect(.beatPulse))) })
    }

    @Test("the idle look glows on a sender's silent frames after idle_after; the receiver's darkening is shown dark")
    func idleThenDark() throws {
        let output = RecordingOutput()
        let tap = LampTap(
            output: output, lines: lines, maxBrightness: 100, look: LightLook(idle: .drift, idleAfter: 1),
            eventLoop: EmbeddedEventLoop())
        let start = MonotonicClock.nanoseconds()
        while MonotonicClock.nanoseconds() - start < 2_500_000_000 {
            try tap.show(.off, beat: nil)
            usleep(20_000)
        }
        #expect(output.frames.last.map { $0 != .off } == true, "glowing: \(output.frames.suffix(3))")
        try tap.show(.off)
        #expect(output.last == .frame(.off))
        try tap.show(.off, beat: nil)
        #expect(output.last == .frame(.off), "the idle clock starts again after the receiver darkened the lamps")
    }

    @Test("receiver.delay holds a frame's beat back with it; a frame coalesced into the next gives that one its beat")
    func delayKeepsTheBeat() async throws {
        let output = RecordingOutput()
        let tap = LampTap(output: output, lines: lines, maxBrightness: 100, eventLoop: EmbeddedEventLoop())
        let delayed = DelayedOutput(
            wrapping: tap, delay: .milliseconds(50), eventLoop: MultiThreadedEventLoopGroup.singleton.any()
        ) { _ in }
        try delayed.show(.off, beat: BeatState(beat: 1, bpm: 120, phase: 0, confidence: 1))
        try delayed.show(.off, beat: BeatState(beat: 0, bpm: 120, phase: 0.01, confidence: 1))
        #expect(output.looks.withLock { $0.isEmpty }, "nothing before the delay")
        try await Task.sleep(for: .milliseconds(300))
        let looks = output.looks.withLock { $0 }
        #expect(looks.count == 1, "the two frames came within 2 ms: one timer, the later frame")
        #expect(looks.first?.beat?.beat == 1 && looks.first?.beat?.phase == 0.01)
    }

    @Test("a line's check lights it through the output, holds frames back, and ends dark after 10 s")
    func lineCheck() throws {
        let loop = EmbeddedEventLoop()
        let output = RecordingOutput()
        let tap = LampTap(output: output, lines: lines, maxBrightness: 100, eventLoop: loop)
        try tap.check(6)
        #expect(output.last == .check(.line(band: .mid, offset: 6)))
        #expect(tap.checking == LampTap.Line(band: .mid, offset: 6))
        try tap.show(LevelFrame(bass: 255, mid: 255, treble: 255))
        #expect(output.last == .check(.line(band: .mid, offset: 6)), "frames wait while the check runs")
        loop.advanceTime(by: .seconds(10))
        #expect(output.last == .check(nil))
        #expect(tap.checking == nil)
        #expect(throws: LampCheckError.self) { try tap.check(13) }
    }

    @Test("the strip's check runs its sequence at its times: ends, each pixel, then dark")
    func stripCheck() throws {
        let (loop, output, tap) = try startedStripCheck()
        #expect(output.last == .check(.strip(.ends)))
        #expect(tap.checkingStrip)
        let sequence = StripCheck(pixels: 4)
        loop.advanceTime(by: .milliseconds(Int64(StripCheck.endsDuration * 1000)))
        #expect(output.last == .check(.strip(.runner(0))))
        loop.advanceTime(by: .milliseconds(Int64(sequence.runnerStep * 1000 * 3)))
        #expect(output.last == .check(.strip(.runner(3))))
        loop.advanceTime(by: .seconds(1))
        #expect(output.last == .check(nil))
        #expect(!tap.checkingStrip)
        try tap.show(LevelFrame(bass: 1, mid: 2, treble: 3))
        #expect(output.last == .frame(LevelFrame(bass: 1, mid: 2, treble: 3)), "frames again after the check")
    }

    @Test(
        "a late wake-up during the strip's check skips no pixel: each step stays up for at least half its time")
    func stripCheckAfterAStall() throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        defer { try? group.syncShutdownGracefully() }
        let loop = group.next()
        let output = TimedChecks(strip: strip)
        let tap = LampTap(output: output, lines: lines, maxBrightness: 100, eventLoop: loop)
        let sequence = StripCheck(pixels: strip.pixels)
        try loop.submit { try tap.checkStrip() }.wait()
        // The loop stalls 0.6 s in the middle of the runner (a busy machine): two steps fall due meanwhile.
        loop.scheduleTask(in: .milliseconds(Int64(StripCheck.endsDuration * 1000 + 300))) {
            usleep(600_000)
        }
        let deadline = ContinuousClock.now + .seconds(60)
        while output.shown.withLock({ $0.last?.check }) != .some(nil), ContinuousClock.now < deadline {
            usleep(20_000)
        }
        let shown = output.shown.withLock { $0 }
        #expect(shown.map(\.check) == sequence.steps.map { $0.step == .dark ? nil : .strip($0.step) })
        for (index, (_, seconds)) in sequence.steps.dropLast().enumerated() where index + 1 < shown.count {
            let held = shown[index + 1].at - shown[index].at
            // 1 ms for the two clocks' reading, not for lateness: a stall only lengthens a step.
            #expect(held >= .milliseconds(Int64(seconds * 500) - 1), "step \(index) was up \(held), of \(seconds) s")
        }
    }

    @Test("without a strip the strip's check is refused in words")
    func noStrip() {
        let tap = LampTap(output: RecordingOutput(), lines: lines, maxBrightness: 100, eventLoop: EmbeddedEventLoop())
        #expect(throws: LampCheckError.self) { try tap.checkStrip() }
    }

    @Test("shutting down during the strip's check ends it: the output is shut down, no later step reaches it")
    func shutDownDuringCheck() throws {
        let (loop, output, tap) = try startedStripCheck()
        tap.shutDown()
        loop.advanceTime(by: .seconds(10))
        #expect(output.last == .shutDown)
    }
}

/// An output that records each wiring-check step with the time it was asked to show it.
private final class TimedChecks: LevelOutput {
    let shown = Mutex<[(check: OutputCheck?, at: ContinuousClock.Instant)]>([])
    let strips: [StripDescription]

    init(strip: StripDescription) { strips = [strip] }

    func show(_ frame: LevelFrame) throws {}
    func shutDown() {}
    func showCheck(_ check: OutputCheck?) throws { shown.withLock { $0.append((check, .now)) } }
}
