#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Turns the band envelopes of each analysis frame into an onset strength on a fixed grid of ``tick`` seconds:
/// the weighted, half-wave rectified rise of each band's envelope from one tick to the next, relative to the band's
/// running level (a mean that rises in ``riseTime`` and falls in ``fallTime``).
///
/// Relative to the band's level, the strength does not depend on the music's loudness, yet a loud hit counts more
/// than a soft one in the same band: a kick over a bass line rises further above the bass's level than the next
/// bass note does (a rise in dB would rate them alike). The level falls slowly, so a break (the drums out, a pad
/// going on) keeps the weak onsets it has, rather than being scaled up to the music's. Envelopes below the noise gate count as the gate, so
/// silence has no onsets, and a rise counts up to ``riseLimit`` times the level.
///
/// The grid does not depend on the frame rate: at more than 100 frames/s the frames within a tick give the tick
/// their highest envelope (so a low note's ripple between 1-ms frames is not counted as rises); a frame longer
/// than a tick spreads its rise evenly over the ticks it covers.
///
/// Units: onset strength in multiples of the band's level per tick (weighted sum over the bands); ≥ 0.
struct OnsetStrength: Sendable {
    /// The grid, seconds.
    static let tick = 0.01
    /// Weights of the bands' rises (bass, mid, treble): kicks and snares carry the beat more than hi-hats.
    static let weights = SIMD3<Float>(1.0, 0.8, 0.4)
    /// Time constants of a band's running level, seconds, rising and falling.
    static let riseTime = 0.5
    static let fallTime = 8.0
    /// A band's rise counts from this share of its level on: a held chord's beating or a pad's swell is no onset.
    static let riseThreshold: Float = 0.15
    /// A band's level counts as no less than this share of the loudest band's (−20 dB).
    static let bandFloor: Float = 0.1
    /// A band's rise counts up to this many times its level a tick (a sound out of silence).
    static let riseLimit: Float = 10

    /// The floor of the envelopes, linear (the analysis's noise gate).
    let gate: Float
    /// The highest envelope of the frames since the last tick, linear.
    private var peak = SIMD3<Float>()
    /// Envelopes of the last tick, linear; nil before the first.
    private var previous: SIMD3<Float>?
    /// Running level of each band's envelope, linear.
    private var level = SIMD3<Float>()
    /// Per tick, the weights with which the level follows the envelope, rising and falling.
    private let riseWeight = Float(OnsetStrength.tick / OnsetStrength.riseTime)
    private let fallWeight = Float(OnsetStrength.tick / OnsetStrength.fallTime)
    /// Seconds since the end of the last tick.
    private var clock = 0.0

    /// Creates it for envelopes gated at `gate` dBFS.
    init(gate: Double) {
        self.gate = Float(pow(10, gate / 20))
    }

    /// The ticks that ended with a frame.
    struct Ticks {
        /// How many ticks ended (0 while a tick is still open).
        var count: Int
        /// Onset strength of each of them, all bands weighted.
        var total: Float
        /// The bass band's rise in each of them.
        var bass: Float
        /// The mid band's rise in each of them.
        var mid: Float
        /// Seconds from the end of the last of them to the end of the frame (0 ≤ remainder < tick).
        var remainder: Double
    }

    /// Takes one frame's band envelopes (linear amplitude, the highest of the frame) that lasted `elapsed` seconds.
    mutating func add(envelopes: SIMD3<Float>, elapsed: Double) -> Ticks {
        peak = pointwiseMax(peak, envelopes)
        clock += elapsed
        // A hair of slack, so that 100 frames of 10 ms make 100 ticks whatever the rounding of each.
        let count = Int((clock + 1e-9) / Self.tick)
        guard count > 0 else { return Ticks(count: 0, total: 0, bass: 0, mid: 0, remainder: clock) }
        clock = max(0, clock - Double(count) * Self.tick)
        let levels = pointwiseMax(peak, SIMD3(repeating: gate))
        peak = SIMD3()
        guard let previous else {
            previous = levels
            level = levels
            return Ticks(count: count, total: 0, bass: 0, mid: 0, remainder: clock)
        }
        // Each band's rise over its level, the level never taken below the loudest band's less ``bandFloor``: a band
        // far quieter than the music (a lone hi-hat over silence in treble) is not blown up to the kick's size.
        let floor = SIMD3(repeating: level.max() * Self.bandFloor)
        var rises = (levels - previous) / pointwiseMax(level, floor) - SIMD3(repeating: Self.riseThreshold)
        rises = pointwiseMin(pointwiseMax(rises, SIMD3()), SIMD3(repeating: Self.riseLimit))
        self.previous = levels
        let weight = SIMD3(repeating: fallWeight).replacing(with: riseWeight, where: levels .> level)
        level += (levels - level) * pointwiseMin(weight * Float(count), SIMD3(repeating: 1))
        let share = 1 / Float(count)
        return Ticks(
            count: count, total: (rises * Self.weights).sum() * share, bass: rises[0] * share, mid: rises[1] * share,
            remainder: clock)
    }
}
