import LightOrganCore
import Testing

@Suite("The analysis plot")
struct LevelPlotTests {
    /// Plots `seconds` of `source` at 100 frames/s the way `lightorgan analyze --plot` does.
    func plot(_ source: some AudioSource, seconds: Double) throws -> LevelPlot {
        var plot = LevelPlot(title: "test", sampleRate: source.format.sampleRate, duration: seconds)
        var producer = FrameProducer(source: source)
        for tick in 1...Int(seconds * 100) {
            guard let frame = try producer.frame(upTo: Double(tick) / 100) else { break }
            plot.addFrame(frame, at: Double(tick) / 100, envelopes: producer.lastEnvelopes)
        }
        return plot
    }

    @Test("a beat of ten hits in bass: ten onsets of the sound and ten flashes of the lamp, nothing in the other lanes")
    func marksEveryHit() throws {
        let plot = try plot(BeatSource(frequency: 60, ramp: 0.02, [(10, -6)]), seconds: 5)
        #expect(plot.onsetCounts == [10, 0, 0], "\(plot.onsetCounts)")
        #expect(plot.flashCounts == [10, 0, 0], "\(plot.flashCounts)")
        let svg = plot.svg()
        #expect(svg.hasPrefix("<svg") && svg.hasSuffix("</svg>\n"))
        #expect(svg.contains("10 ▼") && svg.contains("10 |"))
    }
}
