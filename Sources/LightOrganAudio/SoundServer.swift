import FoundationEssentials
import Glibc
public import LightOrganCore
import LightOrganPOSIX
import Synchronization

/// The PipeWire or PulseAudio server of this user, asked through `pactl` (pulseaudio-utils; PipeWire
/// answers through pipewire-pulse): its default sink, a sink's output latency, and a watch for
/// changes of either.
///
/// Every question runs `pactl` with a time limit, so a server that does not answer never hangs the sender.
public enum SoundServer {
    /// How long one `pactl` question may take, seconds.
    static let answerTimeLimit = 3.0

    /// The name of the default sink (the output the desktop plays to).
    ///
    /// - Parameter purpose: the input that asks (`auto`, `monitor`), for the error message.
    /// - Throws: ``AudioInputError`` naming what to do when no server answers or pactl is missing.
    public static func defaultSink(for purpose: String) throws -> String {
        let pactl = try tool("pactl", for: purpose)
        let (status, text) = run(pactl, ["get-default-sink"])
        if status == 0, !text.isEmpty, !text.contains("\n") { return text }
        // pactl before 15 has no get-default-sink; `info` names it too.
        let (infoStatus, info) = run(pactl, ["info"])
        if infoStatus == 0, let line = info.split(separator: "\n").first(where: { $0.hasPrefix("Default Sink: ") }) {
            return String(line.dropFirst("Default Sink: ".count))
        }
        let reason = (text.isEmpty ? info : text).split(separator: "\n").first.map(String.init) ?? "no answer"
        throw AudioInputError(
            "input \(purpose): no PipeWire or PulseAudio server answers for this user (pactl: \(reason)), so there is "
                + "no playing audio to capture. \(alternatives)")
    }

    /// The inputs that work without a sound server, for error messages.
    static let alternatives =
        "Use --input demo (built-in groove), an ALSA device (--input default, hw:1,0), a WAV file (--input song.wav) "
        + "or raw PCM on stdin (… | lightorgan send --input -)"

    /// The output latency of sink `name`: how long audio that its monitor shows takes to leave the
    /// speaker. The median of `samples` readings taken 20 ms apart (a sink's latency is a snapshot
    /// of its buffer and moves with each refill); unknown (nil microseconds) for a virtual sink; nil
    /// when the server does not say.
    ///
    /// pipewire-pulse answers `Latency: 0 usec` for every sink; PipeWire itself is then asked
    /// (`pw-dump`, see ``PipeWireGraph``), its answer depending on the graph's quantum, which the
    /// monitor's recorder sets through the blocks it asks for (`recorderBlockMilliseconds`).
    public static func latency(
        ofSink name: String, samples: Int = 5,
        recorderBlockMilliseconds: Int = LightDelay.longestMonitorBlockMilliseconds
    ) -> OutputLatency? {
        guard let pactl = try? tool("pactl", for: "monitor") else { return nil }
        var readings: [Int] = []
        for sample in 0..<samples {
            if sample > 0 { DedicatedThread.sleep(seconds: 0.02) }
            let (status, text) = run(pactl, ["list", "sinks"])
            guard status == 0, let (reading, isPipeWire) = latency(ofSink: name, inListing: text) else { continue }
            guard let microseconds = reading.microseconds else { return reading }
            // pipewire-pulse's 0 says nothing: PipeWire's own figure, or none this time (the caller
            // keeps the one it has rather than drop the delay).
            if isPipeWire { return pipeWireLatency(ofSink: name, recorderBlockMilliseconds: recorderBlockMilliseconds) }
            readings.append(microseconds)
        }
        return readings.isEmpty ? nil : OutputLatency(output: name, microseconds: readings.sorted()[readings.count / 2])
    }

    /// Sink `name`'s playback latency as PipeWire states it; nil when no PipeWire answers or it
    /// does not know the sink (or states no latency for it).
    static func pipeWireLatency(ofSink name: String, recorderBlockMilliseconds: Int) -> OutputLatency? {
        guard let pwDump = try? tool("pw-dump", for: "monitor") else { return nil }
        let (status, text) = run(pwDump, [], keepingErrors: false)
        guard status == 0, let graph = PipeWireGraph(dump: text),
            let microseconds = graph.playbackLatencyMicroseconds(
                ofSink: name, recorderBlockMilliseconds: recorderBlockMilliseconds)
        else { return nil }
        return OutputLatency(output: name, microseconds: microseconds)
    }

    /// The latency of sink `name` in the text of `pactl list sinks` (its `Latency: N usec` and
    /// `Flags:` lines), and whether PipeWire serves it (`Driver: PipeWire`: pipewire-pulse, whose
    /// latency is always 0). A sink with neither the HARDWARE nor the NETWORK flag (null, combine, filter
    /// sinks) is virtual: its reported latency is its own buffer's, not a speaker's, so it is unknown.
    /// PulseAudio states 0 for a sink that plays nothing (`State: SUSPENDED` or `IDLE`), and for a
    /// tunnel (NETWORK) until it has timed its far end: no reading (nil), measured again (the retries,
    /// and the sink's change of state, which the watch reports).
    package static func latency(ofSink name: String, inListing listing: String) -> (OutputLatency, isPipeWire: Bool)? {
        var inSink = false
        var microseconds: Int?
        var flags: [Substring]?
        var isPipeWire = false
        var isRunning = true
        var state: Substring?  // of the sink whose lines come next
        for line in listing.split(separator: "\n") {
            let trimmed = line.drop(while: \.isWhitespace)
            if trimmed.hasPrefix("Name: ") {
                if inSink { break }
                inSink = trimmed.dropFirst("Name: ".count) == name
                if inSink { isRunning = state.map { $0 == "RUNNING" } ?? true }
            } else if inSink, trimmed.hasPrefix("Latency: ") {
                let number = trimmed.dropFirst("Latency: ".count).prefix(while: { $0.isNumber || $0 == "." })
                microseconds = Double(number).map { Int($0) }
            } else if inSink, trimmed.hasPrefix("Flags: ") {
                flags = trimmed.dropFirst("Flags: ".count).split(separator: " ")
            } else if inSink, trimmed == "Driver: PipeWire" {
                isPipeWire = true
            } else if trimmed.hasPrefix("State: ") {  // before its sink's Name line
                state = trimmed.dropFirst("State: ".count)
            }
        }
        guard let microseconds else { return nil }
        if let flags, !flags.contains("HARDWARE"), !flags.contains("NETWORK") {
            return (OutputLatency(output: name, microseconds: nil), isPipeWire)
        }
        // 0 from a sink that plays nothing, or from a tunnel that has not yet timed its far end: no reading.
        if microseconds == 0, !isPipeWire, !isRunning || flags?.contains("NETWORK") == true { return nil }
        return (OutputLatency(output: name, microseconds: microseconds), isPipeWire)
    }

    /// Calls `changed` (on a thread of its own) whenever the server reports a change of itself (the
    /// default sink) or of a sink (a new one, a new port, a new latency offset), at most every
    /// 100 ms; stops when the returned handle is stopped or released.
    public static func watch(_ changed: @escaping @Sendable () -> Void) throws -> SoundServerWatch {
        try SoundServerWatch(pactl: tool("pactl", for: "monitor"), changed: changed)
    }

    /// The path of `name` on PATH.
    static func tool(_ name: String, for purpose: String) throws -> String {
        let directories = (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":")
        for directory in directories where access("\(directory)/\(name)", X_OK) == 0 {
            return "\(directory)/\(name)"
        }
        throw AudioInputError(
            "input \(purpose) records what this machine plays and needs \(name) from pulseaudio-utils "
                + "(sudo apt install pulseaudio-utils; it talks to PipeWire and PulseAudio alike). \(alternatives)")
    }

    /// Runs `tool` and returns its status and trimmed output (with its error output unless
    /// `keepingErrors` is false); killed after ``answerTimeLimit``.
    static func run(_ tool: String, _ arguments: [String], keepingErrors: Bool = true) -> (CInt, String) {
        let answer: (termination: ChildProcess.Termination, output: [UInt8], errors: [UInt8])
        do {
            answer = try ChildProcess.run(
                path: tool, arguments: arguments, errors: keepingErrors ? .merged : .discarded,
                timeLimit: answerTimeLimit)
        } catch {
            return (-1, "\(error)")
        }
        guard case .exited(let status) = answer.termination else {
            return (-1, "no answer within \(Int(answerTimeLimit)) s")
        }
        return (status, String(decoding: answer.output, as: UTF8.self).trimmingWhitespace())
    }
}

/// A running `pactl subscribe`: calls back on server and sink changes until stopped.
public final class SoundServerWatch: Sendable {
    private let process: ChildProcess
    private let stopped = Flag()

    /// Set once, read by the watching thread.
    private final class Flag: Sendable {
        private let value = Atomic<Bool>(false)
        var isSet: Bool { value.load(ordering: .relaxed) }
        func set() { value.store(true, ordering: .relaxed) }
    }

    init(pactl: String, changed: @escaping @Sendable () -> Void) throws {
        let process = try ChildProcess(path: pactl, arguments: ["subscribe"])
        self.process = process
        DedicatedThread.start(named: "lightorgan sound server watch") { [stopped] in
            var pending = ""
            while !stopped.isSet {
                let data = process.readOutput()
                if data.isEmpty { break }  // pactl ended
                pending += String(decoding: data, as: UTF8.self)
                let lines = pending.split(separator: "\n", omittingEmptySubsequences: false)
                pending = String(lines.last ?? "")
                let relevant = lines.dropLast().contains {
                    $0.hasSuffix(" on server") || $0.contains(" on server #") || $0.contains(" on sink #")
                }
                guard relevant else { continue }
                // A switch comes as a burst of events: let it settle, then look once.
                DedicatedThread.sleep(seconds: 0.1)
                if !stopped.isSet { changed() }
            }
        }
    }

    /// Ends the watch.
    public func stop() {
        stopped.set()
        process.kill()
    }

    deinit { stop() }
}
