#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A second-order IIR section (biquad) in transposed direct form II.
///
/// Coefficients follow Robert Bristow-Johnson's "Audio EQ Cookbook", normalised so that a0 = 1.
/// The state is two `Float`s; one call of ``process(_:)`` costs 5 multiplies and 4 adds.
public struct Biquad: Sendable {
    public var b0: Float, b1: Float, b2: Float
    public var a1: Float, a2: Float
    private var z1: Float = 0
    private var z2: Float = 0

    /// Creates a section from normalised coefficients (a0 = 1).
    public init(b0: Float, b1: Float, b2: Float, a1: Float, a2: Float) {
        (self.b0, self.b1, self.b2, self.a1, self.a2) = (b0, b1, b2, a1, a2)
    }

    /// A low-pass section with corner `frequency` (Hz, −3 dB at Q = 1/√2) at `sampleRate` (Hz).
    public static func lowPass(frequency: Double, q: Double, sampleRate: Double) -> Biquad {
        let (cosW, alpha) = Self.prewarp(frequency: frequency, q: q, sampleRate: sampleRate)
        let a0 = 1 + alpha
        return Biquad(
            b0: Float((1 - cosW) / 2 / a0), b1: Float((1 - cosW) / a0), b2: Float((1 - cosW) / 2 / a0),
            a1: Float(-2 * cosW / a0), a2: Float((1 - alpha) / a0))
    }

    /// A high-pass section with corner `frequency` (Hz) at `sampleRate` (Hz).
    public static func highPass(frequency: Double, q: Double, sampleRate: Double) -> Biquad {
        let (cosW, alpha) = Self.prewarp(frequency: frequency, q: q, sampleRate: sampleRate)
        let a0 = 1 + alpha
        return Biquad(
            b0: Float((1 + cosW) / 2 / a0), b1: Float(-(1 + cosW) / a0), b2: Float((1 + cosW) / 2 / a0),
            a1: Float(-2 * cosW / a0), a2: Float((1 - alpha) / a0))
    }

    /// Filters one sample.
    @inline(__always)
    public mutating func process(_ x: Float) -> Float {
        let y = b0 * x + z1
        z1 = b1 * x - a1 * y + z2
        z2 = b2 * x - a2 * y
        return y
    }

    /// Clears the state (as if the input had been silent forever).
    public mutating func reset() {
        z1 = 0
        z2 = 0
    }

    /// The magnitude of the frequency response at `frequency` (Hz), linear.
    public func magnitude(at frequency: Double, sampleRate: Double) -> Double {
        let w = 2 * Double.pi * frequency / sampleRate
        // H(e^jw) = (b0 + b1 e^-jw + b2 e^-2jw) / (1 + a1 e^-jw + a2 e^-2jw)
        let (c1, s1, c2, s2) = (cos(w), sin(w), cos(2 * w), sin(2 * w))
        let nr = Double(b0) + Double(b1) * c1 + Double(b2) * c2
        let ni = -(Double(b1) * s1 + Double(b2) * s2)
        let dr = 1 + Double(a1) * c1 + Double(a2) * c2
        let di = -(Double(a1) * s1 + Double(a2) * s2)
        return ((nr * nr + ni * ni) / (dr * dr + di * di)).squareRoot()
    }

    private static func prewarp(frequency: Double, q: Double, sampleRate: Double) -> (cosW: Double, alpha: Double) {
        let w = 2 * Double.pi * frequency / sampleRate
        return (cos(w), sin(w) / (2 * q))
    }
}
