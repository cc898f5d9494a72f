import CALSA
import CALSAShim
public import LightOrganCore

#if canImport(Glibc)
import Glibc
#endif

/// Captures audio from an ALSA PCM through libasound2: `default`, `hw:1,0`, `plughw:…`, `pulse`,
/// `pipewire`, or any PCM defined in an ALSA configuration.
///
/// Opened with explicit hardware parameters: interleaved S16_LE, else S32_LE, else FLOAT_LE, as the
/// device offers; the rate nearest 48 kHz (44.1 kHz devices keep theirs); 2 channels, else 1; a period
/// of about 256 frames (≈5 ms at 48 kHz) and a buffer of 8 periods. Overruns are recovered with
/// `snd_pcm_recover` and counted. alsa-lib's own stderr messages are suppressed: failures come back
/// as one ``AudioInputError`` line that lists the capture devices that do exist. After each read
/// `snd_pcm_delay` says how much audio the device has captured beyond it (``CaptureTimeReporting``):
/// the newest of it was captured as the read returned.
public final class ALSACapture: AudioSource, OverrunCounting, CaptureTimeReporting, @unchecked Sendable {
    // @unchecked Sendable: the PCM handle is used by one capture thread at a time; the sender
    // hands the source to that thread and never touches it again. deinit closes it once.
    public let format: AudioFormat
    public var isLive: Bool { true }
    /// The PCM name as given.
    public let name: String
    /// The sample format the device delivers.
    public let sampleFormat: SampleFormat
    /// Frames per period the device agreed to.
    public let periodFrames: Int
    /// Overruns recovered so far (audio lost because it was not read in time).
    public private(set) var overruns = 0
    private var handle: OpaquePointer?
    private var buffer: [UInt8] = []
    /// After the last read: the frames captured beyond it (`snd_pcm_delay`) and when it was asked.
    public private(set) var readAhead: ReadAhead?

    /// False: an ALSA PCM may be a plugin that reads a file as fast as it is asked (`type file`); a
    /// sound card's reads return a period at most, never 50 ms ahead, so holding back costs it nothing.
    public var keepsRealTime: Bool { false }

    public var captureLag: CaptureLag? {
        readAhead.map {
            .stated(
                nanoseconds: Int64(Double(max(0, $0.frames)) * 1e9 / format.sampleRate), by: "snd_pcm_delay")
        }
    }

    /// Opens `name` for capture, preferring `preferredRate` Hz.
    ///
    /// - Parameter configuration: an extra ALSA configuration file (as `ALSA_CONFIG_PATH` would add),
    ///   for PCMs defined outside the system's configuration; nil for the system's.
    public init(name: String, preferredRate: Int = 48_000, periodFrames: Int = 256) throws {
        lightorgan_alsa_quiet()
        self.name = name
        var pcm: OpaquePointer?
        // Non-blocking open: a blocking one waits, without a word, for a busy hw device to be freed.
        let opened = snd_pcm_open(&pcm, name, SND_PCM_STREAM_CAPTURE, SND_PCM_NONBLOCK)
        guard opened >= 0, let pcm else {
            throw Self.openError(name: name, code: opened)
        }
        handle = pcm
        snd_pcm_nonblock(pcm, 0)  // reads block until a period is in
        var params: OpaquePointer?
        snd_pcm_hw_params_malloc(&params)
        defer { snd_pcm_hw_params_free(params) }
        func check(_ code: CInt, _ what: String) throws {
            guard code >= 0 else {
                throw AudioInputError(
                    "ALSA device \(name): cannot set \(what) (\(String(cString: snd_strerror(code))))")
            }
        }
        try check(snd_pcm_hw_params_any(pcm, params), "any parameters")
        try check(snd_pcm_hw_params_set_access(pcm, params, SND_PCM_ACCESS_RW_INTERLEAVED), "interleaved access")
        let candidates: [(snd_pcm_format_t, SampleFormat)] = [
            (SND_PCM_FORMAT_S16_LE, .s16le), (SND_PCM_FORMAT_S32_LE, .s32le), (SND_PCM_FORMAT_FLOAT_LE, .f32le),
        ]
        guard let chosen = candidates.first(where: { snd_pcm_hw_params_test_format(pcm, params, $0.0) == 0 }) else {
            throw AudioInputError(
                "ALSA device \(name) offers none of S16_LE, S32_LE, FLOAT_LE; try plughw:… or default")
        }
        try check(snd_pcm_hw_params_set_format(pcm, params, chosen.0), "sample format \(chosen.1)")
        var channels: UInt32 = 2
        try check(snd_pcm_hw_params_set_channels_near(pcm, params, &channels), "2 channels")
        var rate = UInt32(preferredRate)
        var direction: CInt = 0
        try check(snd_pcm_hw_params_set_rate_near(pcm, params, &rate, &direction), "rate \(preferredRate) Hz")
        var period = snd_pcm_uframes_t(periodFrames)
        try check(snd_pcm_hw_params_set_period_size_near(pcm, params, &period, &direction), "period \(periodFrames)")
        var bufferSize = period * 8
        try check(snd_pcm_hw_params_set_buffer_size_near(pcm, params, &bufferSize), "buffer size")
        try check(snd_pcm_hw_params(pcm, params), "hardware parameters")
        guard (8_000...192_000).contains(Int(rate)), (1...8).contains(Int(channels)) else {
            throw AudioInputError(
                "ALSA device \(name) offers \(rate) Hz, \(channels) channels; try plughw:… or default")
        }
        format = AudioFormat(sampleRate: Double(rate), channels: Int(channels))
        sampleFormat = chosen.1
        self.periodFrames = Int(period)
        try check(snd_pcm_prepare(pcm), "prepare")
    }

    deinit {
        if let handle { snd_pcm_close(handle) }
    }

    public func read(frames: Int) throws -> [Float] {
        guard let handle else { return [] }
        let frameBytes = sampleFormat.width * format.channels
        if buffer.count < frames * frameBytes { buffer = [UInt8](repeating: 0, count: frames * frameBytes) }
        while true {
            let got = buffer.withUnsafeMutableBytes { snd_pcm_readi(handle, $0.baseAddress, snd_pcm_uframes_t(frames)) }
            if got > 0 {
                var delay: snd_pcm_sframes_t = 0
                if snd_pcm_delay(handle, &delay) == 0 {
                    readAhead = ReadAhead(frames: max(0, Int(delay)), madeAt: MonotonicClock.nanoseconds())
                }
                return buffer.withUnsafeBytes { sampleFormat.decode($0, count: Int(got) * format.channels) }
            }
            if got == 0 { continue }
            if try ALSADevices.recover(handle, from: CInt(got), device: "ALSA device \(name)", doing: "capture") {
                overruns += 1
            }
        }
    }

    /// As ``read(frames:)``, waiting at most `timeoutMilliseconds` for audio (`snd_pcm_wait`): nil when none came.
    /// For a PCM that may stop delivering while it stays open (BlueALSA's, while the phone pauses), where a
    /// plain read would wait for ever. Starts the PCM when it has not started.
    ///
    /// - Throws: ``AudioInputError`` when the PCM failed for good (the phone left: the device is gone).
    public func read(frames: Int, timeoutMilliseconds: Int) throws -> [Float]? {
        guard let handle else { return [] }
        if snd_pcm_state(handle) == SND_PCM_STATE_PREPARED { _ = snd_pcm_start(handle) }
        let ready = snd_pcm_wait(handle, CInt(timeoutMilliseconds))
        if ready == 0 { return nil }
        if ready < 0 {
            if try ALSADevices.recover(handle, from: ready, device: "ALSA device \(name)", doing: "capture") {
                overruns += 1
            }
            return nil
        }
        let available = snd_pcm_avail_update(handle)
        if available < 0 {
            if try ALSADevices.recover(
                handle, from: CInt(truncatingIfNeeded: available), device: "ALSA device \(name)", doing: "capture")
            {
                overruns += 1
            }
            return nil
        }
        guard available > 0 else { return nil }
        return try read(frames: min(frames, Int(available)))
    }

    /// Names and descriptions of the PCMs that can capture, from alsa-lib's name hints.
    public static func captureDevices() -> [(name: String, description: String)] {
        ALSADevices.named(excluding: "Output")
    }

    private static func openError(name: String, code: CInt) -> AudioInputError {
        let reason = ALSADevices.openFailure(
            code, busy: "another program is capturing from it; stop it, or use default/pulse to share")
        let devices = captureDevices().prefix(12).map { $0.name }.joined(separator: ", ")
        let hint =
            devices.isEmpty
            ? "no capture device exists on this machine (input: monitor, a WAV file or - for stdin work without one)"
            : "capture devices here: \(devices)"
        return AudioInputError("ALSA device \(name) \(reason); \(hint)")
    }
}
