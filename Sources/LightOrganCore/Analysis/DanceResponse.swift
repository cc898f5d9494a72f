#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Maps the envelopes of the three bands to lamp levels that dance: dark between the beats of a
/// band, a flash on each of its onsets, on quiet and loud music alike (`analysis.response: dance`).
///
/// Each band is judged against its own recent past, in dB: a running mean `μ` and a running mean
/// absolute deviation `s` of the band's envelope (time constants ``DanceParameters/meanTime`` and
/// ``DanceParameters/deviationTime``). The envelope is first held over ``DanceParameters/holdTime``
/// (the highest of the last few frames, so a low note's ripple does not flicker at high frame
/// rates), then sharpened by its own rise: the
/// positive part of its step above a short smoothed copy of itself (``DanceParameters/onsetTime``),
/// weighted by ``DanceParameters/onsetWeight`` — spectral flux of one band — so a kick lifts the
/// bass lamp more than a bass line that merely holds. The lamp's level is the position of the
/// sharpened envelope, in deviations above the mean, between ``DanceParameters/darkAt`` (off) and
/// ``DanceParameters/fullAt`` (full brightness), with a deviation of at least
/// ``DanceParameters/minimumDeviation`` dB, so a steady tone or hiss is not stretched into flicker.
/// A lamp that was brighter fades from there with ``DanceParameters/fade``: each flash is one clear
/// pulse, not a flicker that follows every wiggle of the envelope on its way down.
///
/// Units and invariants:
/// - Levels are 0…1, one per band; 0 for a band below the noise gate, for a band on average more than
///   ``AnalysisParameters/crossBandFloor`` dB or at this moment more than
///   ``DanceParameters/leakageFloor`` dB below the loudest band (leakage), and at the very start.
/// - The statistics only learn from audio above the noise gate: a pause does not reset them, so the
///   first hit after a pause flashes against the music before it. After ``DanceParameters/forgetAfter``
///   seconds below the gate (a new song), they start over.
/// - Starting over, the statistics assume a deviation of ``DanceParameters/startDeviation`` dB and the
///   first frame just dark, and learn with the weight of a plain average until
///   they have seen a time constant's worth of audio: the first second of a stream shows moderate
///   pulses, not every lamp at full while a gain settles.
/// - The result does not depend on the frame rate (every rate is a time constant in seconds).
public struct DanceResponse: Sendable {
    private let parameters: AnalysisParameters
    private var bands = [BandStatistics](repeating: BandStatistics(), count: Band.allCases.count)

    /// What one band has learnt about itself.
    struct BandStatistics: Sendable {
        /// Running mean of the sharpened envelope, dB; nil before the first frame above the gate.
        var mean: Double?
        /// Running mean of the held (not sharpened) envelope, dB, for comparing bands; nil with `mean`.
        var loudness: Double?
        /// Running mean absolute deviation from `mean`, dB.
        var deviation = 0.0
        /// Audio above the gate since the statistics (re)started, seconds.
        var learntTime = 0.0
        /// Audio below the gate since the last frame above it, seconds.
        var quietTime = 0.0
        /// The envelope smoothed over ``DanceParameters/onsetTime``, dB; nil at the start.
        var smoothed: Double?
        /// The envelopes of the last frames, dB, for the hold.
        var recent = RecentPeaks()
        /// The level shown in the previous frame, 0…1.
        var shown: Float = 0
    }

    public init(parameters: AnalysisParameters) {
        self.parameters = parameters
    }

    /// Takes one envelope per band (linear amplitude, the highest since the previous frame) over
    /// `elapsed` seconds of audio, and returns the levels, each 0…1. Allocates nothing.
    public mutating func levels(envelopes: SIMD3<Float>, elapsed: Double) -> SIMD3<Float> {
        let dance = parameters.dance
        let step = BandStatistics.Step(
            gate: parameters.noiseGate, dance: dance,
            onsetWeight: 1 - exp(-elapsed / dance.onsetTime), fade: Float(exp(-elapsed / dance.fade)),
            holdFrames: min(RecentPeaks.capacity, max(1, Int((dance.holdTime / elapsed).rounded()))), elapsed: elapsed)
        var levels = SIMD3<Float>()
        // The held envelope of each band in this frame, dB; −∞ below the gate.
        var heldNow = SIMD3<Double>(repeating: -.infinity)
        for index in 0..<3 {
            // In place: the band's ring of recent peaks is not copied.
            (levels[index], heldNow[index]) = bands[index].learn(AutomaticGain.decibels(envelopes[index]), step)
        }
        // A band far below the loudest one is leakage, dark whatever its rhythm: on average more than
        // the cross-band floor below (a kick's tail in mid), or at this moment more than the leakage
        // floor below (the crossover's transient at a hit). Judged by the held envelopes, not the
        // sharpened values: a rise from silence is not loudness.
        let loudestNow = heldNow.max()
        var loudest = -Double.infinity
        for band in bands { if let loudness = band.loudness { loudest = max(loudest, loudness) } }
        guard loudest > -.infinity else { return levels }
        for index in 0..<3
        where (bands[index].loudness ?? -.infinity) < loudest - parameters.crossBandFloor
            || heldNow[index] < loudestNow - dance.leakageFloor
        {
            levels[index] = 0
            bands[index].shown = 0
        }
        return levels
    }
}

extension DanceResponse.BandStatistics {
    /// What a frame's step needs besides the envelope: the same for every band.
    struct Step {
        var gate: Double
        var dance: DanceParameters
        /// Weight of this frame in the short smoothed envelope.
        var onsetWeight: Double
        /// Factor a brighter lamp keeps of its level in this frame.
        var fade: Float
        /// Frames the hold spans.
        var holdFrames: Int
        /// Audio time of the frame, seconds.
        var elapsed: Double
    }

    /// Learns one frame's envelope (`decibels`, dBFS) and returns the lamp's level (0…1) and the
    /// held envelope (dB; −∞ below the gate).
    mutating func learn(_ decibels: Double, _ step: Step) -> (level: Float, held: Double) {
        let dance = step.dance
        let elapsed = step.elapsed
        guard decibels >= step.gate else {
            quietTime += elapsed
            // Silence is a level too: the next sound rises from the gate, a strong onset.
            smoothed = step.gate
            recent.clear()
            shown = 0
            if quietTime >= dance.forgetAfter { self = Self() }
            return (0, -.infinity)
        }
        quietTime = 0
        // Hold: the envelope of a low note ripples at the note's frequency, and a short frame may or
        // may not catch a peak; the highest of the last ``DanceParameters/holdTime`` does not ripple.
        let held = recent.hold(decibels, frames: step.holdFrames)
        // Sharpen: add the rise above the short smoothed envelope (spectral flux of the band).
        let rise = min(max(0, held - (smoothed ?? held)), dance.riseLimit)
        smoothed = (smoothed ?? held) + (held - (smoothed ?? held)) * step.onsetWeight
        let sharpened = held + dance.onsetWeight * rise
        if mean == nil {
            mean = sharpened - dance.darkAt * dance.startDeviation
            loudness = held
            deviation = dance.startDeviation
            learntTime = 0
        }
        let mean = self.mean!
        let deviation = max(self.deviation, dance.minimumDeviation)
        let z = (sharpened - mean) / deviation
        // While the statistics have seen less than a time constant, pulses stay moderate: from 60 %
        // of full at the first frame to full after ``DanceParameters/meanTime``.
        let settled = min(learntTime / dance.meanTime, 1)
        let level = Float(min(max((z - dance.darkAt) / (dance.fullAt - dance.darkAt), 0), 0.6 + 0.4 * settled))
        shown = max(level, shown * step.fade)
        // Learn: an exponential average, or a plain one while it has seen less than a time constant.
        learntTime += elapsed
        let meanWeight = max(1 - exp(-elapsed / dance.meanTime), elapsed / learntTime)
        let deviationWeight = max(1 - exp(-elapsed / dance.deviationTime), elapsed / learntTime)
        let difference = sharpened - mean
        self.mean = mean + meanWeight * difference
        loudness! += meanWeight * (held - loudness!)
        self.deviation += deviationWeight * (min(abs(difference), 3 * deviation) - self.deviation)
        return (shown, held)
    }
}

/// The envelopes of a band's last few frames, dB: a ring of fixed size, no allocation per frame.
struct RecentPeaks: Sendable {
    /// Frames held at most (25 ms at 1000 frames/s).
    static let capacity = 32
    private var values = [Double](repeating: -.infinity, count: capacity)
    private var next = 0

    /// Stores `value` and returns the highest of it and the `frames − 1` values before it.
    mutating func hold(_ value: Double, frames: Int) -> Double {
        values[next] = value
        var highest = value
        for back in 1..<frames {
            highest = max(highest, values[(next - back + Self.capacity) % Self.capacity])
        }
        next = (next + 1) % Self.capacity
        return highest
    }

    /// Forgets every value, in place.
    mutating func clear() {
        for index in values.indices { values[index] = -.infinity }
    }
}

/// The knobs of ``DanceResponse``.
public struct DanceParameters: Sendable, Hashable {
    /// Time constant of a band's running mean, seconds.
    public var meanTime = 1.0
    /// Time constant of a band's running deviation, seconds.
    public var deviationTime = 2.0
    /// The deviation used is never below this, dB: a steady tone or an even passage, whose envelope
    /// barely moves, is not stretched into flicker.
    public var minimumDeviation = 2.5
    /// A lamp is off at this many deviations above its mean (and below).
    public var darkAt = 0.0
    /// A lamp is fully on at this many deviations above its mean.
    public var fullAt = 1.5
    /// A band's envelope is the highest of the frames within this time, seconds (rounded to whole
    /// frames, at least one): longer than half the period of the lowest bass note (20 Hz), so the
    /// envelope of a held note does not ripple at high frame rates.
    public var holdTime = 0.025
    /// Time constant of the smoothed envelope that a rise is measured against, seconds.
    public var onsetTime = 0.05
    /// A band whose envelope is more than this far below the loudest band's at the same moment is
    /// dark, dB. Music's quietest band peaks about 15 dB below its loudest (a blues track's cymbals
    /// about 30 dB); a crossover's transient at a hit leaks further down than this.
    public var leakageFloor = 40.0
    /// A rise counts up to this much, dB: a sound out of silence is a strong onset, not an infinite one.
    public var riseLimit = 12.0
    /// How much of a rise above the smoothed envelope is added to the envelope (0: none).
    public var onsetWeight = 2.0
    /// Time constant with which a lamp fades after a flash, seconds.
    public var fade = 0.09
    /// The deviation assumed when the statistics start over, dB.
    public var startDeviation = 6.0
    /// After this long below the noise gate, a band's statistics start over, seconds.
    public var forgetAfter = 8.0

    public init() {}
}
