#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A live beat tracker: tempo, the beat's phase and its place in the bar, from the band envelopes of each frame.
///
/// Causal and frame-rate independent: fed once per analysis frame (any rate from 10 to 1000 frames/s) with the
/// frame's band envelopes and its duration, it decides from the audio up to that frame alone, and works in seconds
/// on an internal grid of ``OnsetStrength/tick`` (10 ms). The stages:
/// 1. **Onset strength** (``OnsetStrength``): each band's rise from tick to tick relative to the band's running
///    level, half-wave rectified and weighted (bass 1, mid 0.8, treble 0.4).
/// 2. **Tempo** (``TempoEstimator``): running autocorrelations of the onset strength, a comb over four harmonics
///    and a log-Gaussian prior around 120 BPM. Chosen afresh until the tracker locks; then it follows the held
///    tempo (a ramp), jumps to a new one when the short-term autocorrelation insists on it (a tempo change), and
///    stands still through a break.
/// 3. **Phase**, by prediction (after Ellis, and Stark, Davies and Plumbley's real-time BTrack): a cumulative score
///    `C[n] = (1 − α)·o[n] + α·max_d W(d)·C[n − d]` links each tick to its best predecessor about one period
///    back (`W` a log-Gaussian in `d / period`). Half a period after each beat the score is extrapolated ahead
///    with no onsets; its peak near one period after the last beat is the next beat (a peak at another phase
///    takes over only when ``phaseSwitch`` times higher), announced on the frame nearest its time: before the
///    onset is heard, so that a lamp can flash with it. After a change of tempo the score is computed again over
///    the last two seconds at the new period and the phase is sought afresh.
/// 4. **Confirmation and lock**: a beat is confirmed when an onset at least ``confirmShare`` of the typical beat's
///    and ``confirmOverMean`` times the mean onset strength lies within ±``confirmWindow`` of it. Beats are
///    announced once there has been sound for ``lockAfter`` seconds, the onsets are periodic (periodicity ≥
///    ``lockPeriodicity``: about 0 for noise, speech or a pad) and the last ``lockBeats`` beats were confirmed.
///    They go on, predicted, through up to ``holdBeats`` unconfirmed beats (a break of four bars), then the
///    tracker lets go: BPM 0, no beats; at once after ``silenceTime`` of silence.
/// 5. **Downbeat**: per place in a bar of ``beatsPerBar``, the confirmed beats' bass onset less half their mid
///    onset (a kick, not a snare's backbeat), accumulated; the place with the most is beat 1.
///
/// Cost, at 100 frames/s: about 660 multiply-adds per tick (two autocorrelations), a comb over 140 candidate tempi
/// every 100 ms and one extrapolation per beat; about a fifth of the band analysis's own cost. Nothing is
/// allocated after `init`.
public struct BeatTracker: Sendable {
    /// Beats in a bar.
    public static let beatsPerBar = 4
    /// α of the cumulative score: the weight of the past beats against the present onset.
    static let scoreMemory: Float = 0.9
    /// Tightness of the log-Gaussian that links a tick to its predecessor about one period back.
    static let tightness = 5.0
    /// A beat at another phase than the one expected is taken when the extrapolated score is this many times higher.
    static let phaseSwitch: Float = 1.25
    /// An onset confirms a beat within this many seconds of it...
    static let confirmWindow = 0.05
    /// ...when it is at least this share of the typical beat's strength...
    static let confirmShare: Float = 0.4
    /// ...and this many times the mean onset strength.
    static let confirmOverMean: Float = 2
    /// Weight of each beat in the typical beat's strength: of each beat until the tracker locks (so that the onset
    /// out of silence does not set it for good), of each confirmed beat after (so that a break does not lower it).
    static let typicalWeightUnlocked: Float = 0.5
    static let typicalWeight: Float = 0.2
    /// Beats are announced once there has been sound for this many seconds (a lock on less music risks the wrong
    /// tempo: a syncopation's dotted eighths look like the beat at first)...
    static let lockAfter = 3.0
    /// ...the periodicity is at least this...
    static let lockPeriodicity: Float = 0.25
    /// ...and this many beats in a row were confirmed.
    static let lockBeats = 3
    /// Unconfirmed beats in a row that are still announced (a break of four bars and two beats).
    static let holdBeats = 18
    /// After this long with every band below the noise gate the tracker lets go at once, seconds.
    static let silenceTime = 0.5
    /// Time constants of the mean onset strength, seconds: recent, and of the music at large.
    static let meanTime = 2.0
    static let longMeanTime = 10.0
    /// A stretch whose onsets are weaker than this share of the music's at large, with the beats unconfirmed, is a
    /// break: the tempo is held as it is.
    static let breakShare: Float = 0.4
    /// The downbeat strength of a beat is its bass onset less this share of its mid onset.
    static let backbeatShare: Float = 0.5
    /// Weight of each confirmed beat in the downbeat strength of its place in the bar (at least; a plain average
    /// over a place's first beats).
    static let downbeatWeight: Float = 0.1
    /// The downbeat strengths learn from this many seconds of sound on (not from the onset out of silence).
    static let downbeatAfter = 1.0

    private var onsets: OnsetStrength
    private var tempo = TempoEstimator()
    /// Onset strength (all bands), the bass's and the mid's, per tick, newest first.
    private var strength: NewestFirstHistory
    private var bassStrength = NewestFirstHistory(capacity: 32)
    private var midStrength = NewestFirstHistory(capacity: 32)
    /// The tempo's ``TempoEstimator/changes`` the phase was last sought afresh for.
    private var tempoChanges = 0
    /// The cumulative score per tick, newest first.
    private var score: NewestFirstHistory
    /// W(d) for d = 0…, for ``weightsPeriod``.
    private var weights: [Float]
    private var weightsPeriod = 0.0
    /// Scratch for the extrapolated score.
    private var future: [Float]
    /// Audio time at the end of the last frame and of the last tick, seconds.
    private var time = 0.0
    private var tickTime = 0.0
    /// Time of the next predicted beat, and the time at which to predict the one after it, seconds.
    private var nextBeat: Double?
    private var predictAt = 0.0
    /// Time of the last beat, seconds.
    private var lastBeat: Double?
    /// Beats counted since the start (internal beats, announced or not).
    private var beatCount = 0
    /// Beats awaiting confirmation: time and place in the bar (0…3), oldest first; at most two at a time.
    private var pending: [(time: Double, slot: Int)] = []
    /// Downbeat strength at each place in the bar, accumulated, and the beats it has learnt from.
    private var slotStrength = SIMD4<Float>()
    private var slotVisits = SIMD4<Float>()
    /// Running means of the onset strength (``meanTime``, ``longMeanTime``).
    private var meanStrength: Float = 0
    private var longMeanStrength: Float = 0
    /// The typical beat's strength (see ``typicalWeight``).
    private var typicalBeat: Float = 0
    /// The last beats' confirmations, newest in bit 0.
    private var confirmations: UInt32 = 0
    /// Unconfirmed beats in a row.
    private var unconfirmedRun = 0
    /// True while beats are announced.
    private var locked = false
    /// Seconds with every band below the noise gate, and seconds of sound since the last such silence.
    private var silentTime = 0.0
    private var soundTime = 0.0
    /// What the last frame said.
    public private(set) var state = BeatState.none

    /// Creates a tracker for band envelopes gated at `noiseGate` dBFS (the analysis's gate).
    public init(noiseGate: Double = AnalysisParameters.standard.noiseGate) {
        onsets = OnsetStrength(gate: noiseGate)
        let longest = Int((60 / (TempoEstimator.slowest * OnsetStrength.tick)).rounded(.up))
        score = NewestFirstHistory(capacity: 2 * longest + 2)
        strength = NewestFirstHistory(capacity: 2 * longest + 2)
        weights = [Float](repeating: 0, count: 2 * longest + 2)
        future = [Float](repeating: 0, count: 2 * longest + 2)
        pending.reserveCapacity(4)
    }

    /// Takes one frame: the band envelopes (bass, mid, treble; linear amplitude, the highest of the frame) of
    /// `elapsed` seconds of audio, and returns what the tracker says of that frame. Allocates nothing.
    public mutating func update(envelopes: SIMD3<Float>, elapsed: Double) -> BeatState {
        let ticks = onsets.add(envelopes: envelopes, elapsed: elapsed)
        time += elapsed
        if envelopes.max() < onsets.gate {
            silentTime += elapsed
            if silentTime >= Self.silenceTime {
                letGo()
                soundTime = 0
            }
        } else {
            silentTime = 0
            soundTime += elapsed
        }
        if ticks.count > 0 {
            let lastTickEnd = time - ticks.remainder
            for index in 0..<ticks.count {
                tickTime = lastTickEnd - Double(ticks.count - 1 - index) * OnsetStrength.tick
                addTick(ticks.total, bass: ticks.bass, mid: ticks.mid)
            }
        }
        var beat = 0
        if let next = nextBeat, next <= time + 0.5 * elapsed {
            nextBeat = nil
            lastBeat = next
            let slot = beatCount % Self.beatsPerBar
            beatCount += 1
            if pending.count >= 2 { pending.removeFirst() }
            pending.append((next, slot))
            if locked { beat = place(of: slot) }
        }
        let bpm = locked ? (tempo.bpm ?? 0) : 0
        var phase = 0.0
        if locked, let last = lastBeat, let period = tempo.period {
            phase = min(max((time - last) / (period * OnsetStrength.tick), 0), 1)
        }
        let recent = Float((confirmations & 0xFF).nonzeroBitCount) / 8
        let confidence = Double(recent * min(1, tempo.periodicity / (2 * Self.lockPeriodicity)))
        state = BeatState(beat: beat, bpm: (bpm * 10).rounded() / 10, phase: phase, confidence: confidence)
        return state
    }

    /// Stops announcing beats; the tempo and the phase are sought afresh.
    private mutating func letGo() {
        locked = false
        typicalBeat = 0
    }

    /// The normalised autocorrelation of the onsets at the tempo (see ``TempoEstimator``): about 0 for noise.
    var periodicity: Float { tempo.periodicity }

    /// The place in the bar (1…) of a beat at `slot` (0…3 counted from the start).
    private func place(of slot: Int) -> Int {
        var downbeat = 0
        for index in 1..<Self.beatsPerBar where slotStrength[index] > slotStrength[downbeat] { downbeat = index }
        return (slot - downbeat + Self.beatsPerBar) % Self.beatsPerBar + 1
    }

    private mutating func addTick(_ onset: Float, bass: Float, mid: Float) {
        strength.push(onset)
        bassStrength.push(bass)
        midStrength.push(mid)
        meanStrength += (onset - meanStrength) * Float(OnsetStrength.tick / Self.meanTime)
        longMeanStrength += (onset - longMeanStrength) * Float(OnsetStrength.tick / Self.longMeanTime)
        let mode: TempoEstimator.Mode
        if !locked {
            mode = .free
        } else if unconfirmedRun >= 2, meanStrength < Self.breakShare * longMeanStrength {
            mode = .hold
        } else {
            mode = .follow(missing: confirmations & 0b11 == 0)
        }
        tempo.add(onset, mode: mode)
        guard let period = tempo.period else { return }
        if abs(period - weightsPeriod) > 0.01 * period { setWeights(period: period) }
        if tempo.changes != tempoChanges {
            tempoChanges = tempo.changes
            rebuildScore(period: period)
            return
        }
        // The cumulative score: this tick's onset plus the best predecessor about a period back.
        let (low, high) = window(period)
        var best: Float = 0
        for d in low...high { best = max(best, weights[d] * score[d - 1]) }
        score.push((1 - Self.scoreMemory) * onset + Self.scoreMemory * best)
        confirmPending()
        if nextBeat == nil, tickTime >= predictAt { predict(period: period) }
    }

    /// After a change of tempo: the cumulative score of the onsets kept, computed again at the new period, and the
    /// next beat sought afresh, at any phase.
    private mutating func rebuildScore(period: Double) {
        let (low, high) = window(period)
        let count = min(strength.capacity, future.count)
        // Oldest first, in the scratch buffer.
        for index in 0..<count {
            var best: Float = 0
            if index >= low {
                for d in low...min(high, index) { best = max(best, weights[d] * future[index - d]) }
            }
            future[index] = (1 - Self.scoreMemory) * strength[count - 1 - index] + Self.scoreMemory * best
        }
        for index in 0..<count { score.push(future[index]) }
        lastBeat = nil
        nextBeat = nil
        predictAt = tickTime
        predict(period: period)
    }

    /// The predecessors considered, ticks back: half a period to two periods.
    private func window(_ period: Double) -> (Int, Int) {
        (max(1, Int((period / 2).rounded())), min(score.capacity, Int((2 * period).rounded())))
    }

    private mutating func setWeights(period: Double) {
        weightsPeriod = period
        for d in weights.indices {
            let x = d == 0 ? -.infinity : Self.tightness * log(Double(d) / period)
            weights[d] = Float(exp(-0.5 * x * x))
        }
    }

    /// Extrapolates the cumulative score a period and a half ahead with no onsets and puts the next beat at its
    /// peak near one period after the last beat; a peak elsewhere within half a period (another phase) takes over
    /// only when it is ``phaseSwitch`` times higher.
    private mutating func predict(period: Double) {
        let (low, high) = window(period)
        var expected: Double?  // ticks from now
        if let last = lastBeat, tickTime - last < 2 * period * OnsetStrength.tick {
            expected = (last - tickTime) / OnsetStrength.tick + period
        }
        let centre = expected ?? period / 2
        let horizon = min(future.count - 1, max(1, Int((centre + period / 2).rounded(.up))))
        let sigma = period / 6
        var near = 1
        var nearValue: Float = -1
        var anywhere = 1
        for j in 1...horizon {
            var best: Float = 0
            for d in low...high {
                let value = d >= j ? score[d - j] : future[j - d]
                best = max(best, weights[d] * value)
            }
            future[j] = Self.scoreMemory * best
            let offset = (Double(j) - centre) / sigma
            let weighted = future[j] * Float(exp(-0.5 * offset * offset))
            if weighted > nearValue { (near, nearValue) = (j, weighted) }
            if Double(j) >= centre - period / 2, future[j] > future[anywhere] { anywhere = j }
        }
        let chosen = expected == nil || future[anywhere] > Self.phaseSwitch * future[near] ? anywhere : near
        let beat = tickTime + Double(chosen) * OnsetStrength.tick
        nextBeat = beat
        predictAt = beat + period / 2 * OnsetStrength.tick
    }

    /// Judges the beats whose confirmation window has passed.
    private mutating func confirmPending() {
        while let first = pending.first, tickTime >= first.time + Self.confirmWindow {
            pending.removeFirst()
            // The strongest onset within the window: ticks whose end lies within it.
            let newest = max(0, Int(((tickTime - (first.time + Self.confirmWindow)) / OnsetStrength.tick).rounded()))
            let oldest = min(
                bassStrength.capacity - 1,
                Int(((tickTime - (first.time - Self.confirmWindow)) / OnsetStrength.tick).rounded()))
            var peak: Float = 0
            var bass: Float = 0
            var mid: Float = 0
            if newest <= oldest {
                for age in newest...oldest {
                    peak = max(peak, strength[age])
                    bass = max(bass, bassStrength[age])
                    mid = max(mid, midStrength[age])
                }
            }
            let confirmed =
                peak > Self.confirmOverMean * meanStrength && peak >= Self.confirmShare * typicalBeat && peak > 0
            confirmations = confirmations << 1 | (confirmed ? 1 : 0)
            if typicalBeat == 0 {
                typicalBeat = peak
            } else if confirmed || !locked {
                let weight = locked ? Self.typicalWeight : Self.typicalWeightUnlocked
                typicalBeat += (min(peak, 2 * typicalBeat) - typicalBeat) * weight
            }
            if confirmed {
                unconfirmedRun = 0
                if soundTime >= Self.downbeatAfter {
                    let downbeat = bass - Self.backbeatShare * mid
                    slotVisits[first.slot] += 1
                    let weight = max(Self.downbeatWeight, 1 / slotVisits[first.slot])
                    slotStrength[first.slot] += (downbeat - slotStrength[first.slot]) * weight
                }
            } else {
                unconfirmedRun += 1
            }
            if !locked, soundTime >= Self.lockAfter, tempo.periodicity >= Self.lockPeriodicity,
                (confirmations & (1 << Self.lockBeats - 1)).nonzeroBitCount == Self.lockBeats
            {
                locked = true
            } else if locked, unconfirmedRun >= Self.holdBeats {
                letGo()
            }
        }
    }
}
