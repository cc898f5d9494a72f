import LightOrganCore
import Testing

/// The sender's delay arithmetic with time passed in: a monitor whose speaker plays each sample the
/// output latency after the monitor shows it, recorded by a stream that hands each 40 ms block over
/// a capture lag after it was made; both change while the frames flow.
@Suite("Lamps in time with the speaker: the output's latency less what the capture already cost")
struct CaptureLagTests {
    static let rate = 48_000.0
    static let millisecond: Int64 = 1_000_000
    static let block = 1_920  // 40 ms
    static let framesPerSecond = 100
    static let start: Int64 = 7_000 * millisecond

    /// When sample `sample` was made (ns): the source runs in real time from `start`.
    static func made(_ sample: Int) -> Int64 { start + Int64((Double(sample) * 1e9 / rate).rounded()) }

    /// One simulated second after another: blocks arrive `lag(block)` after their last sample was made;
    /// a frame is made every 10 ms of audio as its block arrives and handed to the timeline with the
    /// delay `SpeakerSync` keeps for `latency(block)`. Returns, per frame, (block, due − made of its
    /// last sample, due − arrival of its block), ms; the last frame of each block ends with it.
    static func run(
        blocks: Range<Int>, lag: (Int) -> Int64, latency: (Int) -> Int, statedByTheServer: Bool
    ) -> [(block: Int, afterMade: Double, afterArrival: Double, endsTheBlock: Bool)] {
        var timeline = FrameTimeline(sampleRate: rate, framesPerSecond: framesPerSecond)
        var sync = SpeakerSync(setting: .auto, framesPerSecond: framesPerSecond)
        var results: [(Int, Double, Double, Bool)] = []
        for k in blocks {
            let end = (k + 1) * block
            let arrival = made(end) + lag(k)
            _ = sync.follow(OutputLatency(output: "bluez", microseconds: latency(k) * 1_000))
            timeline.delayNanoseconds = Int64(sync.delayMilliseconds) * millisecond
            // The server states the block's end as made when it was (arrival less the lag); a pipe
            // only knows when it arrived.
            timeline.observe(samples: end, at: statedByTheServer ? arrival - lag(k) : arrival)
            for frame in 1...4 {
                let frameEnd = k * block + frame * 480
                timeline.add(.off, endingAtSample: frameEnd)
                guard let due = timeline.nextDue else { continue }
                _ = timeline.takeDue(now: due)
                results.append((k, Double(due - made(frameEnd)) / 1e6, Double(due - arrival) / 1e6, frameEnd == end))
            }
        }
        return results
    }

    @Test("a 200 ms output recorded 50 ms late: frames due 190 ms after their audio was made, 140 ms after it arrived")
    func steadyLag() {
        let frames = Self.run(
            blocks: 0..<150, lag: { _ in 50 * Self.millisecond }, latency: { _ in 200 },
            statedByTheServer: true)
        let settled = frames.filter { $0.block >= 10 }
        #expect(settled.allSatisfy { abs($0.afterMade - 190) <= 0.5 }, "\(settled.prefix(3))")
        #expect(settled.filter(\.endsTheBlock).allSatisfy { abs($0.afterArrival - 140) <= 0.5 })
        // Timed by arrival alone, as a pipe is, the same lamps would come the capture lag late.
        let byArrival = Self.run(
            blocks: 0..<150, lag: { _ in 50 * Self.millisecond }, latency: { _ in 200 },
            statedByTheServer: false
        ).filter { $0.block >= 10 }
        #expect(byArrival.allSatisfy { abs($0.afterMade - 240) <= 0.5 })
    }

    @Test("output latency and capture lag both change: each frame follows both")
    func bothChanging() {
        // Blocks 0-99: latency 200 ms, lag 50 ms; 100-199: lag 10 ms (a new recorder); 200-299: the
        // output becomes a 100 ms one; 300-399: the lag grows to 30 ms with it.
        let lag: (Int) -> Int64 = { k in (k < 100 ? 50 : k < 300 ? 10 : 30) * Self.millisecond }
        let latency: (Int) -> Int = { k in k < 200 ? 200 : 100 }
        let frames = Self.run(blocks: 0..<400, lag: lag, latency: latency, statedByTheServer: true)
        for (range, afterMade, afterArrival) in [
            (10..<100, 190.0, 140.0), (110..<200, 190.0, 180.0), (210..<300, 90.0, 80.0), (310..<400, 90.0, 60.0),
        ] {
            let part = frames.filter { range.contains($0.block) }
            #expect(!part.isEmpty)
            #expect(part.allSatisfy { abs($0.afterMade - afterMade) <= 0.5 }, "blocks \(range): \(part.prefix(2))")
            #expect(
                part.filter(\.endsTheBlock).allSatisfy { abs($0.afterArrival - afterArrival) <= 0.5 }, "blocks \(range)"
            )
        }
    }

    @Test("the log names the first lag stated, a lasting change of 10 ms or more, and an unknown lag once")
    func log() {
        var log = CaptureLagLog()
        let by = "the sound server's timing of the record stream"
        let second: Int64 = 1_000_000_000
        #expect(log.take(nil, now: 0) == nil)
        #expect(log.take(nil, now: second / 2) == nil)
        #expect(
            log.take(.stated(nanoseconds: 3 * Self.millisecond, by: by), now: second)
                == "capture lag 3 ms (\(by))")
        // The phase of the blocks moves each statement by up to 40 ms: the smallest of each 2 s counts.
        var lines: [String] = []
        for step in 1...40 {
            let now = second + Int64(step) * second / 10
            let lag =
                Int64(step % 5) * 10 * Self.millisecond + (step > 20 ? 52 * Self.millisecond : 3 * Self.millisecond)
            if let line = log.take(.stated(nanoseconds: lag, by: by), now: now) { lines.append(line) }
        }
        #expect(lines == ["capture lag now 52 ms (\(by))"], "\(lines)")

        var pipe = CaptureLagLog()
        let reason = "a pipe says only when its audio arrived"
        #expect(
            pipe.take(.unknown(reason), now: 0)
                == "capture lag unknown (\(reason)): assumed 0 ms, frames timed from when their audio arrived")
        #expect(pipe.take(.unknown(reason), now: second) == nil)
        // Frames sent as they come: an unknown lag is no news, a stated one is.
        var undelayed = CaptureLagLog()
        #expect(undelayed.take(.unknown(reason), now: 0, delayed: false) == nil)
        #expect(undelayed.take(nil, now: 5 * second, delayed: false) == nil)
        #expect(
            undelayed.take(.stated(nanoseconds: 3 * Self.millisecond, by: by), now: 6 * second, delayed: false)
                == "capture lag 3 ms (\(by))")

        var silent = CaptureLagLog()
        #expect(silent.take(nil, now: 5 * second) == nil)
        #expect(silent.take(nil, now: 6 * second)?.hasPrefix("capture lag not stated within 1 s") == true)
        #expect(silent.take(nil, now: 7 * second) == nil)
    }
}
