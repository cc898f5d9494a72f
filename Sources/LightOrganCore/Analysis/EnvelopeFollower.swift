#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A peak envelope follower with separate attack and release times.
///
/// Per sample: `e += (|x| − e)·(1 − a)` with the attack coefficient while `|x|` is above `e`,
/// and the release coefficient below it. A time constant τ (seconds) gives `a = exp(−1 / (τ·fs))`:
/// after τ the envelope has covered 63 % of a step. The output is a linear amplitude (1 = full scale).
public struct EnvelopeFollower: Sendable {
    /// Per-sample coefficient while rising, `exp(−1 / (attack·fs))`.
    public let attackCoefficient: Float
    /// Per-sample coefficient while falling, `exp(−1 / (release·fs))`.
    public let releaseCoefficient: Float
    /// The current envelope, linear amplitude ≥ 0.
    public private(set) var envelope: Float = 0

    /// Creates a follower with `attack` and `release` time constants in seconds, at `sampleRate` Hz.
    public init(attack: Double, release: Double, sampleRate: Double) {
        attackCoefficient = Self.coefficient(timeConstant: attack, sampleRate: sampleRate)
        releaseCoefficient = Self.coefficient(timeConstant: release, sampleRate: sampleRate)
    }

    /// Feeds one sample and returns the new envelope.
    @inline(__always)
    public mutating func process(_ x: Float) -> Float {
        let magnitude = abs(x)
        let coefficient = magnitude > envelope ? attackCoefficient : releaseCoefficient
        envelope = magnitude + coefficient * (envelope - magnitude)
        return envelope
    }

    private static func coefficient(timeConstant: Double, sampleRate: Double) -> Float {
        guard timeConstant > 0 else { return 0 }
        return Float(exp(-1 / (timeConstant * sampleRate)))
    }
}
