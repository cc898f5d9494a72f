#if canImport(Glibc)
import Glibc
#endif
public import LightOrganCore

/// Raw interleaved PCM read from a file descriptor: standard input (`input: -`) or the pipe of a
/// capture program (``MonitorInput``). Reads block until the samples are there; end of input ends
/// the source.
///
/// So `ffmpeg -i song.mp3 -f s16le -ac 2 -ar 44100 - | lightorgan send --input -` works.
public final class RawPCMInput: AudioSource, @unchecked Sendable {
    // @unchecked Sendable: the descriptor and buffer are used by one capture thread at a time;
    // the sender hands the source to that thread and never touches it again.
    public let format: AudioFormat
    public let sampleFormat: SampleFormat
    public var isLive: Bool { true }
    private let descriptor: CInt
    private var buffer: [UInt8] = []
    private var pending = 0

    /// Reads from `descriptor` (0: standard input), which this object does not close.
    public init(descriptor: CInt = 0, sampleRate: Int, channels: Int, sampleFormat: SampleFormat) {
        self.descriptor = descriptor
        self.format = AudioFormat(sampleRate: Double(sampleRate), channels: channels)
        self.sampleFormat = sampleFormat
    }

    public func read(frames: Int) throws -> [Float] {
        let whole = try fill(frames: frames)
        let samples = buffer.withUnsafeBytes { sampleFormat.decode($0, count: whole / sampleFormat.width) }
        keepRest(after: whole)
        return samples
    }

    /// 16-bit little-endian samples go to the analyzer from the read buffer, unconverted.
    public func read(frames: Int, into analyzer: inout BandAnalyzer) throws -> Int {
        #if _endian(little)
        if sampleFormat == .s16le {
            let whole = try fill(frames: frames)
            let channels = format.channels
            buffer.withUnsafeBytes { bytes in
                analyzer.process(int16Interleaved: bytes.prefix(whole).assumingMemoryBound(to: Int16.self), channels: channels)
            }
            keepRest(after: whole)
            return whole / (2 * channels)
        }
        #endif
        var source = self  // the same object: `readConverting` is a protocol's mutating method
        return try source.readConverting(frames: frames, into: &analyzer)
    }

    /// Reads until the buffer holds at least one whole sample frame (a short read is fine: pipes
    /// deliver what they have); returns the bytes of whole sample frames, 0 at the end.
    private func fill(frames: Int) throws -> Int {
        let frameBytes = sampleFormat.width * format.channels
        let wanted = frames * frameBytes
        if buffer.count < wanted { buffer = [UInt8](repeating: 0, count: wanted) }
        while pending < frameBytes {
            let count = buffer.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress! + pending, wanted - pending) }
            if count == 0 { return 0 }
            if count < 0 {
                if errno == EINTR { continue }
                throw AudioInputError("cannot read audio from \(descriptor == 0 ? "stdin" : "the capture program"): \(String(cString: strerror(errno)))")
            }
            pending += count
        }
        return pending / frameBytes * frameBytes
    }

    /// Moves the bytes of a partial sample frame after `whole` to the front of the buffer.
    private func keepRest(after whole: Int) {
        buffer.withUnsafeMutableBytes { bytes in
            if pending > whole { bytes.copyMemory(from: UnsafeRawBufferPointer(rebasing: bytes[whole..<pending])) }
        }
        pending -= whole
    }
}

/// An audio input that cannot be opened or read, said in one line with what to do.
public struct AudioInputError: Error, CustomStringConvertible {
    public let description: String

    public init(_ description: String) {
        self.description = description
    }
}
