/// Turns audio into light organ frames: crossovers, envelopes, automatic gain.
///
/// Data flow per sample: the channels are averaged to mono, split by 4th-order Linkwitz–Riley
/// crossovers into bass (< 250 Hz), mid and treble (> 4 kHz), and each band feeds a peak
/// envelope follower (1 ms attack, 60 ms release by default). Per frame, the highest envelope
/// seen since the previous frame goes through ``AutomaticGain`` and becomes 0…255.
///
/// Nothing here needs a window of past samples: the latency of the analysis is the group delay of
/// the crossovers (under 2 ms above 100 Hz) plus the attack time.
public struct BandAnalyzer: Sendable {
    /// Sample rate of the input, Hz.
    public let sampleRate: Double
    private var bassLowPass: LinkwitzRileyFilter
    private var midHighPass: LinkwitzRileyFilter
    private var midLowPass: LinkwitzRileyFilter
    private var trebleHighPass: LinkwitzRileyFilter
    private var followers: [EnvelopeFollower]
    private var peaksSinceFrame: [Float] = [0, 0, 0]
    private var samplesSinceFrame = 0
    private var gain: AutomaticGain

    /// Creates an analyzer for audio at `sampleRate` Hz.
    ///
    /// - Precondition: both crossovers lie below half the sample rate, the lower one first.
    public init(sampleRate: Double, parameters: AnalysisParameters = .standard) {
        precondition(parameters.bassMidCrossover < parameters.midTrebleCrossover, "crossovers out of order")
        self.sampleRate = sampleRate
        bassLowPass = LinkwitzRileyFilter(.lowPass, frequency: parameters.bassMidCrossover, sampleRate: sampleRate)
        midHighPass = LinkwitzRileyFilter(.highPass, frequency: parameters.bassMidCrossover, sampleRate: sampleRate)
        midLowPass = LinkwitzRileyFilter(.lowPass, frequency: parameters.midTrebleCrossover, sampleRate: sampleRate)
        trebleHighPass = LinkwitzRileyFilter(
            .highPass, frequency: parameters.midTrebleCrossover, sampleRate: sampleRate)
        let follower = EnvelopeFollower(
            attack: parameters.attack, release: parameters.release, sampleRate: sampleRate)
        followers = [follower, follower, follower]
        gain = AutomaticGain(parameters: parameters)
    }

    /// Feeds interleaved samples (full scale ±1) with `channels` channels per sample frame.
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

    /// Feeds one mono sample (full scale ±1).
    @inline(__always)
    public mutating func processMono(_ x: Float) {
        let bass = followers[0].process(bassLowPass.process(x))
        let mid = followers[1].process(midLowPass.process(midHighPass.process(x)))
        let treble = followers[2].process(trebleHighPass.process(x))
        peaksSinceFrame[0] = max(peaksSinceFrame[0], bass)
        peaksSinceFrame[1] = max(peaksSinceFrame[1], mid)
        peaksSinceFrame[2] = max(peaksSinceFrame[2], treble)
        samplesSinceFrame += 1
    }

    /// Ends the current frame: the levels of the audio fed since the previous call.
    public mutating func nextFrame() -> LevelFrame {
        let elapsed = Double(samplesSinceFrame) / sampleRate
        let levels = gain.levels(envelopes: peaksSinceFrame, elapsed: elapsed)
        for band in peaksSinceFrame.indices { peaksSinceFrame[band] = followers[band].envelope }
        samplesSinceFrame = 0
        return LevelFrame(unitBass: levels[0], unitMid: levels[1], unitTreble: levels[2])
    }
}
