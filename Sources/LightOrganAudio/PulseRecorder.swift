import CPulseShim
import LightOrganCore
import LightOrganPOSIX
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// One record stream of the user's PulseAudio or PipeWire server (pipewire-pulse), through
/// libpulse's own API (CPulseShim; libpulse.so.0 is loaded when the first one starts): its audio
/// comes out of a pipe (``descriptor``, raw interleaved s16le), and the server's timing of the
/// stream, asked about ten times a second, says when that audio was made (``timing``).
///
/// The server's statement is its write index (the stream's sample frames it had taken from the
/// source) at its own clock's time, less what the source still held: what the server says, not
/// when the audio happened to reach this process. So audio that waits in the server's queue before
/// it is handed over, or a block that reaches this stream later than another stream of the same
/// monitor, still counts from when it was made.
final class PulseRecorder: Sendable {
    /// The read end of the pipe the audio comes out of; it ends when the stream does. Closed when
    /// this object is released.
    let descriptor: CInt
    /// The recorder, nil once stopped (guarded: the capture thread asks for the timing while the
    /// sound server's watch may stop it).
    private let handle: Mutex<OpaquePointer?>

    /// Starts recording `source` at `sampleRate` Hz, `channels` channels, asking for blocks of
    /// `blockMilliseconds`; the stream's thread runs at the time-keeping priority where allowed.
    ///
    /// - Throws: ``AudioInputError`` with the shim's one line (libpulse missing, no server, no such source).
    init(source: String, sampleRate: Int, channels: Int, blockMilliseconds: Int) throws {
        var error = [CChar](repeating: 0, count: 300)
        var descriptor: CInt = -1
        let blockBytes = UInt32(sampleRate * blockMilliseconds / 1000 * channels * 2)
        guard
            let recorder = lightorgan_pulse_record(
                source, "lightorgan", UInt32(sampleRate), UInt32(channels), blockBytes,
                DedicatedThread.timeKeepingNice, &descriptor, &error, error.count)
        else {
            throw AudioInputError(String(cCharacters: error))
        }
        self.descriptor = descriptor
        handle = Mutex(recorder)
    }

    deinit {
        stop()
        close(descriptor)
    }

    /// The server's latest statement: the stream's sample frame `frame` (counted as the pipe
    /// delivers them) was made at `madeAt` (monotonic nanoseconds), and the newest audio taken from
    /// the server had waited `lag` nanoseconds; nil before the server said (or once stopped).
    var timing: (frame: Int, madeAt: Int64, lag: Int64)? {
        handle.withLock { recorder -> (frame: Int, madeAt: Int64, lag: Int64)? in
            guard let recorder else { return nil }
            var frame: Int64 = 0
            var madeAt: Int64 = 0
            var lag: Int64 = 0
            guard lightorgan_pulse_timing(recorder, &frame, &madeAt, &lag) == 1 else { return nil }
            return (Int(frame), madeAt, max(0, lag))
        }
    }

    /// Why the stream ended (the server went away, the source was removed); nil while it runs.
    var failure: String? {
        handle.withLock { recorder -> String? in
            guard let recorder else { return nil }
            let text = String(cString: lightorgan_pulse_failure(recorder))
            return text.isEmpty ? nil : text
        }
    }

    /// Ends the stream: the pipe ends, so a read waiting on it returns. Safe to call more than once.
    func stop() {
        let recorder = handle.withLock { recorder -> OpaquePointer? in
            defer { recorder = nil }
            return recorder
        }
        if let recorder { lightorgan_pulse_stop(recorder) }
    }
}
