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
}

extension AudioSource {
    public var isLive: Bool { false }
}

/// A live source that can lose audio when it is not read in time (an ALSA overrun).
public protocol OverrunCounting {
    /// Overruns recovered so far.
    var overruns: Int { get }
}
