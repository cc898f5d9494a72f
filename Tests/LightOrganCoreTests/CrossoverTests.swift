import Foundation
import LightOrganCore
import Testing

@Suite("Linkwitz–Riley crossover")
struct CrossoverTests {
    let sampleRate = 44_100.0

    @Test("is −6 dB at the corner, and low + high sum to unity there")
    func cornerIsMinusSixDecibels() {
        for order in [4, 8] {
            let low = LinkwitzRileyFilter(.lowPass, order: order, frequency: 250, sampleRate: sampleRate)
            let high = LinkwitzRileyFilter(.highPass, order: order, frequency: 250, sampleRate: sampleRate)
            #expect(abs(20 * log10(low.magnitude(at: 250, sampleRate: sampleRate)) - -6.02) < 0.1)
            #expect(abs(20 * log10(high.magnitude(at: 250, sampleRate: sampleRate)) - -6.02) < 0.1)
        }
    }

    @Test(
        "falls 24 dB per octave per 4 orders into the stop band",
        arguments: [
            (LinkwitzRileyFilter.Kind.lowPass, 4, 500.0, -24.0), (.lowPass, 4, 1000, -48), (.highPass, 4, 125, -24),
            (.highPass, 4, 62.5, -48), (.lowPass, 8, 500, -48), (.highPass, 8, 125, -48), (.highPass, 8, 62.5, -96),
        ]
    )
    func slope(kind: LinkwitzRileyFilter.Kind, order: Int, frequency: Double, expectedDecibels: Double) {
        let filter = LinkwitzRileyFilter(kind, order: order, frequency: 250, sampleRate: sampleRate)
        let decibels = 20 * log10(filter.magnitude(at: frequency, sampleRate: sampleRate))
        // The ideal analogue slope; the bilinear transform bends it by under 1 dB here.
        #expect(abs(decibels - expectedDecibels) < 1.0, "\(decibels) dB at \(frequency) Hz")
    }

    @Test("the pipelined bank gives each cascade's exact output, delayed by its pipeline depth")
    func pipelinedBankMatchesCascade() {
        var high = LinkwitzRileyFilter(.highPass, frequency: 4000, sampleRate: sampleRate)
        var low = LinkwitzRileyFilter(.lowPass, frequency: 4000, sampleRate: sampleRate)
        var bank = BiquadBank<SIMD8<Float>>(first: high, second: low)
        var source = ToneSource(frequency: 3000, amplitude: 1, sampleRate: sampleRate)
        let input = source.read(frames: 2000)
        let expected = input.map { (high.process($0), low.process($0)) }
        let banked = input.map { bank.step($0) }
        let delay = BiquadBank<SIMD8<Float>>.delay
        #expect(delay == 3)
        for index in 0..<(input.count - delay) {
            #expect(abs(banked[index + delay].first - expected[index].0) < 1e-4)
            #expect(abs(banked[index + delay].second - expected[index].1) < 1e-4)
        }
    }

    @Test("filters a real sine by the attenuation its formula predicts", arguments: [60.0, 250, 500, 1000])
    func measuredAttenuationMatchesFormula(frequency: Double) {
        var filter = LinkwitzRileyFilter(.lowPass, frequency: 250, sampleRate: sampleRate)
        var source = ToneSource(frequency: frequency, amplitude: 1, sampleRate: sampleRate)
        let input = source.read(frames: Int(sampleRate))
        let output = input.map { filter.process($0) }
        let settled = Int(sampleRate / 2)  // skip the first half second of transient
        func rms(_ x: ArraySlice<Float>) -> Double {
            (x.reduce(0) { $0 + Double($1 * $1) } / Double(x.count)).squareRoot()
        }
        let measured = 20 * log10(rms(output[settled...]) / rms(input[settled...]))
        let predicted = 20 * log10(filter.magnitude(at: frequency, sampleRate: sampleRate))
        #expect(abs(measured - predicted) < 0.2, "measured \(measured) dB, predicted \(predicted) dB")
    }
}
