import LightOrganCore
import Testing

@Suite("Holding the lights back for the speaker")
struct SpeakerSyncTests {
    /// Frame n of a numbered stream: bass carries n (mod 256).
    func numbered(_ n: Int) -> LevelFrame { LevelFrame(bass: UInt8(n % 256), mid: 1, treble: 2) }

    @Test("a delay line returns the frame put in `delay` frames earlier, dark before there was one")
    func delayLine() {
        var line = FrameDelayLine(capacity: 10, delay: 3)
        let out = (1...8).map { line.pass(numbered($0)) }
        #expect(out == [.off, .off, .off] + (1...5).map(numbered))
    }

    @Test("changing the delay moves the read position: longer repeats, shorter skips, one frame out per frame in")
    func delayChange() {
        var line = FrameDelayLine(capacity: 10, delay: 2)
        for n in 1...6 { _ = line.pass(numbered(n)) }  // out: up to 4
        line.setDelay(4)
        #expect(line.pass(numbered(7)) == numbered(3))  // back in time by two
        line.setDelay(0)
        #expect(line.pass(numbered(8)) == numbered(8))  // at once
        line.setDelay(99)
        #expect(line.delay == 10, "clamped to the capacity")
        #expect(line.pass(numbered(9)) == .off, "nothing that old was ever kept")
    }

    @Test("the delay never wraps the history: after many frames it still returns the right one")
    func longRun() {
        var line = FrameDelayLine(capacity: 200, delay: 17)
        var last = LevelFrame.off
        for n in 1...5_000 { last = line.pass(numbered(n)) }
        #expect(last == numbered(5_000 - 17))
    }

    @Test("milliseconds become the nearest whole frame period")
    func rounding() {
        #expect(FrameDelayLine.frames(forMilliseconds: 172, framesPerSecond: 100) == 17)
        #expect(FrameDelayLine.frames(forMilliseconds: 175, framesPerSecond: 100) == 18)
        #expect(FrameDelayLine.frames(forMilliseconds: 2_000, framesPerSecond: 250) == 500)
        #expect(FrameDelayLine(framesPerSecond: 250).capacity == 500)
    }

    @Test("the setting reads auto or whole milliseconds 0…2000, with or without ms")
    func parsing() {
        #expect(LightDelay(parsing: "auto") == .auto)
        #expect(LightDelay(parsing: "AUTO") == .auto)
        #expect(LightDelay(parsing: "0") == .milliseconds(0))
        #expect(LightDelay(parsing: "180ms") == .milliseconds(180))
        #expect(LightDelay(parsing: "2000") == .milliseconds(2000))
        for bad in ["2001", "-5", "0.5", "", "fast", "ms"] { #expect(LightDelay(parsing: bad) == nil, "\(bad)") }
    }

    @Test("auto delays by the sink's latency less the chain's own, logged once per change")
    func autoFollowsLatency() {
        var sync = SpeakerSync(setting: .auto, framesPerSecond: 100)
        #expect(sync.delayMilliseconds == 0, "no delay until the sink's latency is known")
        #expect(sync.follow(nil) == nil)
        let bluetooth = OutputLatency(output: "bluez_output.00_1B_66", microseconds: 182_000)
        #expect(sync.follow(bluetooth) == "output latency 182 ms (bluez_output.00_1B_66): lights delayed 170 ms")
        #expect(sync.delayMilliseconds == 170)
        #expect(sync.follow(bluetooth) == nil, "the same reading is not logged again")
        #expect(
            sync.follow(OutputLatency(output: "bluez_output.00_1B_66", microseconds: 190_000)) == nil,
            "jitter within 15 ms is ignored")
        #expect(sync.delayMilliseconds == 170)
        let speakers = OutputLatency(output: "alsa_output.pci-0000_00_1f.3.analog-stereo", microseconds: 12_000)
        #expect(sync.follow(speakers)?.hasSuffix("lights delayed 0 ms") == true, "another output is always taken up")
        #expect(sync.delayMilliseconds == 0)
    }

    @Test("a virtual output (null or filter sink) has no speaker latency: no delay, said once")
    func virtualOutput() {
        var sync = SpeakerSync(setting: .auto, framesPerSecond: 100)
        _ = sync.follow(OutputLatency(output: "bluez_output.1", microseconds: 200_000))
        #expect(sync.delayMilliseconds == 190)
        let message = sync.follow(OutputLatency(output: "easyeffects_sink", microseconds: nil))
        #expect(
            message
                == "output easyeffects_sink is virtual, its speaker's latency unknown: lights not delayed (set sender.delay to delay them)"
        )
        #expect(sync.delayMilliseconds == 0)
        #expect(sync.follow(OutputLatency(output: "easyeffects_sink", microseconds: nil)) == nil)
    }

    @Test("auto turns frames into frames held back by the right number of periods")
    func autoHoldsFrames() {
        var sync = SpeakerSync(setting: .auto, framesPerSecond: 100)
        _ = sync.follow(OutputLatency(output: "tunnel", microseconds: 60_000))  // 50 ms: 5 frames
        let out = (1...20).map { sync.pass(numbered($0)) }
        #expect(out.prefix(5).allSatisfy { $0 == .off })
        #expect(Array(out.dropFirst(5)) == (1...15).map(numbered))
    }

    @Test("a fixed delay ignores the sink and a latency shorter than the chain's is no delay")
    func fixedAndShort() {
        var fixed = SpeakerSync(setting: .milliseconds(40), framesPerSecond: 50)
        #expect(fixed.delayMilliseconds == 40)
        #expect(fixed.follow(OutputLatency(output: "x", microseconds: 300_000)) == nil)
        #expect(fixed.delayMilliseconds == 40)
        #expect(LightDelay.milliseconds(forSinkLatency: 4_000) == 0)
        #expect(LightDelay.milliseconds(forSinkLatency: 9_000_000) == LightDelay.maximumMilliseconds)
    }

    @Test(
        "a monitor is asked for blocks as long as the delay covers: 40 ms, 10 ms once the output proves virtual or fast"
    )
    func monitorBlocks() {
        #expect(LightDelay.auto.monitorBlockMilliseconds(latency: nil) == 40, "until the output is measured")
        #expect(
            LightDelay.auto.monitorBlockMilliseconds(latency: OutputLatency(output: "bluez", microseconds: 180_000))
                == 40)
        #expect(
            LightDelay.auto.monitorBlockMilliseconds(latency: OutputLatency(output: "alsa", microseconds: 30_000)) == 40
        )
        #expect(
            LightDelay.auto.monitorBlockMilliseconds(latency: OutputLatency(output: "alsa", microseconds: 25_000)) == 10
        )
        #expect(
            LightDelay.auto.monitorBlockMilliseconds(latency: OutputLatency(output: "null", microseconds: nil)) == 10)
        #expect(
            LightDelay.milliseconds(0).monitorBlockMilliseconds(latency: nil) == 10, "no delay: frames go as they come")
        #expect(LightDelay.milliseconds(5).monitorBlockMilliseconds(latency: nil) == 20)
        #expect(LightDelay.milliseconds(150).monitorBlockMilliseconds(latency: nil) == 40)
    }
}
