public import LightOrganCore

#if canImport(Glibc)
import Glibc
#endif

/// Raw interleaved PCM read from a file descriptor: standard input (`input: -`) or the pipe of a
/// capture program (``MonitorInput``). Reads block until the samples are there; end of input ends
/// the source.
///
/// One `read(2)` takes all the pipe holds (up to ``readAheadSeconds``), so a recorder's 40 ms block
/// arrives in one system call, stamped with its time (``CaptureTimeReporting``) when the read had to
/// wait for it; the reads of the frame-sized pieces after it come from memory. A pipe cannot say how
/// long its audio waited before it was written (``captureLag`` is unknown): it counts as made when it
/// arrived.
///
/// So `ffmpeg -i song.mp3 -f s16le -ac 2 -ar 44100 - | lightorgan send --input -` works.
public final class RawPCMInput: AudioSource, CaptureTimeReporting, @unchecked Sendable {
    // @unchecked Sendable: the descriptor and buffer are used by one capture thread at a time;
    // the sender hands the source to that thread and never touches it again.
    public let format: AudioFormat
    public let sampleFormat: SampleFormat
    public var isLive: Bool { true }
    /// The most audio one `read(2)` takes, seconds.
    public static let readAheadSeconds = 0.1
    private let descriptor: CInt
    private let frameBytes: Int
    /// Received bytes not yet returned: `buffer[start..<end]`.
    private var buffer: [UInt8] = []
    private var start = 0
    private var end = 0
    /// When the last `read(2)` that received bytes returned, monotonic nanoseconds.
    private var receivedAt: Int64?
    /// Sample frames returned by reads so far.
    public private(set) var framesReturned = 0

    /// Reads from `descriptor` (0: standard input), which this object does not close.
    public init(descriptor: CInt = 0, sampleRate: Int, channels: Int, sampleFormat: SampleFormat) {
        self.descriptor = descriptor
        self.format = AudioFormat(sampleRate: Double(sampleRate), channels: channels)
        self.sampleFormat = sampleFormat
        frameBytes = sampleFormat.width * channels
    }

    public var readAhead: ReadAhead? {
        receivedAt.map { ReadAhead(frames: (end - start) / frameBytes, madeAt: $0) }
    }

    public var captureLag: CaptureLag? { .unknown("a pipe says only when its audio arrived") }

    public var keepsRealTime: Bool { false }

    public func read(frames: Int) throws -> [Float] {
        let whole = try fill(frames: frames)
        let samples = buffer.withUnsafeBytes { bytes in
            let piece = UnsafeRawBufferPointer(rebasing: bytes[start..<start + whole])
            return sampleFormat.decode(piece, count: whole / sampleFormat.width)
        }
        start += whole
        framesReturned += whole / frameBytes
        return samples
    }

    /// 16-bit little-endian samples go to the analyzer from the read buffer, unconverted.
    public func read(frames: Int, into analyzer: inout BandAnalyzer) throws -> Int {
        #if _endian(little)
        if sampleFormat == .s16le {
            let whole = try fill(frames: frames)
            let channels = format.channels
            buffer.withUnsafeBytes { bytes in
                let piece = UnsafeRawBufferPointer(rebasing: bytes[start..<start + whole])
                analyzer.process(int16Interleaved: piece.assumingMemoryBound(to: Int16.self), channels: channels)
            }
            start += whole
            framesReturned += whole / frameBytes
            return whole / frameBytes
        }
        #endif
        var source = self  // the same object: `readConverting` is a protocol's mutating method
        return try source.readConverting(frames: frames, into: &analyzer)
    }

    /// Makes the buffer hold at least one whole sample frame, reading when it holds none (a short
    /// read is fine: pipes deliver what they have); returns the bytes of at most `frames` whole
    /// sample frames at `start`, 0 at the end.
    private func fill(frames: Int) throws -> Int {
        if end - start < frameBytes {
            let capacity = max(frames, Int(format.sampleRate * Self.readAheadSeconds)) * frameBytes
            if buffer.count < capacity { buffer = [UInt8](repeating: 0, count: capacity) }
            buffer.withUnsafeMutableBytes { bytes in  // a partial sample frame goes to the front
                if start > 0, end > start {
                    bytes.copyMemory(from: UnsafeRawBufferPointer(rebasing: bytes[start..<end]))
                }
            }
            end -= start
            start = 0
            while end < frameBytes {
                // Only a read that waits for the audio learns when it arrived; audio already there
                // came from a source ahead of its pace (a file piped in) or was read late.
                var readable = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
                let waits = poll(&readable, 1, 0) == 0
                let count = buffer.withUnsafeMutableBytes {
                    Glibc.read(descriptor, $0.baseAddress! + end, capacity - end)
                }
                if count == 0 { return 0 }
                if count < 0 {
                    if errno == EINTR { continue }
                    throw AudioInputError(
                        "cannot read audio from \(descriptor == 0 ? "stdin" : "the capture program"): \(String(cString: strerror(errno)))"
                    )
                }
                end += count
                receivedAt = waits ? Self.monotonicNanoseconds() : nil
            }
        }
        return min(end - start, frames * frameBytes) / frameBytes * frameBytes
    }

    private static func monotonicNanoseconds() -> Int64 {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return Int64(now.tv_sec) * 1_000_000_000 + Int64(now.tv_nsec)
    }
}

/// An audio input that cannot be opened or read, said in one line with what to do.
public struct AudioInputError: Error, CustomStringConvertible {
    public let description: String

    public init(_ description: String) {
        self.description = description
    }
}
