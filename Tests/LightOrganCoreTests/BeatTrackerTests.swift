import Foundation
import LightOrganCore
import Testing

/// Synthetic drums for the beat tracker: kicks (a 55 Hz thump), hi-hats (a burst of noise), a held pad, noise.
struct DrumTrack {
    static let sampleRate = 44_100.0
    private(set) var samples: [Float]
    private var random = SplitMix(seed: 69)

    /// `seconds` of silence.
    init(seconds: Double) {
        samples = [Float](repeating: 0, count: Int(seconds * Self.sampleRate))
    }

    /// A kick at `time` seconds: a 55 Hz sine whose pitch falls from 110 Hz, decaying in 0.1 s.
    mutating func kick(at time: Double, amplitude: Float = 0.6) {
        let start = Int(time * Self.sampleRate)
        var phase = 0.0
        for index in 0..<Int(0.4 * Self.sampleRate) where start + index < samples.count {
            let t = Double(index) / Self.sampleRate
            phase += 2 * .pi * (55 + 55 * exp(-t / 0.02)) / Self.sampleRate
            samples[start + index] += amplitude * Float(sin(phase) * exp(-t / 0.1))
        }
    }

    /// A closed hi-hat at `time` seconds: white noise decaying in 15 ms.
    mutating func hat(at time: Double, amplitude: Float = 0.15) {
        let start = Int(time * Self.sampleRate)
        for index in 0..<Int(0.08 * Self.sampleRate) where start + index < samples.count {
            let t = Double(index) / Self.sampleRate
            samples[start + index] += amplitude * random.nextSigned() * Float(exp(-t / 0.015))
        }
    }

    /// A held chord (220, 277 and 330 Hz) from `start` to `end` seconds, fading in and out over 50 ms.
    mutating func pad(from start: Double, to end: Double, amplitude: Float = 0.1) {
        for index in Int(start * Self.sampleRate)..<min(samples.count, Int(end * Self.sampleRate)) {
            let t = Double(index) / Self.sampleRate
            let fade = min(1, (t - start) / 0.05, (end - t) / 0.05)
            let chord = sin(2 * .pi * 220 * t) + sin(2 * .pi * 277.2 * t) + sin(2 * .pi * 329.6 * t)
            samples[index] += amplitude * Float(fade * chord / 3)
        }
    }

    /// White noise at `amplitude` RMS over the whole track, or pink noise (−3 dB an octave, Paul Kellet's filter).
    mutating func noise(amplitude: Float, pink: Bool) {
        var b = [Float](repeating: 0, count: 7)
        for index in samples.indices {
            let white = random.nextSigned() * 1.732
            guard pink else {
                samples[index] += amplitude * white
                continue
            }
            b[0] = 0.99886 * b[0] + white * 0.0555179
            b[1] = 0.99332 * b[1] + white * 0.0750759
            b[2] = 0.96900 * b[2] + white * 0.1538520
            b[3] = 0.86650 * b[3] + white * 0.3104856
            b[4] = 0.55000 * b[4] + white * 0.5329522
            b[5] = -0.7616 * b[5] - white * 0.0168980
            let value = b[0] + b[1] + b[2] + b[3] + b[4] + b[5] + b[6] + white * 0.5362
            b[6] = white * 0.115926
            samples[index] += amplitude * value * 0.2
        }
    }

    /// A drum pattern: a kick on every beat, louder on the first of each bar of 4, and a hi-hat between, at `bpm`
    /// from `start` to `end` seconds; the beat times.
    @discardableResult
    mutating func groove(bpm: Double, from start: Double, to end: Double) -> [Double] {
        var beats: [Double] = []
        var time = start
        while time < end - 1e-9 {
            kick(at: time, amplitude: beats.count % 4 == 0 ? 0.8 : 0.5)
            hat(at: time + 30 / bpm)
            beats.append(time)
            time += 60 / bpm
        }
        return beats
    }
}

/// A small deterministic random number generator (SplitMix64).
struct SplitMix {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
    /// Uniform in −1…1.
    mutating func nextSigned() -> Float { Float(Double(next() >> 11) / Double(1 << 53) * 2 - 1) }
}

/// What the tracker said of every frame: the frame's audio time (of its last sample), and its state.
struct TrackedFrames {
    var times: [Double] = []
    var states: [BeatState] = []

    /// The audio times of the frames that announced a beat.
    var beats: [Double] { zip(times, states).filter { $0.1.beat > 0 }.map(\.0) }

    /// The states from `time` seconds on.
    func states(from time: Double) -> [BeatState] { zip(times, states).filter { $0.0 >= time }.map(\.1) }
}

/// Runs `samples` (mono, 44.1 kHz) through a ``BandAnalyzer`` at `fps` frames per second, as the sender does.
func trackBeats(_ samples: [Float], fps: Int = 100) -> TrackedFrames {
    var analyzer = BandAnalyzer(sampleRate: DrumTrack.sampleRate)
    var result = TrackedFrames()
    var start = 0
    var frame = 1
    while start < samples.count {
        let end = min(samples.count, Int((Double(frame) * DrumTrack.sampleRate / Double(fps)).rounded(.down)))
        analyzer.process(interleaved: samples[start..<end], channels: 1)
        _ = analyzer.nextFrame()
        result.times.append(Double(end - 1) / DrumTrack.sampleRate)
        result.states.append(analyzer.lastBeat)
        start = end
        frame += 1
    }
    return result
}

/// Seconds from `after` to the first of four consecutive `reference` beats that each have an announced beat within
/// ±70 ms, with no other announced beat among them (the beat benchmark's lock time); nil when never.
func lockTime(reference: [Double], announced: [Double], after: Double) -> Double? {
    let candidates = reference.filter { $0 >= after }
    guard candidates.count >= 4 else { return nil }
    for start in 0...(candidates.count - 4) {
        let run = candidates[start..<(start + 4)]
        let matched = run.allSatisfy { beat in announced.contains { abs($0 - beat) <= 0.07 } }
        let among = announced.filter { $0 >= run.first! - 0.07 && $0 <= run.last! + 0.07 }
        if matched, among.count == 4 { return run.first! - after }
    }
    return nil
}

@Suite("Beat tracking")
struct BeatTrackerTests {
    @Test("kicks at 120 BPM: the tracker locks, holds 120 BPM and announces every beat within 70 ms of its kick")
    func locksOnKicks() throws {
        var track = DrumTrack(seconds: 20)
        let kicks = track.groove(bpm: 120, from: 0.25, to: 20)
        let frames = BeatTrackerTests.tracked(track)
        let lockedAt = try #require(frames.times.first { time in frames.states(from: time).first!.bpm > 0 })
        #expect(lockedAt < 5, "locked after \(lockedAt) s")
        for state in frames.states(from: 5) { #expect(abs(state.bpm - 120) <= 1, "\(state)") }
        let announced = frames.beats.filter { $0 >= 5 }
        let expected = kicks.filter { $0 >= 5 && $0 <= 19.9 }
        for beat in announced {
            let nearest = kicks.min { abs($0 - beat) < abs($1 - beat) }!
            #expect(abs(beat - nearest) <= 0.07, "beat at \(beat) s, nearest kick at \(nearest) s")
        }
        #expect(announced.count >= expected.count - 1 && announced.count <= expected.count + 1)
    }

    @Test("after a step from 100 to 128 BPM the tracker locks onto the new tempo within 2 s")
    func locksAfterTempoStep() throws {
        var track = DrumTrack(seconds: 24)
        let before = track.groove(bpm: 100, from: 0.25, to: 12.25)
        let step = before.last! + 0.6
        let after = track.groove(bpm: 128, from: step, to: 24)
        let frames = BeatTrackerTests.tracked(track)
        let lock = try #require(lockTime(reference: after, announced: frames.beats, after: step))
        #expect(lock <= 2, "locked \(lock) s after the step")
        for state in frames.states(from: 20) { #expect(abs(state.bpm - 128) <= 1.5, "\(state)") }
    }

    @Test("through a 4-bar break (the kicks stop, a pad goes on) the beats go on in phase")
    func holdsThroughBreak() throws {
        var track = DrumTrack(seconds: 28)
        let first = track.groove(bpm: 120, from: 0.25, to: 12.25)
        let second = track.groove(bpm: 120, from: 20.25, to: 28)
        track.pad(from: 0.25, to: 28)
        let frames = BeatTrackerTests.tracked(track)
        let inBreak = frames.beats.filter { $0 > 12.5 && $0 < 20.1 }
        #expect(inBreak.count >= 14, "\(inBreak.count) beats announced in the break")
        for beat in inBreak + frames.beats.filter({ $0 >= 20.1 && $0 < 27.5 }) {
            let nearest = (first + Array(stride(from: 12.25, to: 20.2, by: 0.5)) + second).min {
                abs($0 - beat) < abs($1 - beat)
            }!
            #expect(abs(beat - nearest) <= 0.07, "beat at \(beat) s, the beat's time \(nearest) s")
        }
    }

    @Test(
        "silence, white noise, pink noise and a held pad give no beat and 0 BPM",
        arguments: ["silence", "white noise", "pink noise", "pad"])
    func noBeatWithoutPulse(signal: String) {
        var track = DrumTrack(seconds: 20)
        switch signal {
        case "white noise": track.noise(amplitude: 0.1, pink: false)
        case "pink noise": track.noise(amplitude: 0.1, pink: true)
        case "pad": track.pad(from: 0.5, to: 20)
        default: break
        }
        let frames = BeatTrackerTests.tracked(track)
        #expect(frames.beats.isEmpty, "\(frames.beats.count) beats, the first at \(frames.beats.first ?? 0) s")
        #expect(frames.states.allSatisfy { $0.bpm == 0 && $0.phase == 0 })
    }

    @Test("the same audio gives the same beats, to the frame", arguments: [100, 1000])
    func deterministic(fps: Int) {
        var track = DrumTrack(seconds: 10)
        track.groove(bpm: 96, from: 0.1, to: 10)
        let first = track.samples
        #expect(BeatTrackerTests.tracked(track, fps: fps).states == BeatTrackerTests.tracked(track, fps: fps).states)
        #expect(first == track.samples)
    }

    @Test(
        "the beat does not depend on the frame rate: 50 and 1000 frames/s lock onto 120 BPM too", arguments: [50, 1000])
    func frameRateIndependent(fps: Int) {
        var track = DrumTrack(seconds: 15)
        let kicks = track.groove(bpm: 120, from: 0.25, to: 15)
        let frames = BeatTrackerTests.tracked(track, fps: fps)
        let announced = frames.beats.filter { $0 >= 5 }
        #expect(announced.count >= 18, "\(announced.count) beats from 5 s on")
        for beat in announced {
            let nearest = kicks.min { abs($0 - beat) < abs($1 - beat) }!
            #expect(abs(beat - nearest) <= 0.07 + 0.5 / Double(fps), "beat at \(beat) s, kick at \(nearest) s")
        }
    }

    @Test("the beat of the loudest kick in each bar is the downbeat, 1, and the places count 1…4 in order")
    func placesCountThroughTheBar() {
        var track = DrumTrack(seconds: 15)
        let kicks = track.groove(bpm: 120, from: 0.25, to: 15)
        let frames = BeatTrackerTests.tracked(track)
        let announced = zip(frames.times, frames.states).filter { $0.0 >= 6 && $0.1.beat > 0 }
        #expect(announced.count > 12)
        for (time, state) in announced {
            let bar = kicks.firstIndex { abs($0 - time) <= 0.07 }.map { $0 % 4 + 1 }
            #expect(state.beat == bar, "beat at \(time) s announced as \(state.beat), the kick's place is \(bar ?? 0)")
        }
    }

    static func tracked(_ track: DrumTrack, fps: Int = 100) -> TrackedFrames { trackBeats(track.samples, fps: fps) }
}
