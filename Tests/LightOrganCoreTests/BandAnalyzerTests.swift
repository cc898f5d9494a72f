import LightOrganCore
import Testing

@Suite("Band analysis")
struct BandAnalyzerTests {
    @Test(
        "with the level response, a steady tone lights its own band and leaves the others dark",
        arguments: [(60.0, Band.bass), (1000, .mid), (8000, .treble), (12_000, .treble)]
    )
    func toneLightsItsBand(frequency: Double, band: Band) throws {
        let frames = try analyse(ToneSource(frequency: frequency, amplitude: 0.5), seconds: 2, response: .level)
        let settled = frames.dropFirst(50)  // after the first half second
        for frame in settled {
            #expect(frame[band] >= 200, "\(frequency) Hz: \(frame)")
            for other in Band.allCases where other != band {
                #expect(frame[other] <= 10, "\(frequency) Hz: \(frame)")
            }
        }
    }

    @Test("stereo input is analysed like the same signal in mono")
    func stereoMatchesMono() throws {
        let mono = try analyse(ToneSource(frequency: 60, channels: 1), seconds: 1)
        let stereo = try analyse(ToneSource(frequency: 60, channels: 2), seconds: 1)
        #expect(mono == stereo)
    }

    @Test("silence gives every lamp off")
    func silenceIsDark() throws {
        let frames = try analyse(ToneSource(frequency: 1000, amplitude: 0), seconds: 1)
        #expect(frames.allSatisfy { $0.isOff })
    }

    @Test(
        "with the level response, a tone burst lights within a frame and goes dark within a quarter second after it stops"
    )
    func burstRisesAndFalls() throws {
        struct Burst: AudioSource {
            let format = AudioFormat(sampleRate: 44_100, channels: 1)
            var tone = ToneSource(frequency: 1000, amplitude: 0.5)
            var index = 0
            mutating func read(frames: Int) -> [Float] {
                let block = tone.read(frames: frames).enumerated().map { offset, sample in
                    (44_100...66_150).contains(index + offset) ? sample : 0  // on from 1.0 s to 1.5 s
                }
                index += frames
                return block
            }
        }
        let frames = try analyse(Burst(), seconds: 2.5, response: .level)  // frame k covers audio up to (k + 1) / 100 s
        #expect(frames[99].mid == 0)
        #expect(frames[100].mid >= 128, "one frame after the onset: \(frames[100])")
        let darkAgain = try #require(frames[150...].firstIndex { $0.mid < 128 })
        #expect((darkAgain - 149) * 10 <= 250, "below half \((darkAgain - 149) * 10) ms after the stop")
    }
}

@Suite("Band analysis input paths")
struct BandAnalyzerInputPathTests {
    @Test("16-bit stereo in odd-sized blocks gives the same frames as Float input", arguments: [1, 7, 441, 882, 1001])
    func int16PathMatchesFloatPath(blockFrames: Int) {
        var groove = DemoGroove()
        let mono = groove.read(frames: 44_100)
        let int16 = mono.flatMap { [Int16($0 * 30_000), Int16($0 * 20_000)] }
        let float = int16.map { Float($0) / 32768 }
        var viaInt16 = BandAnalyzer(sampleRate: 44_100)
        var viaFloat = BandAnalyzer(sampleRate: 44_100)
        var framesInt16: [LevelFrame] = [], framesFloat: [LevelFrame] = []
        var start = 0
        while start < mono.count {
            let end = min(start + blockFrames, mono.count)
            int16.withUnsafeBufferPointer {
                viaInt16.process(
                    int16Interleaved: UnsafeBufferPointer(rebasing: $0[(2 * start)..<(2 * end)]), channels: 2)
            }
            viaFloat.process(interleaved: float[(2 * start)..<(2 * end)], channels: 2)
            if end / 441 != start / 441 || end == mono.count {
                framesInt16.append(viaInt16.nextFrame())
                framesFloat.append(viaFloat.nextFrame())
            }
            start = end
        }
        #expect(framesInt16.count > 10)
        for (a, b) in zip(framesInt16, framesFloat) {
            for band in Band.allCases { #expect(abs(Int(a[band]) - Int(b[band])) <= 1, "\(a) vs \(b)") }
        }
    }
}

@Suite("Band analysis from sources")
struct BandAnalyzerSourceTests {
    /// A source that only has `read(frames:)`, so it goes through the converting default path.
    struct ConvertingOnly: AudioSource {
        var file: WAVFile
        var format: AudioFormat { file.format }
        mutating func read(frames: Int) throws -> [Float] { file.read(frames: frames) }
    }

    @Test("a 16-bit WAV analysed straight from the mapped file gives the frames of the converting path")
    func wavDirectPathMatchesConverting() throws {
        var groove = DemoGroove()
        let mono = groove.read(frames: 88_200)
        let stereo = mono.flatMap { [Double($0) * 0.9, Double($0) * 0.6] }
        let data = WAVTestFile(seconds: 2, channels: 2, samples: stereo).data
        var direct = FrameProducer(source: try WAVFile(data: data, name: "groove.wav"))
        var converting = FrameProducer(source: ConvertingOnly(file: try WAVFile(data: data, name: "groove.wav")))
        var frames = 0
        for tick in 1...200 {
            let a = try direct.frame(upTo: Double(tick) / 100)
            let b = try converting.frame(upTo: Double(tick) / 100)
            #expect((a == nil) == (b == nil))
            guard let a, let b else { break }
            for band in Band.allCases { #expect(abs(Int(a[band]) - Int(b[band])) <= 1, "tick \(tick): \(a) vs \(b)") }
            frames += 1
        }
        #expect(frames == 200)
        #expect(direct.consumedFrames == 88_200)
    }

    @Test("a frame asked for before any new audio came repeats the previous one (no time passed)")
    func frameWithoutAudio() {
        var analyzer = BandAnalyzer(sampleRate: 44_100)
        var groove = DemoGroove()
        var last = LevelFrame.off
        for _ in 0..<100 {
            analyzer.process(interleaved: groove.read(frames: 441), channels: 1)
            last = analyzer.nextFrame()
        }
        #expect(last != .off, "the groove lights something")
        #expect(analyzer.nextFrame() == last)
        #expect(analyzer.nextFrame() == last)
    }
}
