/// Turns audio into light organ frames: crossovers, envelopes, then a response per frame.
///
/// Data flow, multirate so that a second of 44.1 kHz stereo costs about 0.33 ms of one core:
/// 1. The channels are summed to mono.
/// 2. A 5-tap binomial FIR ([1 4 6 4 1]/16) halves the rate (fs ≥ 32 kHz only). It is −44 dB at
///    18 kHz, so nothing folds below 4 kHz; the treble band itself is tilted by −1.4 dB at 4 kHz
///    and −6 dB at 8 kHz, which the band's automatic gain absorbs.
/// 3. One ``BiquadBank`` splits off **treble** (8th-order Linkwitz–Riley high-pass at 4 kHz) and
///    low-passes the rest at 4 kHz (LR8); a second splits that at 250 Hz into **mid** and **bass** (LR8).
/// 4. A peak envelope follower per band (1 ms attack, 60 ms release by default).
/// 5. Per frame, the highest envelope since the previous frame goes through the response — by
///    default ``DanceResponse`` (a flash on each onset of the band), or ``AutomaticGain`` (the
///    band's loudness) — and becomes 0…255.
/// 6. The same envelopes feed the ``BeatTracker``: the beat, the tempo and the place in the bar
///    (``lastBeat``), beside the levels, which it leaves unchanged.
///
/// Nothing here needs a window of past samples: the latency is the group delay of the filters
/// (under 1 ms above 1 kHz, a few ms at 60 Hz) plus the attack time.
public struct BandAnalyzer: Sendable {
    /// Sample rate of the input, Hz.
    public let sampleRate: Double
    /// 2 when the input is decimated before the crossovers, else 1.
    public let decimation: Int
    private var state: State
    /// The band envelopes (bass, mid, treble; linear amplitude, the highest of the frame) that the
    /// last ``nextFrame()`` turned into levels: what the lamps were judged from, for plots.
    public private(set) var lastEnvelopes = SIMD3<Float>()
    /// What the beat tracker said of the last frame (``BeatState/none`` before the first; a frame that
    /// repeats the previous one for want of audio announces no beat).
    public private(set) var lastBeat = BeatState.none
    private var beats: BeatTracker
    private var samplesSinceFrame = 0
    private var lastFrame = LevelFrame.off
    /// The response and what it has learnt: exactly one of the two is set. Two optionals rather
    /// than an enum, so that each frame updates the response in place (an enum's payload would
    /// be copied, its arrays with it, every frame).
    private var dance: DanceResponse?
    private var gain: AutomaticGain?

    /// Creates an analyzer for audio at `sampleRate` Hz (8 kHz or more).
    ///
    /// Below 32 kHz the input is not decimated; the treble crossover is lowered to 40 % of the
    /// Nyquist frequency where it would lie above it (an 8 kHz file has no treble to speak of).
    ///
    /// - Precondition: the crossovers are in order.
    public init(sampleRate: Double, parameters: AnalysisParameters = .standard) {
        precondition(parameters.bassMidCrossover < parameters.midTrebleCrossover, "crossovers out of order")
        self.sampleRate = sampleRate
        decimation = sampleRate >= 32_000 ? 2 : 1
        let rate = sampleRate / Double(decimation)
        let trebleCrossover = min(parameters.midTrebleCrossover, 0.4 * rate)
        let bassCrossover = min(parameters.bassMidCrossover, 0.5 * trebleCrossover)
        let follower = EnvelopeFollower(attack: parameters.attack, release: parameters.release, sampleRate: rate)
        state = State(
            trebleBank: BiquadBank(
                first: LinkwitzRileyFilter(.highPass, frequency: trebleCrossover, sampleRate: rate),
                second: LinkwitzRileyFilter(.lowPass, frequency: trebleCrossover, sampleRate: rate)),
            bassBank: BiquadBank(
                first: LinkwitzRileyFilter(.highPass, frequency: bassCrossover, sampleRate: rate),
                second: LinkwitzRileyFilter(.lowPass, frequency: bassCrossover, sampleRate: rate)),
            attack: SIMD4(repeating: follower.attackCoefficient),
            release: SIMD4(repeating: follower.releaseCoefficient))
        beats = BeatTracker(noiseGate: parameters.noiseGate)
        switch parameters.response {
        case .dance: dance = DanceResponse(parameters: parameters)
        case .level: gain = AutomaticGain(parameters: parameters)
        }
    }

    /// Feeds interleaved `Float` samples (full scale ±1) with `channels` channels per sample frame.
    public mutating func process(interleaved samples: some Collection<Float>, channels: Int) {
        precondition(channels > 0, "at least one channel")
        let scale = 1 / Float(channels)
        var sum: Float = 0
        var channel = 0
        for sample in samples {
            sum += sample
            channel += 1
            if channel == channels {
                processMono(sum * scale)
                sum = 0
                channel = 0
            }
        }
    }

    /// Feeds interleaved 16-bit samples (full scale ±32768) with `channels` channels per frame.
    public mutating func process(int16Interleaved samples: UnsafeBufferPointer<Int16>, channels: Int) {
        precondition(channels > 0, "at least one channel")
        let scale = 1 / (32768 * Float(channels))
        var index = 0
        if channels == 2, decimation == 2 {
            // The hot path: two stereo frames per pass, into one decimated sample, on a local copy
            // of the state so that it stays in registers rather than going through memory.
            if state.decimator.isHalfway, samples.count >= 2 {
                processMono(Float(Int32(samples[0]) &+ Int32(samples[1])) * scale)
                index = 2
            }
            var local = state
            let pairs = (samples.count - index) / 4
            for _ in 0..<pairs {
                let first = Float(Int32(samples[index]) &+ Int32(samples[index + 1])) * scale
                let second = Float(Int32(samples[index + 2]) &+ Int32(samples[index + 3])) * scale
                local.step(local.decimator.pushPair(first, second))
                index &+= 4
            }
            state = local
            samplesSinceFrame &+= pairs * 2
        }
        while index + channels <= samples.count {
            var sum: Int32 = 0
            for channel in 0..<channels { sum &+= Int32(samples[index + channel]) }
            processMono(Float(sum) * scale)
            index &+= channels
        }
    }

    /// Feeds one mono sample (full scale ±1).
    @inline(__always)
    public mutating func processMono(_ x: Float) {
        samplesSinceFrame &+= 1
        if decimation == 1 {
            state.step(x)
        } else if let decimated = state.decimator.push(x) {
            state.step(decimated)
        }
    }

    /// Ends the current frame: the levels of the audio fed since the previous call (the previous
    /// frame again when no audio was fed: no time has passed for the response).
    public mutating func nextFrame() -> LevelFrame {
        guard samplesSinceFrame > 0 else {
            lastBeat.beat = 0
            return lastFrame
        }
        let elapsed = Double(samplesSinceFrame) / sampleRate
        let peaks = state.peaksSinceFrame
        let envelopes = SIMD3(peaks[0], peaks[1], peaks[2])
        lastEnvelopes = envelopes
        lastBeat = beats.update(envelopes: envelopes, elapsed: elapsed)
        let levels: SIMD3<Float>
        if dance != nil {
            levels = dance!.levels(envelopes: envelopes, elapsed: elapsed)
        } else {
            levels = gain!.levels(envelopes: envelopes, elapsed: elapsed)
        }
        state.peaksSinceFrame = state.envelopes
        samplesSinceFrame = 0
        lastFrame = LevelFrame(unitBass: levels[0], unitMid: levels[1], unitTreble: levels[2])
        return lastFrame
    }

    /// Everything the per-sample work touches.
    private struct State {
        var decimator = HalvingFilter()
        /// LR8 at the mid/treble crossover: 48 dB per octave keeps an 8 kHz tone out of mid.
        var trebleBank: BiquadBank<SIMD8<Float>>
        /// LR8 at the bass/mid crossover too: with LR4 (24 dB per octave) a 100 Hz kick leaked into mid
        /// at −32 dB, as loud as a quiet band of real music, and the dance response showed it.
        var bassBank: BiquadBank<SIMD8<Float>>
        let attack: SIMD4<Float>
        let release: SIMD4<Float>
        /// Envelopes per band (bass, mid, treble, unused), linear amplitude.
        var envelopes = SIMD4<Float>()
        /// Highest envelopes since the last frame.
        var peaksSinceFrame = SIMD4<Float>()
        /// The treble bank's low-passed output of the previous step: the bass bank takes it one
        /// step late, so the two banks' recursions do not wait for each other.
        var lowPassed: Float = 0

        /// One sample at the crossover rate: both banks, then the envelope followers.
        @inline(__always)
        mutating func step(_ x: Float) {
            let (mid, bass) = bassBank.step(lowPassed)
            let treble: Float
            (treble, lowPassed) = trebleBank.step(x)
            let magnitudes = SIMD4<Float>(abs(bass), abs(mid), abs(treble), 0)
            var coefficient = release
            coefficient.replace(with: attack, where: magnitudes .> envelopes)
            envelopes = magnitudes + coefficient * (envelopes - magnitudes)
            peaksSinceFrame.replace(with: envelopes, where: envelopes .> peaksSinceFrame)
        }
    }
}

/// Halves the sample rate with the binomial FIR [1 4 6 4 1]/16: gain 1 at DC, 0 at fs/2,
/// −1.4 dB at 4 kHz, −6 dB at 8 kHz and −44 dB at 18 kHz for fs = 44.1 kHz.
struct HalvingFilter: Sendable {
    /// The last four inputs, newest first: one vector register rather than four.
    private var recent = SIMD4<Float>()
    /// True when one sample of the current pair has been taken.
    private(set) var isHalfway = false

    /// Takes one sample; every second call returns a decimated sample.
    @inline(__always)
    mutating func push(_ x: Float) -> Float? {
        let (x1, x2, x3, x4) = (recent[0], recent[1], recent[2], recent[3])
        defer { recent = SIMD4(x, x1, x2, x3) }
        isHalfway.toggle()
        guard !isHalfway else { return nil }
        return ((x + x4) + 4 * (x1 + x3) + 6 * x2) * (1 / 16)
    }

    /// Takes two samples at once and returns the decimated one.
    /// - Precondition: not ``isHalfway``.
    @inline(__always)
    mutating func pushPair(_ first: Float, _ second: Float) -> Float {
        let (x1, x2, x3) = (recent[0], recent[1], recent[2])
        let y = ((second + x3) + 4 * (first + x2) + 6 * x1) * (1 / 16)
        recent = SIMD4(second, first, x1, x2)
        return y
    }
}
