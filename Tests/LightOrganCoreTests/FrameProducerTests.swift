import LightOrganCore
import Testing

@Suite("Frame producer")
struct FrameProducerTests {
    @Test("reads exactly the audio that is due at each tick")
    func readsWhatIsDue() throws {
        var producer = FrameProducer(source: ToneSource(frequency: 60))
        _ = try producer.frame(upTo: 0.01)
        #expect(producer.consumedFrames == 441)
        _ = try producer.frame(upTo: 0.025)
        #expect(producer.consumedFrames == 1102)
    }

    @Test("after a long stall it shows the present, not a replay of the past")
    func skipsStaleAudio() throws {
        var parameters = AnalysisParameters.standard
        parameters.response = .level  // a steady tone lights its lamp fully (dance would flash it once)
        var producer = FrameProducer(source: ToneSource(frequency: 60), parameters: parameters)
        let frame = try #require(try producer.frame(upTo: 10))
        #expect(producer.consumedFrames == 441_000)
        #expect(frame.bass > 200)
    }

    @Test("ends with the source")
    func endsWithSource() throws {
        var wav = WAVTestFile(seconds: 0.05).data
        var producer = FrameProducer(source: try WAVFile(data: wav, name: "short.wav"))
        #expect(try producer.frame(upTo: 0.04) != nil)
        #expect(try producer.frame(upTo: 0.1) != nil)  // the last partial block still makes a frame
        #expect(producer.isFinished)
        #expect(try producer.frame(upTo: 0.2) == nil)
        wav.removeAll()
    }
}
