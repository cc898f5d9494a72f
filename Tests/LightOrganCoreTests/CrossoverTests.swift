import Foundation
import LightOrganCore
import Testing

@Suite("Linkwitz–Riley crossover")
struct CrossoverTests {
    let sampleRate = 44_100.0

    @Test("is −6 dB at the corner, and low + high sum to unity there")
    func cornerIsMinusSixDecibels() {
        let low = LinkwitzRileyFilter(.lowPass, frequency: 250, sampleRate: sampleRate)
        let high = LinkwitzRileyFilter(.highPass, frequency: 250, sampleRate: sampleRate)
        #expect(abs(20 * log10(low.magnitude(at: 250, sampleRate: sampleRate)) - -6.02) < 0.1)
        #expect(abs(20 * log10(high.magnitude(at: 250, sampleRate: sampleRate)) - -6.02) < 0.1)
    }

    @Test(
        "falls 24 dB per octave into the stop band",
        arguments: [(LinkwitzRileyFilter.Kind.lowPass, 500.0, -24.0), (.lowPass, 1000, -48), (.highPass, 125, -24), (.highPass, 62.5, -48)]
    )
    func slope(kind: LinkwitzRileyFilter.Kind, frequency: Double, expectedDecibels: Double) {
        let filter = LinkwitzRileyFilter(kind, frequency: 250, sampleRate: sampleRate)
        let decibels = 20 * log10(filter.magnitude(at: frequency, sampleRate: sampleRate))
        // The ideal analogue slope is −24 dB/octave; the bilinear transform bends it by under 1 dB here.
        #expect(abs(decibels - expectedDecibels) < 1.0, "\(decibels) dB at \(frequency) Hz")
    }

    @Test("filters a real sine by the attenuation its formula predicts", arguments: [60.0, 250, 1000, 4000])
    func measuredAttenuationMatchesFormula(frequency: Double) {
        var filter = LinkwitzRileyFilter(.lowPass, frequency: 250, sampleRate: sampleRate)
        var source = ToneSource(frequency: frequency, amplitude: 1, sampleRate: sampleRate)
        let input = source.read(frames: Int(sampleRate))
        let output = input.map { filter.process($0) }
        let settled = Int(sampleRate / 2)  // skip the first half second of transient
        func rms(_ x: ArraySlice<Float>) -> Double { (x.reduce(0) { $0 + Double($1 * $1) } / Double(x.count)).squareRoot() }
        let measured = 20 * log10(rms(output[settled...]) / rms(input[settled...]))
        let predicted = 20 * log10(filter.magnitude(at: frequency, sampleRate: sampleRate))
        #expect(abs(measured - predicted) < 0.2, "measured \(measured) dB, predicted \(predicted) dB")
    }
}
