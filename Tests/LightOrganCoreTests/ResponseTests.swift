import Foundation
import LightOrganCore
import Testing

/// Noise from a fixed seed: white (Gaussian) or pink (Paul Kellet's filter), at an RMS level.
struct NoiseSource: AudioSource {
    enum Colour { case white, pink }
    let format = AudioFormat(sampleRate: 44_100, channels: 1)
    let colour: Colour
    /// RMS amplitude per segment: (seconds, dBFS), played in order, the last one forever.
    let segments: [(seconds: Double, decibels: Double)]
    private var state: UInt64 = 0x9E37_79B9_7F4A_7C15
    private var pinkState = [Float](repeating: 0, count: 7)
    private var index = 0

    init(_ colour: Colour, _ segments: [(seconds: Double, decibels: Double)]) {
        self.colour = colour
        self.segments = segments
    }

    mutating func read(frames: Int) -> [Float] {
        (0..<frames).map { _ in nextSample() }
    }

    private mutating func uniform() -> Double {
        state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
        return (Double(state >> 11) + 0.5) / Double(1 << 53)
    }

    private mutating func nextSample() -> Float {
        let time = Double(index) / 44_100
        index += 1
        var start = 0.0
        var decibels = segments.last!.decibels
        for segment in segments {
            if time < start + segment.seconds { decibels = segment.decibels; break }
            start += segment.seconds
        }
        let gaussian = Float((-2 * log(uniform())).squareRoot() * cos(2 * .pi * uniform()))
        let amplitude = Float(pow(10, decibels / 20))
        guard colour == .pink else { return gaussian * amplitude }
        let w = gaussian * 0.3
        var b = pinkState
        b[0] = 0.99886 * b[0] + w * 0.0555179; b[1] = 0.99332 * b[1] + w * 0.0750759
        b[2] = 0.96900 * b[2] + w * 0.1538520; b[3] = 0.86650 * b[3] + w * 0.3104856
        b[4] = 0.55000 * b[4] + w * 0.5329522; b[5] = -0.7616 * b[5] - w * 0.0168980
        let pink = b[0] + b[1] + b[2] + b[3] + b[4] + b[5] + b[6] + w * 0.5362
        b[6] = w * 0.115926
        pinkState = b
        return pink * amplitude  // RMS of this pink is about 0.3·(sum of gains) ≈ 1 within a few dB
    }
}

/// A tone at -6 dBFS from `start` to `end` seconds, silence around it.
struct ToneBurst: AudioSource {
    let format = AudioFormat(sampleRate: 44_100, channels: 1)
    let frequency: Double, start: Double, end: Double
    private var index = 0

    init(frequency: Double, start: Double, end: Double) {
        (self.frequency, self.start, self.end) = (frequency, start, end)
    }

    mutating func read(frames: Int) -> [Float] {
        defer { index += frames }
        return (index..<index + frames).map { sample in
            let time = Double(sample) / 44_100
            return time >= start && time < end ? Float(0.5 * sin(2 * .pi * frequency * time)) : 0
        }
    }
}

@Suite("Level response (analysis.response: level)")
struct ResponseTests {
    @Test(
        "hiss at −70 dBFS and silence leave every lamp off after the first half second",
        arguments: AnalysisParameters.Response.allCases)
    func hissIsDark(response: AnalysisParameters.Response) throws {
        for source in [NoiseSource(.white, [(10, -70)]) as any AudioSource, ToneSource(frequency: 100, amplitude: 0)] {
            let frames = try analyse(source, seconds: 3, response: response)
            #expect(frames.dropFirst(50).allSatisfy { $0.isOff }, "\(frames.dropFirst(50).first { !$0.isOff }!)")
        }
    }

    @Test("pink noise lights all three lamps")
    func pinkNoiseLightsAll() throws {
        let frames = try analyse(NoiseSource(.pink, [(10, -20)]), seconds: 3, response: .level).dropFirst(50)
        for band in Band.allCases {
            let mean = frames.map { Double($0[band]) }.reduce(0, +) / Double(frames.count)
            #expect(mean > 100, "\(band) mean \(mean)")
        }
    }

    @Test("after a 20 dB drop the lamps are back to 90 % of their former level within 4 s")
    func recoversFromLevelStep() throws {
        let frames = try analyse(NoiseSource(.pink, [(5, -10), (20, -30)]), seconds: 12, response: .level)
        for band in Band.allCases {
            func mean(_ range: Range<Int>) -> Double {
                frames[range].map { Double($0[band]) }.reduce(0, +) / Double(range.count)
            }
            let before = mean(300..<500)
            #expect(mean(500..<600) < 0.6 * before, "\(band) dips after the drop")
            #expect(mean(900..<1000) >= 0.9 * before, "\(band) recovered: \(mean(900..<1000)) vs \(before)")
        }
    }

    @Test(
        "a burst reaches half its peak quickly and falls below half within 60–200 ms after it stops",
        arguments: [(1000.0, Band.mid, 5.0), (60, .bass, 15)])
    func riseAndFall(frequency: Double, band: Band, maximumRise: Double) throws {
        let frames = try analyse(
            ToneBurst(frequency: frequency, start: 1, end: 1.5), seconds: 2.5, fps: 1000, response: .level)
        // Frame k holds the audio up to (k + 1) ms; the last sample in it lies at (k + 1) ms − 1 sample.
        func time(_ index: Int) -> Double { Double(index + 1) / 1000 }
        let peak = frames[1000..<1500].map { $0[band] }.max()!
        let risen = try #require(frames.indices.first { time($0) >= 1 && frames[$0][band] >= peak / 2 })
        let fallen = try #require(frames.indices.first { time($0) >= 1.5 && frames[$0][band] < peak / 2 })
        #expect((time(risen) - 1) * 1000 <= maximumRise)
        #expect((60...200).contains((time(fallen) - 1.5) * 1000))
    }
}
