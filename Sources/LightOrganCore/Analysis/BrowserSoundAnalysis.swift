/// A browser's sound turned into frames, with the analysis `lightorgan send` uses.
///
/// Samples arrive in blocks of any size (the page batches about 20 ms); every
/// `sampleRate / framesPerSecond` samples close one frame, as the sender's clock would. The
/// newest frame a block completes is what the lamps get (newest wins, like frames of a sender).
public struct BrowserSoundAnalysis: Sendable {
    private var analyzer: BandAnalyzer
    private let samplesPerFrame: Int
    private var samplesInFrame = 0
    /// Frames completed so far.
    public private(set) var frames = 0

    /// - Parameters:
    ///   - sampleRate: the browser's rate, Hz.
    ///   - parameters: the receiver's `analysis.*` settings.
    ///   - framesPerSecond: frames made per second of audio (the sender's default, 100).
    public init(sampleRate: Int, parameters: AnalysisParameters, framesPerSecond: Int = 100) {
        analyzer = BandAnalyzer(sampleRate: Double(sampleRate), parameters: parameters)
        samplesPerFrame = max(1, sampleRate / framesPerSecond)
    }

    /// What the beat tracker said of the newest frame ``analyze(_:)`` completed; a beat announced on an older
    /// frame of the same block is carried to it (only the newest is shown).
    public private(set) var newestBeat = BeatState.none

    /// Analyzes `samples` (mono); the newest frame they complete and how many they complete.
    public mutating func analyze(_ samples: [Float]) -> (newest: LevelFrame?, completed: Int) {
        var newest: LevelFrame?
        var completed = 0
        var beatPlace = 0
        var start = 0
        while start < samples.count {
            let take = min(samplesPerFrame - samplesInFrame, samples.count - start)
            analyzer.process(interleaved: samples[start..<start + take], channels: 1)
            samplesInFrame += take
            start += take
            if samplesInFrame == samplesPerFrame {
                samplesInFrame = 0
                newest = analyzer.nextFrame()
                newestBeat = analyzer.lastBeat
                if newestBeat.beat > 0 { beatPlace = newestBeat.beat }
                completed += 1
            }
        }
        if newestBeat.bpm > 0, newestBeat.beat == 0 { newestBeat.beat = beatPlace }
        frames += completed
        return (newest, completed)
    }
}
