#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A Linkwitz–Riley low- or high-pass filter of order 4 or 8, as a cascade of biquads.
///
/// LR(2n) is a Butterworth filter of order n, squared. LR4: two sections with Q = 1/√2; slope
/// 24 dB per octave. LR8: sections with Q = 1/(2·cos(π/8)) ≈ 0.541 and 1/(2·cos(3π/8)) ≈ 1.307,
/// each twice; slope 48 dB per octave (one octave into the stop band about −48 dB). At the corner
/// each side is −6 dB, and a low-pass and a high-pass at the same corner sum to an all-pass.
/// The slope is what keeps a loud neighbour band's leakage below the automatic gain's cross-band floor.
///
/// This type is the reference design (coefficients, magnitude response, a plain scalar filter);
/// ``BiquadBank`` runs the same sections eight at a time for the analyzer.
public struct LinkwitzRileyFilter: Sendable {
    /// Which side of the corner passes.
    public enum Kind: Sendable { case lowPass, highPass }

    /// The sections, in order: 2 for order 4, 4 for order 8.
    public private(set) var sections: [Biquad]

    /// Creates a filter of `order` 4 or 8 with its corner at `frequency` (Hz) for audio at
    /// `sampleRate` (Hz).
    ///
    /// - Precondition: 0 < frequency < sampleRate / 2; order is 4 or 8.
    public init(_ kind: Kind, order: Int = 8, frequency: Double, sampleRate: Double) {
        precondition(frequency > 0 && frequency < sampleRate / 2, "corner must lie in 0…Nyquist")
        precondition(order == 4 || order == 8, "order 4 or 8")
        let qualities =
            order == 4
            ? [(0.5 as Double).squareRoot()] : [1 / (2 * cos(Double.pi / 8)), 1 / (2 * cos(3 * Double.pi / 8))]
        sections = (qualities + qualities).map { q in
            switch kind {
            case .lowPass: .lowPass(frequency: frequency, q: q, sampleRate: sampleRate)
            case .highPass: .highPass(frequency: frequency, q: q, sampleRate: sampleRate)
            }
        }
    }

    /// Filters one sample (scalar reference path).
    public mutating func process(_ x: Float) -> Float {
        var y = x
        for index in sections.indices { y = sections[index].process(y) }
        return y
    }

    /// The magnitude response at `frequency` (Hz), linear.
    public func magnitude(at frequency: Double, sampleRate: Double) -> Double {
        sections.reduce(1) { $0 * $1.magnitude(at: frequency, sampleRate: sampleRate) }
    }
}
