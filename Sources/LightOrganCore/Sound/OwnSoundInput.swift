/// Where the receiver's own sound comes from (``SoundChoice``): shairport-sync's standard output, a
/// FIFO, or an ALSA capture device, as interleaved signed 16-bit sample frames.
public protocol OwnSoundInput: AnyObject, Sendable {
    /// The format of every block read.
    var format: AudioFormat { get }
    /// What the page and the log call this sound: `AirPlay`, `pipe /run/lightorgan/spotify`,
    /// `line-in hw:1,0`.
    var label: String { get }
    /// Reads what has arrived, up to `frames` sample frames, waiting at most
    /// `timeoutMilliseconds` for the first: nil when nothing came in that time (the stream is
    /// paused or stopped), an empty array when the input has ended for good.
    ///
    /// - Throws: ``AudioInputError`` when the input fails (the program behind it died, the
    ///   device went away); the caller may open it again.
    func read(frames: Int, timeoutMilliseconds: Int) throws -> [Int16]?
    /// Ends the input from any thread: a read waiting returns the end, and later reads too.
    func close()
    /// For an input that hands its sound over ahead of the time it is to be heard (a Snapcast client): when the
    /// first sample of the last block read is due to leave the speakers, monotonic nanoseconds. Nil for one that
    /// hands it over as it is made (the default). Read by the thread that reads, right after ``read(frames:timeoutMilliseconds:)``.
    var lastReadDueNanoseconds: Int64? { get }
    /// What the status adds after `playing` or `idle` (`server 192.168.1.5, its clock +3.2 ms`); nil: nothing.
    var details: String? { get }
}

extension OwnSoundInput {
    public var lastReadDueNanoseconds: Int64? { nil }
    public var details: String? { nil }
}

/// Where the receiver plays its own sound (`receiver.play`): an ALSA playback device.
public protocol SoundPlayer: AnyObject, Sendable {
    /// Sample frames per second and channels it was opened with.
    var format: AudioFormat { get }
    /// Plays the interleaved frames, blocking while the device's buffer is full. An underrun (the
    /// device ran dry) is recovered here and counted in ``underruns``.
    func play(_ samples: [Int16]) throws
    /// Sample frames written but not yet heard (`snd_pcm_delay`), nil when the device cannot say.
    func queuedFrames() -> Int?
    /// Lets what was written play out and stops: the next ``play(_:)`` starts a new stream.
    func finishStream()
    /// Underruns recovered while a stream played.
    var underruns: Int { get }
}

/// The sound `receiver.sound` names when it could not be opened (its program missing, its device absent): the
/// first read throws why, so the receiver logs it once and the status says `Snapcast: failed: …` rather than
/// nothing.
public final class UnopenedSoundInput: OwnSoundInput, Sendable {
    public let format = AudioFormat(sampleRate: 48_000, channels: 2)
    public let label: String
    /// Why it could not be opened, one line that says what to do.
    public let reason: String

    public init(label: String, reason: String) {
        (self.label, self.reason) = (label, reason)
    }

    public func read(frames: Int, timeoutMilliseconds: Int) throws -> [Int16]? {
        throw UnopenedSound(description: reason)
    }

    public func close() {}

    private struct UnopenedSound: Error, CustomStringConvertible {
        let description: String
    }
}
