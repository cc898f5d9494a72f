#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Maps the envelopes of the three bands to 0…1 with an automatic gain per band.
///
/// Each band keeps a running peak (dBFS) that rises towards a louder envelope with the time
/// constant ``AnalysisParameters/peakRiseTime`` and falls at ``AnalysisParameters/peakFallRate``
/// (never below the envelope, nor below ``AnalysisParameters/minimumPeak``). A band's level is
/// its envelope's position between `floor` and `peak + headroom`, linear in dB (so it reads as
/// loudness), where `floor` is the highest of: the peak minus the dynamic range, the noise gate, and
/// the loudest band's peak minus the cross-band floor; the span is at least
/// ``AnalysisParameters/minimumSpan``. Below the floor the level is 0; a transient above the top
/// is full brightness.
public struct AutomaticGain: Sendable {
    private let parameters: AnalysisParameters
    /// Running peaks per band, dBFS.
    public private(set) var peaks: [Double]

    public init(parameters: AnalysisParameters) {
        self.parameters = parameters
        peaks = Array(repeating: parameters.minimumPeak, count: Band.allCases.count)
    }

    /// Updates the running peaks with one envelope per band (linear amplitude) measured over
    /// `elapsed` seconds of audio, and returns the levels, each 0…1.
    public mutating func levels(envelopes: SIMD3<Float>, elapsed: Double) -> SIMD3<Float> {
        var decibels = SIMD3<Double>()
        for band in 0..<3 { decibels[band] = Self.decibels(envelopes[band]) }
        let fall = parameters.peakFallRate * elapsed
        let rise = 1 - exp(-elapsed / parameters.peakRiseTime)
        for band in peaks.indices {
            let level = decibels[band]
            if level > peaks[band] {
                peaks[band] += (level - peaks[band]) * rise
            } else {
                peaks[band] = max(level, peaks[band] - fall, parameters.minimumPeak)
            }
        }
        let loudestPeak = peaks.max() ?? parameters.minimumPeak
        var levels = SIMD3<Float>()
        for band in 0..<3 {
            let floor = max(
                peaks[band] - parameters.dynamicRange,
                parameters.noiseGate,
                loudestPeak - parameters.crossBandFloor)
            let span = max(peaks[band] + parameters.headroom - floor, parameters.minimumSpan)
            levels[band] = Float(min(max((decibels[band] - floor) / span, 0), 1))
        }
        return levels
    }

    /// dBFS of a linear amplitude; silence is −200 dB.
    static func decibels(_ amplitude: Float) -> Double {
        amplitude > 1e-10 ? 20 * log10(Double(amplitude)) : -200
    }
}
