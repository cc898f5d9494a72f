import LightOrganCore
import LightOrganTestSupport
import NIOCore
import NIOEmbedded
import Testing

@testable import LightOrganServices

@Suite("LampTap: the brightness limit and the wiring checks, through the output's one interface")
struct LampTapTests {
    let strip = StripDescription(device: "virtual", pixels: 4, led: .ws2812b, effect: .scroll)
    let lines = [LampTap.Line(band: .bass, offset: 5), LampTap.Line(band: .mid, offset: 6)]

    @Test("frames are scaled by the brightness limit and published for the page")
    func scaled() throws {
        let loop = EmbeddedEventLoop()
        let output = RecordingOutput()
        let tap = LampTap(output: output, lines: lines, maxBrightness: 50, eventLoop: loop)
        try tap.show(LevelFrame(bass: 200, mid: 100, treble: 0))
        #expect(output.last == .frame(LevelFrame(bass: 100, mid: 50, treble: 0)))
        #expect(tap.levels.frame == LevelFrame(bass: 100, mid: 50, treble: 0))
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
        let loop = EmbeddedEventLoop()
        let output = RecordingOutput(strip: strip)
        let tap = LampTap(output: output, lines: lines, maxBrightness: 100, eventLoop: loop)
        try tap.checkStrip()
        loop.run()
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

    @Test("without a strip the strip's check is refused in words")
    func noStrip() {
        let tap = LampTap(output: RecordingOutput(), lines: lines, maxBrightness: 100, eventLoop: EmbeddedEventLoop())
        #expect(throws: LampCheckError.self) { try tap.checkStrip() }
    }

    @Test("shutting down during the strip's check ends it: the output is shut down, no later step reaches it")
    func shutDownDuringCheck() throws {
        let loop = EmbeddedEventLoop()
        let output = RecordingOutput(strip: strip)
        let tap = LampTap(output: output, lines: lines, maxBrightness: 100, eventLoop: loop)
        try tap.checkStrip()
        loop.run()
        tap.shutDown()
        loop.advanceTime(by: .seconds(10))
        #expect(output.last == .shutDown)
    }
}
