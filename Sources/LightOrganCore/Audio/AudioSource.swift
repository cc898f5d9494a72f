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

/// A live source that says when the audio it hands out was made (``ReadAhead``) and how long the
/// newest of it waited before it could be read (``captureLag``).
///
/// The time a read returns is no measure of that: a sound server's recorder hands its audio over in
/// blocks (10–40 ms, 50 ms from a network sink's monitor), the later reads of a block return only
/// after the earlier ones were analysed, and audio can wait in the server's queues before it is
/// handed over at all (on one machine a PulseAudio record stream ran 50 ms behind another of the
/// same monitor). So a source asks whoever recorded the audio where it can: the sound server's
/// timing of the record stream (``captureLag`` `.stated`), ALSA's `snd_pcm_delay`; a pipe can only
/// say when its blocks arrived (`.unknown`, the lag taken as 0).
public protocol CaptureTimeReporting: AnyObject {
    /// After a read: the sample frames beyond those returned that the statement covers, and when
    /// the last of them was made (`CLOCK_MONOTONIC`, nanoseconds); nil when that is not known.
    var readAhead: ReadAhead? { get }
    /// How long the newest audio waited between being made and reaching the sender, as last
    /// stated; nil before the first statement.
    var captureLag: CaptureLag? { get }
    /// Whether the audio comes at the pace it is made (a sound server, a sound card): never ahead of
    /// real time, however much of it one read returns, so never held back to real time. False for a
    /// pipe, which a file can fill faster than real time.
    var keepsRealTime: Bool { get }
}

/// How long a live source's newest audio waited between being made and reaching the sender.
public enum CaptureLag: Sendable, Equatable {
    /// Stated by whoever recorded it, nanoseconds (≥ 0), and who stated it (for the log:
    /// "the sound server's timing of the record stream", "snd_pcm_delay").
    case stated(nanoseconds: Int64, by: String)
    /// Not knowable for this source (a pipe): its audio counts as made when it arrived, and why.
    case unknown(String)
}

/// A statement about when a live source's audio was made: after a read, the first
/// `returned + frames` sample frames had all been made by `madeAt`. `frames` may be negative: a
/// statement of the sound server's comes every 100 ms and then covers audio already read.
public struct ReadAhead: Sendable, Equatable {
    /// Sample frames beyond those returned (negative: before the last returned).
    public var frames: Int
    /// When the last of them was made, monotonic nanoseconds: when it arrived, less the capture
    /// lag where the source knows it.
    public var madeAt: Int64

    public init(frames: Int, madeAt: Int64) {
        self.frames = frames
        self.madeAt = madeAt
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
