/// The format of the samples an ``AudioSource`` delivers.
public struct AudioFormat: Sendable, Hashable, CustomStringConvertible {
    /// Sample frames per second, Hz.
    public var sampleRate: Double
    /// Interleaved channels per sample frame, ≥ 1.
    public var channels: Int

    public init(sampleRate: Double, channels: Int) {
        self.sampleRate = sampleRate
        self.channels = channels
    }

    public var description: String {
        "\(Int(sampleRate)) Hz, \(channels == 1 ? "mono" : channels == 2 ? "stereo" : "\(channels) channels")"
    }
}

/// A pull source of audio: interleaved `Float` samples, full scale ±1.
///
/// Two kinds: a *stored* source (a file, the synthesised groove) returns what is asked as fast as
/// it can, and the caller paces it to real time; a *live* source (``isLive``: a sound card, a
/// pipe) blocks until the audio has happened, so the device's clock paces it.
public protocol AudioSource: Sendable {
    /// The format of every block returned by ``read(frames:)``.
    var format: AudioFormat { get }

    /// True when reads block until the audio has happened (capture devices, pipes).
    var isLive: Bool { get }

    /// Reads up to `frames` sample frames (`frames × channels` samples, interleaved).
    ///
    /// A stored source returns fewer only at its end; a live source may return fewer whenever
    /// fewer have arrived. An empty array means the source has ended.
    mutating func read(frames: Int) throws -> [Float]

    /// Reads up to `frames` sample frames (as ``read(frames:)``) straight into `analyzer`; returns
    /// how many it read, 0 at the end. The default goes through ``read(frames:)``; a source whose
    /// samples are 16-bit in memory hands them over as they are, converting and allocating nothing.
    mutating func read(frames: Int, into analyzer: inout BandAnalyzer) throws -> Int

    /// Ends what the source started outside this process (the recorders of a monitor), at once;
    /// reads after it end the audio. The default does nothing.
    func close()
}

extension AudioSource {
    public var isLive: Bool { false }

    public func close() {}

    public mutating func read(frames: Int, into analyzer: inout BandAnalyzer) throws -> Int {
        try readConverting(frames: frames, into: &analyzer)
    }

    /// ``read(frames:into:)`` through ``read(frames:)``: the samples as `Float`, then analysed. The
    /// default, and what a source with a direct path falls back to for its other formats.
    public mutating func readConverting(frames: Int, into analyzer: inout BandAnalyzer) throws -> Int {
        let samples = try read(frames: frames)
        analyzer.process(interleaved: samples, channels: format.channels)
        return samples.count / format.channels
    }
}

/// A live source that can lose audio when it is not read in time (an ALSA overrun).
public protocol OverrunCounting {
    /// Overruns recovered so far.
    var overruns: Int { get }
}

/// A live source that receives its audio in blocks and hands it out in smaller reads (the pipe
/// of a sound server's recorder, 10–40 ms at a time): it says when the audio it holds arrived.
///
/// The time a read returns is no measure of that: the later reads of a block return only after the
/// earlier ones were analysed, and on a busy machine that takes 10–20 ms of a 40 ms block.
public protocol ArrivalReporting: AnyObject {
    /// The sample frames received but not yet returned by a read, and when the last of them arrived
    /// (`CLOCK_MONOTONIC`, nanoseconds); nil when that is not known: before the first arrived, or
    /// when they were already waiting (a source ahead of its pace, or one read late).
    var readAhead: ReadAhead? { get }
}

/// Audio a live source holds beyond what its reads returned: after a read, the first
/// `returned + frames` sample frames had all arrived by `arrivedAt`.
public struct ReadAhead: Sendable, Equatable {
    /// Sample frames held, ≥ 0.
    public var frames: Int
    /// When the last of them arrived, monotonic nanoseconds.
    public var arrivedAt: Int64

    public init(frames: Int, arrivedAt: Int64) {
        self.frames = frames
        self.arrivedAt = arrivedAt
    }
}

/// A live source that shows audio before a listener hears it: the monitor of a sound server's
/// output, whose speaker plays each sample only after the output's latency.
public protocol OutputLatencyReporting: AnyObject, Sendable {
    /// The output being monitored and its latency, microseconds, as last measured; nil until
    /// known. May change while the source runs (another output chosen, a headset connected).
    var outputLatency: OutputLatency? { get }
}

/// An output's latency as the sound server reported it.
public struct OutputLatency: Sendable, Equatable {
    /// The output (sink) name, e.g. `bluez_output.00_1B_66_…` or `alsa_output.pci-…analog-stereo`.
    public var output: String
    /// Microseconds from a sample reaching the output's monitor to it leaving the speaker, ≥ 0; nil
    /// for a virtual output (a null sink, a combine or filter sink), whose reported latency is that
    /// of its own buffer and says nothing about when a speaker plays.
    public var microseconds: Int?

    public init(output: String, microseconds: Int?) {
        self.output = output
        self.microseconds = microseconds.map { max(0, $0) }
    }
}
