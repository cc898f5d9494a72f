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
/// Sources here are not paced: they return what is asked as fast as they can. Pacing to real time
/// is the caller's job (the sender reads exactly the samples that are due at each frame tick).
public protocol AudioSource: Sendable {
    /// The format of every block returned by ``read(frames:)``.
    var format: AudioFormat { get }

    /// Reads up to `frames` sample frames (`frames × channels` samples, interleaved).
    ///
    /// Returns fewer only at the end of the source, and an empty array once it has ended.
    mutating func read(frames: Int) throws -> [Float]
}
