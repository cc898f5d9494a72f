import LightOrganCore
import LightOrganServices
import Synchronization
import Testing

/// The pacer on its real thread and the monotonic clock: when a frame leaves. Each frame's time is
/// stamped on the pacer's thread as it is sent; the checks wait for it generously (a busy machine
/// runs the test late), and tell the right time from the wrong one by far more than any lateness:
/// the wrong one is the 2 s guess.
@Suite("SpeakerPacer: each frame sent at its time, and at its new time when the delay shrinks")
struct SpeakerPacerTests {
    /// The frames sent, each with when it was sent (monotonic nanoseconds).
    private final class Sent: Sendable {
        let frames = Mutex<[(LevelFrame, Int64)]>([])
        var delivery: FrameStream.Delivery {
            FrameStream.Delivery(
                frame: { frame in self.frames.withLock { $0.append((frame, MonotonicClock.nanoseconds())) } },
                finished: { _ in })
        }

        /// When the first frame left, seconds after `start`; nil when none left within `seconds` (of the
        /// monotonic clock: the test's own task may be resumed late, so it looks once more at the end).
        func firstSent(after start: Int64, waitingUpTo seconds: Double) async throws -> Double? {
            let deadline = MonotonicClock.nanoseconds() + Int64(seconds * 1e9)
            while true {
                let past = MonotonicClock.nanoseconds() >= deadline
                if let first = frames.withLock({ $0.first }) { return Double(first.1 - start) / 1e9 }
                if past { return nil }
                try await Task.sleep(for: .milliseconds(20))
            }
        }
    }

    private static let guess: Int64 = 2_000_000_000

    /// Runs `body` with a started pacer (48 kHz, 100 frames/s) sending into a fresh `Sent`; the pacer
    /// is stopped when it returns.
    private func withPacer(_ body: (SpeakerPacer, Sent) async throws -> Void) async throws {
        let sent = Sent()
        let gate = Gate(sent.delivery)
        let pacer = SpeakerPacer(sampleRate: 48_000, framesPerSecond: 100, into: gate)
        pacer.start()
        defer {
            gate.finish(nil)
            pacer.wake()
        }
        try await body(pacer, sent)
    }

    @Test("a frame added under a long delay guess leaves at the shorter delay read next, not at the guess")
    func aShrunkDelayWakesThePacer() async throws {
        try await withPacer { pacer, sent in
            let made = MonotonicClock.nanoseconds()
            pacer.observe(samples: 480, at: made)
            pacer.add(
                LevelFrame(bass: 255, mid: 0, treble: 0), endingAtSample: 480, delayNanoseconds: Self.guess, now: made)
            // The reading: 100 ms. The next frame's audio came in the meantime.
            pacer.observe(samples: 960, at: made + 10_000_000)
            pacer.add(.off, endingAtSample: 960, delayNanoseconds: 100_000_000, now: MonotonicClock.nanoseconds())
            let after = try await sent.firstSent(after: made, waitingUpTo: 5)
            #expect(
                after.map { $0 >= 0.099 && $0 < 1.5 } == true, "the first frame left \(after ?? -1) s after it was made"
            )
        }
    }

    @Test("once the player says when a sample is heard, a frame leaves when its last sample is heard")
    func thePlayersWordPlacesTheFrames() async throws {
        try await withPacer { pacer, sent in
            let start = MonotonicClock.nanoseconds()
            // A second of audio arrives at once (the clock puts its start a second back), under the guess.
            pacer.observe(samples: 48_000, at: start)
            pacer.add(
                LevelFrame(bass: 255, mid: 0, treble: 0), endingAtSample: 480, delayNanoseconds: Self.guess, now: start)
            // The player: sample 0 is heard 150 ms from now, so the frame's last sample 10 ms later.
            pacer.hear(sample: 0, at: start + 150_000_000)
            let after = try await sent.firstSent(after: start, waitingUpTo: 5)
            #expect(
                after.map { $0 >= 0.159 && $0 < 1.5 } == true,
                "the frame left \(after ?? -1) s after the start, its sound at 0.16 s")
        }
    }

    @Test("no frame leaves before its delay")
    func noFrameLeavesEarly() async throws {
        try await withPacer { pacer, sent in
            let made = MonotonicClock.nanoseconds()
            pacer.observe(samples: 480, at: made)
            pacer.add(
                LevelFrame(bass: 255, mid: 0, treble: 0), endingAtSample: 480, delayNanoseconds: 300_000_000, now: made)
            let after = try await sent.firstSent(after: made, waitingUpTo: 3)
            #expect(after.map { $0 >= 0.299 } == true, "the frame left \(after ?? -1) s after it was made")
        }
    }
}
