import Foundation
public import LightOrganCore

/// What the laptop itself is playing: the monitor source of the default output of the running
/// PipeWire or PulseAudio server (`input: monitor`).
///
/// Asks the server for its default sink (`pactl get-default-sink`; PipeWire answers through
/// pipewire-pulse), then records `<sink>.monitor` with `parec` (raw s16le, a 10 ms buffer, given
/// both as time and in bytes) and reads its output like standard input. Where no such server runs it says so and what works instead.
public final class MonitorInput: AudioSource, @unchecked Sendable {
    // @unchecked Sendable: used by one capture thread at a time, like RawPCMInput; the process
    // handle is only terminated in deinit.
    public var format: AudioFormat { pipe.format }
    public var isLive: Bool { true }
    /// The monitor source being recorded, e.g. `alsa_output.pci-0000_00_1f.3.analog-stereo.monitor`.
    public let sourceName: String
    private let recorder: Process
    private let pipe: RawPCMInput
    private let output: Pipe

    /// Starts recording the default sink's monitor at `sampleRate` Hz, stereo.
    public init(sampleRate: Int = 48_000) throws {
        let sink = try Self.defaultSink()
        sourceName = sink + ".monitor"
        recorder = Process()
        recorder.executableURL = try Self.tool("parec")
        recorder.arguments = [
            "--device=\(sourceName)", "--format=s16le", "--rate=\(sampleRate)", "--channels=2",
            "--latency-msec=10", "--latency=\(sampleRate / 100 * 4)", "--raw",
        ]
        output = Pipe()
        recorder.standardOutput = output
        recorder.standardError = FileHandle.nullDevice
        recorder.standardInput = FileHandle.nullDevice
        do {
            try recorder.run()
        } catch {
            throw AudioInputError("input monitor: cannot start parec (\(error.localizedDescription))")
        }
        pipe = RawPCMInput(
            descriptor: output.fileHandleForReading.fileDescriptor, sampleRate: sampleRate, channels: 2, sampleFormat: .s16le)
    }

    deinit {
        if recorder.isRunning { recorder.terminate() }
    }

    public func read(frames: Int) throws -> [Float] {
        let samples = try pipe.read(frames: frames)
        if samples.isEmpty, !recorder.isRunning, recorder.terminationStatus != 0 {
            throw AudioInputError("input monitor: parec stopped (status \(recorder.terminationStatus)) recording \(sourceName)")
        }
        return samples
    }

    /// The default sink of the running server.
    static func defaultSink() throws -> String {
        let pactl = try tool("pactl")
        let (status, text) = run(pactl, ["get-default-sink"])
        if status == 0, !text.isEmpty, !text.contains("\n") { return text }
        let (infoStatus, info) = run(pactl, ["info"])
        if infoStatus == 0, let line = info.split(separator: "\n").first(where: { $0.hasPrefix("Default Sink: ") }) {
            return String(line.dropFirst("Default Sink: ".count))
        }
        let reason = (text.isEmpty ? info : text).split(separator: "\n").first.map(String.init) ?? "no answer"
        throw AudioInputError(
            "input monitor: no PipeWire or PulseAudio server answers for this user (pactl: \(reason)); "
                + "it records what such a server plays. Log in to a desktop session, or use input: default "
                + "(ALSA), a WAV file, or pipe audio in: … | lightorgan send --input -")
    }

    static func tool(_ name: String) throws -> URL {
        let directories = (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":")
        for directory in directories where FileManager.default.isExecutableFile(atPath: "\(directory)/\(name)") {
            return URL(fileURLWithPath: "\(directory)/\(name)")
        }
        throw AudioInputError(
            "input monitor needs \(name) from pulseaudio-utils (sudo apt install pulseaudio-utils); "
                + "it talks to PipeWire (through pipewire-pulse) and PulseAudio alike")
    }

    private static func run(_ tool: URL, _ arguments: [String]) -> (CInt, String) {
        let process = Process()
        process.executableURL = tool
        process.arguments = arguments
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        process.standardInput = FileHandle.nullDevice
        do { try process.run() } catch { return (-1, "\(error.localizedDescription)") }
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines))
    }
}
