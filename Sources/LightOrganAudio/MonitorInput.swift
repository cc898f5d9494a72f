public import LightOrganCore
import LightOrganPOSIX
import Synchronization

/// What the laptop itself is playing: the monitor source of the default output (sink) of the
/// running PipeWire or PulseAudio server (`input: auto` or `monitor`).
///
/// Records `<default sink>.monitor` through libpulse (``PulseRecorder``: s16le, 48 kHz stereo,
/// blocks of 10–40 ms as the delay allows, ``LightDelay/monitorBlockMilliseconds(latency:)``) and
/// reads its pipe like standard input; the server's timing of the record stream says when each
/// block was made (``readAhead``, ``captureLag``). With `sender.delay: auto` a recorder starts
/// with 40 ms blocks and is replaced by one with 10 ms blocks when the output's latency leaves too
/// little delay to cover them. A ``SoundServerWatch``
/// follows the server: when the user switches the output (speakers → headphones) a recorder on
/// the new sink's monitor is started and the old one stopped, so capture moves without a restart;
/// after each change the sink's output latency is measured again (``outputLatency``), so the
/// sender can hold the lights back until the sound leaves the speaker.
public final class MonitorInput: AudioSource, CaptureTimeReporting, OutputLatencyReporting, @unchecked Sendable {
    // @unchecked Sendable: `read` is called by one capture thread at a time; everything the
    // watch thread changes is behind `state`.
    public let format: AudioFormat
    public var isLive: Bool { true }
    private let sampleRate: Int
    private let purpose: String
    private let delay: LightDelay
    private let state: Mutex<State>
    private var watch: SoundServerWatch?

    private struct State {
        var current: Recording
        /// Started on the new default sink; `read` moves to it when `current` ends.
        var next: Recording?
        var latency: OutputLatency?
        var isClosed = false
        /// Counts the latency measurements started; a measurement retries only while it is the latest.
        var measurements = 0
    }

    /// One record stream of one sink's monitor, and the reader of its pipe.
    private struct Recording {
        let sink: String
        /// The blocks it asked for, milliseconds.
        let blockMilliseconds: Int
        let recorder: PulseRecorder
        let reader: RawPCMInput
    }

    public var outputLatency: OutputLatency? { state.withLock { $0.latency } }

    /// The sound server's latest statement on the current recording: which of its frames was made
    /// when, counted from the frames read so far; before the server's first statement, when the
    /// last block arrived.
    public var readAhead: ReadAhead? {
        let recording = state.withLock { $0.current }
        guard let timing = recording.recorder.timing else { return recording.reader.readAhead }
        return ReadAhead(frames: timing.frame - recording.reader.framesReturned, madeAt: timing.madeAt)
    }

    /// A sound server's monitor: its first block may hold a second of audio already made, never any
    /// not yet made.
    public var keepsRealTime: Bool { true }

    /// The current recording's lag as the sound server states it (its write index less what this
    /// sender had taken, plus what the source still held).
    public var captureLag: CaptureLag? {
        state.withLock { $0.current }.recorder.timing.map {
            .stated(nanoseconds: $0.lag, by: "the sound server's timing of the record stream")
        }
    }

    /// Starts recording the default sink's monitor at `sampleRate` Hz, stereo, and watching the server.
    ///
    /// - Parameters:
    ///   - purpose: the setting that chose this input (`auto` or `monitor`), for messages.
    ///   - delay: `sender.delay`, which decides how long the recorder's blocks may be.
    public init(purpose: String = "monitor", sampleRate: Int = 48_000, delay: LightDelay = .milliseconds(0)) throws {
        self.sampleRate = sampleRate
        self.purpose = purpose
        self.delay = delay
        format = AudioFormat(sampleRate: Double(sampleRate), channels: 2)
        let sink = try SoundServer.defaultSink(for: purpose)
        let recording = try Self.record(
            sink, blockMilliseconds: Self.firstBlockMilliseconds(on: sink, delay: delay), sampleRate: sampleRate,
            purpose: purpose)
        state = Mutex(State(current: recording))
        watch = try? SoundServer.watch { [weak self] in self?.serverChanged() }
        // The first latency reading waits for the recorder: a monitor being recorded with short
        // blocks makes the sink shorten its own buffer to match.
        startMeasuring(sink, after: 0.2)
    }

    deinit { close() }

    /// Stops following the server and ends the recorders (the process may exit before this object
    /// is released: the sender closes its source when it stops).
    public func close() {
        watch?.stop()
        let recordings = state.withLock { state -> [Recording] in
            state.isClosed = true
            return [state.current] + (state.next.map { [$0] } ?? [])
        }
        for recording in recordings { recording.recorder.stop() }
    }

    public func read(frames: Int) throws -> [Float] {
        try fromRecording(ended: \.isEmpty) { try $0.read(frames: frames) } ?? []
    }

    public func read(frames: Int, into analyzer: inout BandAnalyzer) throws -> Int {
        try fromRecording(ended: { $0 == 0 }) { try $0.read(frames: frames, into: &analyzer) } ?? 0
    }

    /// Reads with `read` from the current recorder, moving to the next one when it ends; nil when
    /// the last one ended.
    private func fromRecording<Result>(ended: (Result) -> Bool, _ read: (RawPCMInput) throws -> Result) throws
        -> Result?
    {
        while true {
            let recording = state.withLock { $0.current }
            let result = try read(recording.reader)
            if !ended(result) { return result }
            // The recorder ended: moved to another sink, or failed.
            let moved = state.withLock { state -> Bool in
                guard let next = state.next else { return false }
                state.current = next
                state.next = nil
                return true
            }
            if moved { continue }
            if let failure = recording.recorder.failure {
                throw AudioInputError(
                    "input \(purpose): recording \(recording.sink).monitor stopped (\(failure)); is the sound server still running?"
                )
            }
            return nil
        }
    }

    /// The server changed: follow a new default sink, and measure the latency again.
    private func serverChanged() {
        guard let sink = try? SoundServer.defaultSink(for: purpose) else { return }
        let current = state.withLock { $0.next?.sink ?? $0.current.sink }
        let switched =
            sink != current
            && replaceRecording(on: sink, blockMilliseconds: Self.firstBlockMilliseconds(on: sink, delay: delay))
        startMeasuring(sink, after: switched ? 0.2 : 0)
    }

    /// Measures `sink`'s latency on a thread of its own, `seconds` from now; without an answer (a
    /// busy PipeWire, a sink not yet linked) tries again after 0.5, 1, 2, 4 and 8 s, unless the
    /// output changed or a newer measurement started meanwhile.
    private func startMeasuring(_ sink: String, after seconds: Double) {
        let measurement = state.withLock { state -> Int in
            state.measurements += 1
            return state.measurements
        }
        DedicatedThread.start(named: "lightorgan output latency") { [weak self] in
            for pause in [seconds, 0.5, 1, 2, 4, 8] {
                DedicatedThread.sleep(seconds: pause)
                guard let self, self.state.withLock({ !$0.isClosed && $0.measurements == measurement }) else { return }
                if self.measureLatency(of: sink) { return }
            }
        }
    }

    /// Starts a recorder on `sink` that `read` moves to once the current one ends, and ends the
    /// current one; false when it could not be started.
    private func replaceRecording(on sink: String, blockMilliseconds: Int) -> Bool {
        guard
            let recording = try? Self.record(
                sink, blockMilliseconds: blockMilliseconds, sampleRate: sampleRate, purpose: purpose)
        else { return false }
        let stale = state.withLock { state -> [Recording] in
            guard !state.isClosed else { return [recording] }
            // Replace a recording not yet taken up; end the current one, which makes `read` move on.
            let stale = [state.next, state.current].compactMap { $0 }
            state.next = recording
            return stale
        }
        for old in stale { old.recorder.stop() }
        return true
    }

    /// The blocks to start recording `sink` with: one quick look at the sink first, so a virtual
    /// one is recorded in short blocks from the start (replacing a recorder splices two streams:
    /// a click in the audio, a frame of every lamp).
    private static func firstBlockMilliseconds(on sink: String, delay: LightDelay) -> Int {
        guard delay == .auto else { return delay.monitorBlockMilliseconds(latency: nil) }
        return delay.monitorBlockMilliseconds(latency: SoundServer.latency(ofSink: sink, samples: 1))
    }

    /// Measures `sink`'s latency; when it leaves too little delay for the recorder's blocks, records
    /// with shorter ones. False when the server gave no reading.
    private func measureLatency(of sink: String) -> Bool {
        let recorderBlocks = state.withLock { ($0.next ?? $0.current).blockMilliseconds }
        guard let latency = SoundServer.latency(ofSink: sink, recorderBlockMilliseconds: recorderBlocks) else {
            return false
        }
        let recording = state.withLock { state in
            state.latency = latency
            return state.next ?? state.current
        }
        let blocks = delay.monitorBlockMilliseconds(latency: latency)
        if recording.sink == sink, blocks < recording.blockMilliseconds,
            replaceRecording(on: sink, blockMilliseconds: blocks),
            let shorter = SoundServer.pipeWireLatency(ofSink: sink, recorderBlockMilliseconds: blocks)
        {
            // Under PipeWire shorter blocks make a shorter quantum, and a sound card's latency with it.
            state.withLock { $0.latency = shorter }
        }
        return true
    }

    private static func record(_ sink: String, blockMilliseconds: Int, sampleRate: Int, purpose: String) throws
        -> Recording
    {
        let recorder: PulseRecorder
        do {
            recorder = try PulseRecorder(
                source: "\(sink).monitor", sampleRate: sampleRate, channels: 2, blockMilliseconds: blockMilliseconds)
        } catch {
            throw AudioInputError("input \(purpose): \(error). \(SoundServer.alternatives)")
        }
        let reader = RawPCMInput(
            descriptor: recorder.descriptor, sampleRate: sampleRate, channels: 2, sampleFormat: .s16le)
        return Recording(sink: sink, blockMilliseconds: blockMilliseconds, recorder: recorder, reader: reader)
    }
}
