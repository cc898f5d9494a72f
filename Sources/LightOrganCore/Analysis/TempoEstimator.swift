#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Estimates the tempo of an onset strength signal (one value per ``OnsetStrength/tick``) by autocorrelation,
/// with a comb over the harmonics, a tempo prior and two time scales.
///
/// - The onset strength, less its running mean, feeds two running autocorrelations: a **long** one (time constant
///   ``longTime``) that chooses and holds the tempo, and a **short** one (``shortTime``) that notices a change.
/// - Each candidate tempo (``slowest`` to ``fastest`` BPM, ``candidateRatio`` apart) is scored by a comb: the mean
///   of the long autocorrelation at 1, 2, 3 and 4 periods (the peaks of a beat, a half bar, …, a bar), weighted by
///   a log-Gaussian prior around ``priorCentre`` BPM (``priorWidth`` octaves). The comb favours the period at
///   which the accents recur over a bar; the prior picks the metrical level a listener taps when the comb is
///   ambiguous (a pulse train scores alike at 60, 120 and 240 BPM).
/// - Until the caller locks, the tempo is the best candidate anywhere. Once a tempo is held (``Mode/follow``), it
///   follows the best candidate within a few percent of itself (``followWidth``), so it rides a ramp; it jumps
///   - to a **change**: a tempo ``switchDistance`` or more away and not at a metrical ratio to it (×2, ×3, ×3/2,
///     ×4, ×4/3), that the short autocorrelation (two harmonics) scores ``switchEvidence`` times the held one
///     (``switchEvidenceWhenMissing`` times while the predicted beats miss the onsets) for ``switchUpdates``
///     updates in a row; the long autocorrelation then starts over from the short one;
///   - to **another level**: a tempo that the long autocorrelation has scored ``levelEvidence`` times the held one
///     for ``levelUpdates`` updates (a lock taken on a syncopation's level).
///   Through a break (``Mode/hold``) it stands still.
/// - The period is refined between candidates by the long autocorrelation's peaks at 1…4 periods (parabolic).
///
/// Units: tempo in BPM; periods in ticks (0.01 s). The periodicity is the comb's value at the held tempo over the
/// signal's power (the normalised autocorrelation): about 0 for noise, 0.3…0.9 for music with a beat.
struct TempoEstimator: Sendable {
    /// Slowest and fastest tempo considered, BPM.
    static let slowest = 55.0
    static let fastest = 215.0
    /// Ratio of neighbouring candidates (1 %).
    static let candidateRatio = 1.01
    /// Centre of the tempo prior, BPM, and its standard deviation, octaves.
    static let priorCentre = 120.0
    static let priorWidth = 0.9
    /// Time constants of the long and short autocorrelations, seconds.
    static let longTime = 2.5
    static let shortTime = 0.75
    /// Time constant of the running mean taken off the onset strength, seconds.
    static let meanTime = 1.0
    /// The held tempo follows the best candidate within this share of itself (standard deviation of a Gaussian).
    static let followWidth = 0.02
    /// A change of tempo is at least this far from the held one (ratio).
    static let switchDistance = 1.06
    /// A change must score this many times the held tempo in the short autocorrelation...
    static let switchEvidence: Float = 2.0
    /// ...or this many times while the predicted beats miss.
    static let switchEvidenceWhenMissing: Float = 1.3
    /// The long autocorrelation's best tempo replaces a held one far from it when it scores this many times more...
    static let levelEvidence: Float = 1.5
    /// ...for this many updates in a row.
    static let levelUpdates = 20
    /// Updates in a row a change must be seen before it is taken.
    static let switchUpdates = 3
    /// Ticks between updates of the tempo.
    static let updateTicks = 10

    /// Candidate tempi, BPM.
    let candidates: [Double]
    /// Their periods, ticks.
    let periods: [Double]
    /// The prior of each.
    let prior: [Float]
    private var long: Autocorrelation
    private var short: Autocorrelation
    /// Running mean of the onset strength.
    private var mean: Float = 0
    /// The onset strength less its mean, newest first.
    private var centred: NewestFirstHistory
    /// Per candidate and harmonic `k` = 1…4 (at `4 · candidate + k − 1`), the first and last lag of the comb's tooth:
    /// `k` periods, give or take a tick for the first harmonic and `k / 2 + 1` ticks for the others.
    private let combLags: [SIMD2<Int32>]
    /// The follower's Gaussian (``followWidth``) at whole candidates from the held one, −4…4 widths.
    private let followWeights: [Float]
    /// Per candidate, the comb of the long autocorrelation times the prior (scratch, kept to avoid allocation).
    private var weighted: [Float]
    private var ticks = 0
    /// The held tempo as a fractional index into ``candidates``; nil while none.
    private(set) var heldIndex: Double?
    /// The change being considered (candidate index) and for how many updates in a row it has been seen.
    private var challenger: Int?
    private var challengerUpdates = 0
    /// Updates in a row the long autocorrelation has preferred a tempo far from the held one.
    private var levelUpdates = 0
    /// Changes of tempo taken so far (the phase must be sought afresh after each).
    private(set) var changes = 0
    /// Normalised autocorrelation at the held tempo (see the type's doc), or at the best candidate while none is held.
    private(set) var periodicity: Float = 0

    init() {
        var candidates: [Double] = []
        var bpm = Self.slowest
        while bpm <= Self.fastest {
            candidates.append(bpm)
            bpm *= Self.candidateRatio
        }
        self.candidates = candidates
        periods = candidates.map { 60 / ($0 * OnsetStrength.tick) }
        prior = candidates.map { bpm in
            let octaves = log2(bpm / Self.priorCentre) / Self.priorWidth
            return Float(exp(-0.5 * octaves * octaves))
        }
        let longest = Int(4 * periods[0].rounded(.up)) + 2
        long = Autocorrelation(maxLag: longest, timeConstant: Self.longTime, rate: 1 / OnsetStrength.tick)
        short = Autocorrelation(
            maxLag: Int(2 * periods[0].rounded(.up)) + 2, timeConstant: Self.shortTime, rate: 1 / OnsetStrength.tick)
        centred = NewestFirstHistory(capacity: longest + 1)
        combLags = periods.flatMap { period in
            (1...4).map { k in
                let centre = Int((Double(k) * period).rounded())
                let halfWidth = k == 1 ? 1 : k / 2 + 1
                return SIMD2(Int32(max(1, centre - halfWidth)), Int32(min(longest, centre + halfWidth)))
            }
        }
        weighted = [Float](repeating: 0, count: candidates.count)
        let width = log(1 + Self.followWidth) / log(Self.candidateRatio)
        let reach = Int(4 * width)
        followWeights = (-reach...reach).map { Float(exp(-0.5 * pow(Double($0) / width, 2))) }
    }

    /// The held period, ticks, refined between candidates by the autocorrelation's peaks; nil while none.
    private(set) var period: Double?
    /// The held tempo, BPM; nil while none.
    var bpm: Double? { period.map { 60 / ($0 * OnsetStrength.tick) } }

    /// How the tempo is judged.
    enum Mode {
        /// The best candidate anywhere (no beat is held yet).
        case free
        /// The best candidate near the held tempo, or a change; `missing` says that the beats predicted at the held
        /// tempo keep missing the onsets, so a change needs less evidence.
        case follow(missing: Bool)
        /// The held tempo as it is (a break: too few onsets to judge by).
        case hold
    }

    /// Takes one tick's onset strength; every ``updateTicks`` ticks the tempo is judged again as `mode` says.
    mutating func add(_ strength: Float, mode: Mode) {
        mean += (strength - mean) * Float(OnsetStrength.tick / Self.meanTime)
        centred.push(strength - mean)
        long.add(centred)
        short.add(centred)
        ticks += 1
        if ticks % Self.updateTicks == 0 { update(mode) }
    }

    /// The mean over the first `harmonics` harmonics of `candidate` of the highest `r` within its lags (``combLags``).
    @inline(__always)
    private func comb(_ r: UnsafeBufferPointer<Float>, candidate: Int, harmonics: Int) -> Float {
        var sum: Float = 0
        for k in 0..<harmonics {
            let lags = combLags[candidate &* 4 &+ k]
            var best = -Float.infinity
            for lag in Int(lags.x)...Int(lags.y) { best = max(best, r[lag]) }
            sum += best
        }
        return sum / Float(harmonics)
    }

    private mutating func update(_ mode: Mode) {
        let power = long.power
        guard power > 1e-6 else {
            periodicity = 0
            return
        }
        let missing: Bool
        switch mode {
        case .hold: return
        case .free: missing = false
        case .follow(let isMissing): missing = isMissing
        }
        let longValues = long.values
        let shortValues = short.values
        var best = 0
        longValues.withUnsafeBufferPointer { r in
            for index in candidates.indices {
                weighted[index] = max(0, comb(r, candidate: index, harmonics: 4)) * prior[index]
                if weighted[index] > weighted[best] { best = index }
            }
        }
        guard case .follow = mode, let held = heldIndex else {
            heldIndex = refined(best)
            periodicity = longValues.withUnsafeBufferPointer { comb($0, candidate: best, harmonics: 4) } / power
            refinePeriod()
            return
        }
        // Follow: the best candidate near the held tempo.
        var near = Int(held.rounded())
        var nearValue: Float = -1
        let reach = followWeights.count / 2
        for offset in -reach...reach {
            let index = Int(held.rounded()) + offset
            guard candidates.indices.contains(index) else { continue }
            let value = weighted[index] * followWeights[offset + reach]
            if value > nearValue { (near, nearValue) = (index, value) }
        }
        heldIndex = refined(near)
        periodicity = longValues.withUnsafeBufferPointer { comb($0, candidate: near, harmonics: 4) } / power
        // Another level: the long autocorrelation has long preferred a tempo far from the held one (a lock taken
        // early, on too little music, at a syncopation's level).
        if abs(best - near) > 6, weighted[best] > Self.levelEvidence * weighted[near] {
            levelUpdates += 1
            if levelUpdates >= Self.levelUpdates {
                heldIndex = refined(best)
                changes += 1
                levelUpdates = 0
                refinePeriod()
                return
            }
        } else {
            levelUpdates = 0
        }
        // Change: the short autocorrelation's best, far from the held tempo and not another metrical level of it,
        // while the beats miss.
        var shortBest = 0
        var shortBestValue: Float = -1
        var heldShort: Float = 0
        shortValues.withUnsafeBufferPointer { r in
            for index in candidates.indices {
                let value = max(0, comb(r, candidate: index, harmonics: 2)) * prior[index]
                if value > shortBestValue { (shortBest, shortBestValue) = (index, value) }
                if index == near { heldShort = value }
            }
        }
        let needed = missing ? Self.switchEvidenceWhenMissing : Self.switchEvidence
        if isChange(from: held, to: shortBest), shortBestValue > needed * heldShort {
            if let challenger, abs(challenger - shortBest) <= 2 {
                challengerUpdates += 1
            } else {
                challengerUpdates = 1
            }
            challenger = shortBest
            if challengerUpdates >= Self.switchUpdates {
                heldIndex = Double(shortBest)
                long.copy(from: short)
                changes += 1
                challenger = nil
                challengerUpdates = 0
            }
        } else {
            challenger = nil
            challengerUpdates = 0
        }
        refinePeriod()
    }

    /// Ratios between metrical levels of one beat: a candidate at one of them is the same music, not a change.
    static let metricalRatios = [2.0, 3.0, 1.5, 4.0, 4.0 / 3]

    /// True when candidate `index` is ``switchDistance`` or more from candidate `held` and not at a metrical ratio
    /// (within 3 %) to it.
    private func isChange(from held: Double, to index: Int) -> Bool {
        let ratio = pow(Self.candidateRatio, abs(Double(index) - held))
        guard ratio >= Self.switchDistance else { return false }
        return !Self.metricalRatios.contains { abs(log(ratio / $0)) < log(1.03) }
    }

    /// Sets ``period`` from the held candidate: the long autocorrelation's peaks near 1…4 periods, each placed
    /// between ticks by a parabola through its neighbours, averaged with the weight of their lag (a peak four
    /// periods out places the period four times as finely).
    private mutating func refinePeriod() {
        guard let held = heldIndex else {
            period = nil
            return
        }
        let guess = 60 / (Self.slowest * pow(Self.candidateRatio, held) * OnsetStrength.tick)
        let r = long.values
        var sum = 0.0
        var weight = 0.0
        for k in 1...4 {
            let centre = Double(k) * guess
            let halfWidth = k / 2 + 1
            var lag = Int(centre.rounded())
            for candidate in max(1, lag - halfWidth)...min(long.maxLag - 1, lag + halfWidth)
            where r[candidate] > r[lag] {
                lag = candidate
            }
            guard lag > 1, lag < long.maxLag, r[lag] > 0, r[lag] >= r[lag - 1], r[lag] >= r[lag + 1] else { continue }
            let (a, b, c) = (Double(r[lag - 1]), Double(r[lag]), Double(r[lag + 1]))
            let denominator = a - 2 * b + c
            let offset = denominator < 0 ? max(-0.5, min(0.5, 0.5 * (a - c) / denominator)) : 0
            let estimate = (Double(lag) + offset) / Double(k)
            guard abs(estimate / guess - 1) < 0.03 else { continue }
            sum += Double(k) * estimate
            weight += Double(k)
        }
        period = weight > 0 ? sum / weight : guess
    }

    /// `index` refined between its neighbours by a parabola through the weighted comb.
    private func refined(_ index: Int) -> Double {
        guard index > 0, index < candidates.count - 1 else { return Double(index) }
        let (a, b, c) = (weighted[index - 1], weighted[index], weighted[index + 1])
        let denominator = a - 2 * b + c
        guard denominator < 0 else { return Double(index) }
        return Double(index) + Double(max(-0.5, min(0.5, 0.5 * (a - c) / denominator)))
    }
}
