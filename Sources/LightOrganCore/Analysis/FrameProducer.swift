/// The sender's pipeline without the network: audio source → ``BandAnalyzer`` → one frame per tick.
///
/// The caller says how much audio time has passed (real time for `send`, `k / fps` for an
/// offline analysis); the producer reads exactly the samples that are due, feeds them to the
/// analyzer and returns the frame. If the caller fell behind by more than ``maximumCatchUp``
/// (a stalled network, a suspended laptop), the older audio is read and skipped unanalysed, so the
/// lights show the present, not a replay of the past.
public struct FrameProducer: Sendable {
    /// Longest stretch of audio analysed in one frame, seconds; older due audio is skipped.
    public static let maximumCatchUp = 0.5

    /// The audio being analysed.
    public private(set) var source: any AudioSource
    private var analyzer: BandAnalyzer
    /// Sample frames read from the source so far.
    public private(set) var consumedFrames = 0
    /// True once the source has ended.
    public private(set) var isFinished = false

    public init(source: any AudioSource, parameters: AnalysisParameters = .standard) {
        self.source = source
        self.analyzer = BandAnalyzer(sampleRate: source.format.sampleRate, parameters: parameters)
    }

    /// The band envelopes behind the last frame (see ``BandAnalyzer/lastEnvelopes``).
    public var lastEnvelopes: SIMD3<Float> { analyzer.lastEnvelopes }
    /// The beat tracker's word on the last frame (see ``BandAnalyzer/lastBeat``).
    public var lastBeat: BeatState { analyzer.lastBeat }
    /// Audio time of the last sample analysed, seconds from the start of the source.
    public var audioTime: Double { Double(consumedFrames) / source.format.sampleRate }

    /// The frame for the audio up to `audioTime` seconds, or nil once the source has ended (a
    /// last, partial block still makes a frame; a block with no sample left does not).
    public mutating func frame(upTo audioTime: Double) throws -> LevelFrame? {
        guard !isFinished else { return nil }
        let format = source.format
        var due = Int((audioTime * format.sampleRate).rounded(.down)) - consumedFrames
        let limit = Int(Self.maximumCatchUp * format.sampleRate)
        while due > limit {
            let skipped = try source.read(frames: min(due - limit, limit)).count / format.channels
            consumedFrames += skipped
            due -= skipped
            if skipped == 0 { break }
        }
        if due > 0 {
            let read = try source.read(frames: due, into: &analyzer)
            if read < due { isFinished = true }
            // A frame holds at least one new sample: at the end of the source, no empty frame.
            guard read > 0 else { return nil }
            consumedFrames += read
        }
        return analyzer.nextFrame()
    }
}
