import CALSA
import CALSAShim
public import LightOrganCore
import LightOrganPOSIX

#if canImport(Glibc)
import Glibc
#endif

/// Plays the receiver's own sound on an ALSA PCM through libasound2 (`receiver.play`): `default`,
/// `hw:0,0` (a Pi's 3.5 mm jack), `plughw:CARD=…` (a USB DAC or a HAT), `hdmi:…`, or the `file`
/// plugin (`file:'/tmp/out.raw',raw`) that writes what is played.
///
/// Opened as interleaved S16_LE at the source's rate and channels (a `plughw`/`default` PCM
/// converts for hardware that wants another format), with periods of about 10 ms and a buffer of
/// four: writes block while the buffer is full, so the device's clock paces the player, and
/// `snd_pcm_delay` says how long until the last frame written is heard. Underruns are recovered
/// with `snd_pcm_prepare` and counted. alsa-lib's own stderr messages are suppressed: failures come
/// back as one ``AudioInputError`` line that lists the playback devices that exist.
public final class ALSAPlayback: SoundPlayer, @unchecked Sendable {
    // @unchecked Sendable: the PCM is used by the player thread alone (and `underruns` read as a
    // statistic); deinit closes it once.
    public let format: AudioFormat
    /// The PCM name as given.
    public let name: String
    /// Frames per period and in the whole buffer, as the device agreed.
    public let periodFrames: Int
    public let bufferFrames: Int
    public private(set) var underruns = 0
    private let handle: OpaquePointer
    /// A PCM with no clock of its own (`null`, the `file` plugin over it) takes writes at once; it is
    /// paced here by the monotonic clock, as a device with this buffer would be.
    private let isClockless: Bool
    /// Clockless: when the stream's first frame was "heard" if none were lost, and the frames written.
    private var clocklessStart: Int64?
    private var clocklessWritten = 0

    /// Opens `name` for playback of S16_LE audio in `format`.
    public init(name: String, format: AudioFormat) throws {
        lightorgan_alsa_quiet()
        self.name = name
        self.format = format
        var pcm: OpaquePointer?
        // Non-blocking open: a blocking one waits, without a word, for a busy device to be freed.
        let opened = snd_pcm_open(&pcm, name, SND_PCM_STREAM_PLAYBACK, SND_PCM_NONBLOCK)
        guard opened >= 0, let pcm else { throw Self.openError(name: name, code: opened) }
        handle = pcm
        snd_pcm_nonblock(pcm, 0)
        var params: OpaquePointer?
        snd_pcm_hw_params_malloc(&params)
        defer { snd_pcm_hw_params_free(params) }
        func check(_ code: CInt, _ what: String) throws {
            guard code >= 0 else {
                snd_pcm_close(pcm)
                throw AudioInputError(
                    "ALSA playback device \(name): cannot set \(what) (\(String(cString: snd_strerror(code)))); try plughw:… or default"
                )
            }
        }
        try check(snd_pcm_hw_params_any(pcm, params), "any parameters")
        try check(snd_pcm_hw_params_set_access(pcm, params, SND_PCM_ACCESS_RW_INTERLEAVED), "interleaved access")
        try check(snd_pcm_hw_params_set_format(pcm, params, SND_PCM_FORMAT_S16_LE), "format S16_LE")
        try check(snd_pcm_hw_params_set_channels(pcm, params, UInt32(format.channels)), "\(format.channels) channels")
        try check(
            snd_pcm_hw_params_set_rate(pcm, params, UInt32(format.sampleRate), 0), "rate \(Int(format.sampleRate)) Hz")
        var direction: CInt = 0
        var period = snd_pcm_uframes_t(format.sampleRate / 100)
        try check(snd_pcm_hw_params_set_period_size_near(pcm, params, &period, &direction), "period \(period)")
        var buffer = period * 4
        try check(snd_pcm_hw_params_set_buffer_size_near(pcm, params, &buffer), "buffer size \(buffer)")
        try check(snd_pcm_hw_params(pcm, params), "hardware parameters")
        periodFrames = Int(period)
        bufferFrames = Int(buffer)
        let type = snd_pcm_type(pcm)
        isClockless = type == SND_PCM_TYPE_NULL || type == SND_PCM_TYPE_FILE
        try check(snd_pcm_prepare(pcm), "prepare")
    }

    deinit {
        snd_pcm_close(handle)
    }

    public func play(_ samples: [Int16]) throws {
        let channels = format.channels
        if isClockless { paceClockless(frames: samples.count / channels) }
        var offset = 0
        let frames = samples.count / channels
        while offset < frames {
            let written = samples.withUnsafeBufferPointer { pointer in
                snd_pcm_writei(handle, pointer.baseAddress! + offset * channels, snd_pcm_uframes_t(frames - offset))
            }
            if written >= 0 {
                offset += Int(written)
                continue
            }
            if try ALSADevices.recover(
                handle, from: CInt(written), device: "ALSA playback device \(name)", doing: "playing")
            {
                underruns += 1
            }
        }
    }

    public func queuedFrames() -> Int? {
        if isClockless { return max(0, clocklessQueued(at: MonotonicClock.nanoseconds())) }
        var delay = snd_pcm_sframes_t()
        guard snd_pcm_delay(handle, &delay) >= 0 else { return nil }
        return max(0, Int(delay))
    }

    public func finishStream() {
        if isClockless {
            let left = clocklessQueued(at: MonotonicClock.nanoseconds())
            if left > 0 { DedicatedThread.sleep(seconds: Double(left) / format.sampleRate) }
            clocklessStart = nil
            clocklessWritten = 0
        }
        // What was written plays out (snd_pcm_drain blocks until it has), and the next write starts afresh.
        snd_pcm_drain(handle)
        snd_pcm_prepare(handle)
    }

    /// Clockless: frames written and not yet "heard" at `now` (negative: it ran dry that long ago).
    private func clocklessQueued(at now: Int64) -> Int {
        guard let start = clocklessStart else { return 0 }
        return clocklessWritten - Int(Double(now - start) * format.sampleRate / 1e9)
    }

    /// Clockless: waits until `frames` more fit in the buffer, as a blocking write to a device
    /// would; a device that ran dry counts an underrun and starts again from now.
    private func paceClockless(frames: Int) {
        var now = MonotonicClock.nanoseconds()
        if clocklessStart == nil {
            clocklessStart = now
        } else if clocklessQueued(at: now) < 0 {
            underruns += 1
            clocklessStart = now - Int64(Double(clocklessWritten) * 1e9 / format.sampleRate)
        }
        let excess = clocklessQueued(at: now) + frames - bufferFrames
        if excess > 0 {
            DedicatedThread.sleep(seconds: Double(excess) / format.sampleRate)
            now = MonotonicClock.nanoseconds()
        }
        clocklessWritten += frames
    }

    /// Names of the PCMs that can play, from alsa-lib's name hints.
    public static func playbackDevices() -> [String] {
        ALSADevices.named(excluding: "Input").map(\.name)
    }

    private static func openError(name: String, code: CInt) -> AudioInputError {
        let reason = ALSADevices.openFailure(
            code, busy: "another program plays on it; stop it, or play on default to share")
        let devices = playbackDevices().prefix(12).joined(separator: ", ")
        let hint =
            devices.isEmpty
            ? "no playback device exists on this machine (set receiver.play: none to light without playing)"
            : "playback devices here: \(devices) (or receiver.play: none)"
        return AudioInputError("ALSA playback device \(name) \(reason); \(hint)")
    }
}
