/// A 4th-order Linkwitz–Riley low- or high-pass filter: two identical Butterworth biquads in cascade.
///
/// At the corner frequency each side is −6 dB, so a low-pass and a high-pass at the same corner sum
/// to a flat magnitude (an all-pass). Far from the corner the slope is 24 dB per octave: one octave
/// into the stop band is about −24 dB, two octaves about −48 dB.
public struct LinkwitzRileyFilter: Sendable {
    /// Which side of the corner passes.
    public enum Kind: Sendable { case lowPass, highPass }

    private var first: Biquad
    private var second: Biquad

    /// Creates a filter with its corner at `frequency` (Hz) for audio at `sampleRate` (Hz).
    ///
    /// - Precondition: 0 < frequency < sampleRate / 2.
    public init(_ kind: Kind, frequency: Double, sampleRate: Double) {
        precondition(frequency > 0 && frequency < sampleRate / 2, "corner must lie in 0…Nyquist")
        let butterworthQ = 0.5.squareRoot()
        let section: Biquad =
            switch kind {
            case .lowPass: .lowPass(frequency: frequency, q: butterworthQ, sampleRate: sampleRate)
            case .highPass: .highPass(frequency: frequency, q: butterworthQ, sampleRate: sampleRate)
            }
        first = section
        second = section
    }

    /// Filters one sample.
    @inline(__always)
    public mutating func process(_ x: Float) -> Float {
        second.process(first.process(x))
    }

    /// The magnitude response at `frequency` (Hz), linear.
    public func magnitude(at frequency: Double, sampleRate: Double) -> Double {
        first.magnitude(at: frequency, sampleRate: sampleRate) * second.magnitude(at: frequency, sampleRate: sampleRate)
    }
}
