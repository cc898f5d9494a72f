import Foundation
public import LightOrganCore
import Synchronization

/// What the laptop itself is playing: the monitor source of the default output (sink) of the
/// running PipeWire or PulseAudio server (`input: auto` or `monitor`).
///
/// Records `<default sink>.monitor` with `parec` (raw s16le, 48 kHz stereo, a 10 ms buffer given
/// both as time and in bytes) and reads its output like standard input. A ``SoundServerWatch``
/// follows the server: when the user switches the output (speakers → headphones) a recorder on
/// the new sink's monitor is started and the old one stopped, so capture moves without a restart;
/// after each change the sink's output latency is measured again (``outputLatency``), so the
/// sender can hold the lights back until the sound leaves the speaker.
public final class MonitorInput: AudioSource, OutputLatencyReporting, @unchecked Sendable {
    // @unchecked Sendable: `read` is called by one capture thread at a time; everything the
    // watch thread changes is behind `state`.
    public let format: AudioFormat
    public var isLive: Bool { true }
    private let sampleRate: Int
    private let purpose: String
    private let state: Mutex<State>
    private var watch: SoundServerWatch?

    private struct State {
        var current: Recording
        /// Started on the new default sink; `read` moves to it when `current` ends.
        var next: Recording?
        var latency: OutputLatency?
        var isClosed = false
    }

    /// One `parec` recording one sink's monitor.
    private struct Recording {
        let sink: String
        let process: Process
        let output: Pipe
        let reader: RawPCMInput
    }

    public var outputLatency: OutputLatency? { state.withLock { $0.latency } }

    /// Starts recording the default sink's monitor at `sampleRate` Hz, stereo, and watching the server.
    ///
    /// - Parameter purpose: the setting that chose this input (`auto` or `monitor`), for messages.
    public init(purpose: String = "monitor", sampleRate: Int = 48_000) throws {
        self.sampleRate = sampleRate
        self.purpose = purpose
        format = AudioFormat(sampleRate: Double(sampleRate), channels: 2)
        let sink = try SoundServer.defaultSink(for: purpose)
        state = Mutex(State(current: try Self.record(sink, sampleRate: sampleRate, purpose: purpose)))
        watch = try? SoundServer.watch { [weak self] in self?.serverChanged() }
        // The first latency reading waits for the recorder: a monitor being recorded with a
        // 10 ms buffer makes the sink shorten its own buffer to match.
        let measuring = Thread { [weak self] in
            Thread.sleep(forTimeInterval: 0.2)
            self?.measureLatency(of: sink)
        }
        measuring.start()
    }

    deinit {
        watch?.stop()
        let recordings = state.withLock { state -> [Recording] in
            state.isClosed = true
            return [state.current] + (state.next.map { [$0] } ?? [])
        }
        for recording in recordings where recording.process.isRunning { recording.process.terminate() }
    }

    public func read(frames: Int) throws -> [Float] {
        try fromRecording(ended: \.isEmpty) { try $0.read(frames: frames) } ?? []
    }

    public func read(frames: Int, into analyzer: inout BandAnalyzer) throws -> Int {
        try fromRecording(ended: { $0 == 0 }) { try $0.read(frames: frames, into: &analyzer) } ?? 0
    }

    /// Reads with `read` from the current recorder, moving to the next one when it ends; nil when
    /// the last one ended.
    private func fromRecording<Result>(ended: (Result) -> Bool, _ read: (RawPCMInput) throws -> Result) throws -> Result? {
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
            recording.process.waitUntilExit()
            if recording.process.terminationStatus != 0, recording.process.terminationReason == .exit {
                throw AudioInputError(
                    "input \(purpose): parec stopped (status \(recording.process.terminationStatus)) recording \(recording.sink).monitor; is the sound server still running?")
            }
            return nil
        }
    }

    /// The server changed: follow a new default sink, and measure the latency again.
    private func serverChanged() {
        guard let sink = try? SoundServer.defaultSink(for: purpose) else { return }
        let current = state.withLock { $0.next?.sink ?? $0.current.sink }
        if sink != current, let recording = try? Self.record(sink, sampleRate: sampleRate, purpose: purpose) {
            let stale = state.withLock { state -> [Recording] in
                guard !state.isClosed else { return [recording] }
                // Replace a recording not yet taken up; end the current one, which makes `read` move on.
                let stale = [state.next, state.current].compactMap { $0 }
                state.next = recording
                return stale
            }
            for old in stale where old.process.isRunning { old.process.terminate() }
            Thread.sleep(forTimeInterval: 0.2)
        }
        measureLatency(of: sink)
    }

    private func measureLatency(of sink: String) {
        guard let latency = SoundServer.latency(ofSink: sink) else { return }
        state.withLock { $0.latency = latency }
    }

    private static func record(_ sink: String, sampleRate: Int, purpose: String) throws -> Recording {
        let process = Process()
        process.executableURL = try SoundServer.tool("parec", for: purpose)
        process.arguments = [
            "--device=\(sink).monitor", "--format=s16le", "--rate=\(sampleRate)", "--channels=2",
            "--latency-msec=10", "--latency=\(sampleRate / 100 * 4)", "--raw",
        ]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        process.standardInput = FileHandle.nullDevice
        do {
            try process.run()
        } catch {
            throw AudioInputError("input \(purpose): cannot start parec (\(error.localizedDescription))")
        }
        let reader = RawPCMInput(
            descriptor: output.fileHandleForReading.fileDescriptor, sampleRate: sampleRate, channels: 2, sampleFormat: .s16le)
        return Recording(sink: sink, process: process, output: output, reader: reader)
    }
}
