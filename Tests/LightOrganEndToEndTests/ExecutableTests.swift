import Foundation
import LightOrganCore
import Testing

/// For tests that check routing with steady tones (capture, transport, crossovers): the level
/// response shows a steady tone as a steady lamp; the default dance response flashes its onset only.
let steadyLamps = ["LIGHTORGAN_ANALYSIS_RESPONSE": "level"]

/// The built `lightorgan` executable, run as a user would.
@Suite("lightorgan executable")
struct ExecutableTests {
    /// `lightorgan`, built next to this test bundle by `swift build`.
    static let binary: URL = {
        let testBundle = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
        var directory = testBundle.deletingLastPathComponent()
        while directory.path != "/",
            !FileManager.default.fileExists(atPath: directory.appendingPathComponent("lightorgan").path)
        {
            directory = directory.deletingLastPathComponent()
        }
        return directory.appendingPathComponent("lightorgan")
    }()

    struct Run {
        var status: Int32
        var reason: Process.TerminationReason
        var stdout: String
        var stderr: String
    }

    /// Runs the executable with `arguments`; sends `signal` after `signalAfter` seconds if given, or
    /// when `until` returns.
    ///
    /// Output goes to files and the exit is awaited with a termination handler: nothing here blocks
    /// a thread of Swift's cooperative pool (on 2 cores, two blocking pipe reads would starve it).
    static func run(
        _ arguments: [String], directory: String? = nil, environment: [String: String] = [:],
        stdin: String? = nil, signal: Int32? = nil, after signalAfter: Double = 0,
        until: (@Sendable () async -> Void)? = nil
    ) async throws -> Run {
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("lightorgan-run-\(UUID())")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: scratch) }
        let outURL = scratch.appendingPathComponent("stdout"), errURL = scratch.appendingPathComponent("stderr")
        _ = FileManager.default.createFile(atPath: outURL.path, contents: nil)
        _ = FileManager.default.createFile(atPath: errURL.path, contents: nil)
        let out = try FileHandle(forWritingTo: outURL), err = try FileHandle(forWritingTo: errURL)

        let process = Process()
        process.executableURL = binary
        process.arguments = arguments
        process.environment = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("LIGHTORGAN_") }
            .merging(environment) { $1 }
        if let directory { process.currentDirectoryURL = URL(fileURLWithPath: directory) }
        process.standardOutput = out
        process.standardError = err
        process.standardInput =
            try stdin.map { try FileHandle(forReadingFrom: URL(fileURLWithPath: $0)) } ?? FileHandle.nullDevice
        let exited = AsyncStream<Void>.makeStream()
        process.terminationHandler = { _ in exited.continuation.finish() }
        try process.run()
        if let signal {
            if let until {
                await until()
            } else {
                try await Task.sleep(for: .milliseconds(Int(signalAfter * 1000)))
            }
            kill(process.processIdentifier, signal)
        }
        for await _ in exited.stream {}
        try out.close()
        try err.close()
        return Run(
            status: process.terminationStatus, reason: process.terminationReason,
            stdout: try String(contentsOf: outURL, encoding: .utf8),
            stderr: try String(contentsOf: errURL, encoding: .utf8))
    }

    /// `t=… s  bass … mid … treble …` lines of the demo's plain output.
    static func plainFrames(_ text: String) -> [[Int]] {
        text.split(separator: "\n").filter { $0.hasPrefix("t=") }.map { line in
            line.split(separator: " ").compactMap { Int($0) }
        }
    }

    @Test("demo --duration 2 plays moving lamps for two seconds and ends dark")
    func demoRunsForDuration() async throws {
        let clock = ContinuousClock()
        let started = clock.now
        let run = try await Self.run(["demo", "--duration", "2"])
        let elapsed = clock.now - started
        #expect(run.status == 0, "stderr: \(run.stderr)")
        #expect(elapsed >= .seconds(2) && elapsed < .seconds(6), "took \(elapsed)")
        let frames = Self.plainFrames(run.stdout)
        // A line per tenth of a second, stamped with the audio time it shows. A starved machine may
        // skip lines (newest wins), never add any; the stamps must still cover the two seconds.
        let stamps = run.stdout.split(separator: "\n").filter { $0.hasPrefix("t=") }.compactMap {
            Double($0.dropFirst(2).prefix { $0 != " " })
        }
        #expect(frames.count >= 5 && frames.count <= 23, "a line per tenth of a second: \(frames.count)\n\(run.stdout)")
        #expect(stamps == stamps.sorted() && (stamps.last ?? 0) >= 1.7 && (stamps.last ?? 9) <= 2.5, "\(stamps)")
        for band in 0..<3 {
            let levels = frames.dropLast().map { $0[band] }
            #expect(Set(levels).count >= 5, "band \(band) moves: \(levels)")
            #expect(levels.max()! >= 150, "band \(band) lights up: \(levels)")
        }
        #expect(frames.last == [0, 0, 0], "\(run.stdout)")
    }

    @Test("Ctrl-C ends the demo cleanly with the lamps off")
    func demoStopsOnInterrupt() async throws {
        let run = try await Self.run(["demo"], signal: SIGINT, after: 1.5)
        #expect(run.reason == .exit && run.status == 0, "stderr: \(run.stderr)")
        #expect(Self.plainFrames(run.stdout).count >= 10)
        #expect(Self.plainFrames(run.stdout).last == [0, 0, 0])
    }

    @Test("send and receive in two processes, configured by one settings file, light the receiver's output")
    func twoProcessesWithSettingsFile() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("lightorgan-\(UUID())").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let port = Int.random(in: 20_000...40_000)
        try
            "sender:\n  host: 127.0.0.1\n  port: \(port)\n  input: demo\nreceiver:\n  bind: 127.0.0.1\n  port: \(port)\n  output: stdout\n"
            .write(toFile: directory + "/lightorgan.yaml", atomically: true, encoding: .utf8)
        async let receiver = Self.run(["receive"], directory: directory, signal: SIGTERM, after: 3.5)
        _ = await eventually(within: .seconds(3)) { isListening(port: port) }
        let sender = try await Self.run(["send"], directory: directory, signal: SIGTERM, after: 2)
        let received = try await receiver
        #expect(sender.status == 0, "sender stderr: \(sender.stderr)")
        #expect(received.status == 0, "receiver stderr: \(received.stderr)")
        #expect(received.stderr.contains("settings file: lightorgan.yaml"))
        let lines = received.stdout.split(separator: "\n").map { $0.split(separator: " ") }
        #expect(lines.count >= 100, "about 100 frames per second for 2 s: \(lines.count)")
        #expect(lines.allSatisfy { $0.count == 4 && Double($0[0]) != nil && $0[1...].allSatisfy { UInt8($0) != nil } })
        #expect(lines.contains { $0[1...].contains { UInt8($0)! > 100 } }, "lamps lit")
        #expect(lines.last?[1...] == ["0", "0", "0"], "dark at the end")
    }

    /// Streams `seconds` of a 60 Hz stereo tone (44.1 kHz s16le) on stdin through `lightorgan send`
    /// with the level response and `options` to a receiver printing to stdout, which is started first
    /// (the sender starts once it listens) and stopped `receiverAfter` s after the sender ended.
    /// Returns both runs and when the sender started and how long it took, seconds on
    /// CLOCK_MONOTONIC (the clock of the receiver's lines).
    static func streamToneOnStdin(seconds: Double, options: [String] = [], receiverAfter: Double = 0.3) async throws
        -> (sender: Run, receiver: Run, started: Double, took: Double)
    {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("stdin-\(UUID()).raw").path
        try stereoTone(frequency: 60, seconds: seconds, rate: 44_100).write(to: URL(fileURLWithPath: path))
        defer { try? FileManager.default.removeItem(atPath: path) }
        let port = Int.random(in: 30_001...40_000)
        let senderEnded = AsyncStream<Void>.makeStream()
        async let receiver = run(
            ["receive", "--bind", "127.0.0.1", "--port", "\(port)", "--output", "stdout"], signal: SIGTERM,
            until: {
                for await _ in senderEnded.stream {}
                try? await Task.sleep(for: .milliseconds(Int(receiverAfter * 1000)))
            })
        _ = await eventually(within: .seconds(10)) { isListening(port: port) }
        let started = MonotonicClock.seconds()
        let sender = try await run(
            [
                "send", "--input", "-", "--rate", "44100", "--channels", "2", "--format", "s16le", "--host",
                "127.0.0.1",
                "--port", "\(port)",
            ] + options, environment: steadyLamps, stdin: path)
        let took = MonotonicClock.seconds() - started
        senderEnded.continuation.finish()
        return (sender, try await receiver, started, took)
    }

    @Test("raw PCM on stdin is analysed in real time and lights the right lamp")
    func rawPCMOnStdin() async throws {
        let (sender, received, _, took) = try await Self.streamToneOnStdin(seconds: 2)
        #expect(sender.status == 0, "\(sender.stderr)")
        #expect(took >= 1.8 && took < 3, "2 s of audio paced to real time: \(took) s")
        let frames = received.stdout.split(separator: "\n").map {
            $0.split(separator: " ").dropFirst().compactMap { Int($0) }
        }
        #expect(frames.count >= 150, "2 s of audio at 100 frames/s: \(frames.count) frames\n\(sender.stderr)")
        #expect(frames.dropFirst(60).dropLast(2).allSatisfy { $0[0] >= 200 && $0[1] <= 10 && $0[2] <= 10 })
        #expect(frames.last == [0, 0, 0])
    }

    @Test("sender.delay holds live audio back from its first frame and, at the end of the audio, sends what it held")
    func delayedStdin() async throws {
        let (sender, received, started, took) = try await Self.streamToneOnStdin(
            seconds: 1, options: ["--delay", "300"])
        #expect(sender.status == 0, "\(sender.stderr)")
        let lines = received.stdout.split(separator: "\n").map { $0.split(separator: " ") }
        let first = try #require(lines.first.flatMap { Double($0[0]) })
        // A frame leaves 300 ms after its audio was made. A file on stdin arrives at once, and the sender takes up
        // to 50 ms of it ahead of the clock before it holds the pipe to real time (FrameStream): so its first audio
        // counts as made up to 50 ms before the sender read it. Undelayed, the first frame comes within 0.1 s.
        #expect(
            first - started >= 0.25 && first - started < 3,
            "nothing shown before the delay: first frame \(first - started) s after the start")
        // One frame per 10 ms of audio (a few may be skipped while the audio clock settles), the last
        // 300 ms of them sent after the audio ended, then all-off.
        #expect(took >= 1.2, "the sender sent the frames it held after the audio ended: it took \(took) s")
        #expect(lines.count >= 90, "\(lines.count) frames for 1 s of audio")
        #expect(
            lines.dropLast().suffix(20).allSatisfy { Int($0[1]) ?? 0 >= 150 },
            "the held frames of the tone's end were sent")
        #expect(lines.last?.dropFirst().compactMap { Int($0) } == [0, 0, 0])
    }

    @Test("a bad setting stops the command with status 2 and one line naming file, key, value and range")
    func badSettingExitsTwo() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("lightorgan-\(UUID())").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        try "sender:\n  port: 99999\n".write(toFile: directory + "/lightorgan.yaml", atomically: true, encoding: .utf8)
        let run = try await Self.run(["send"], directory: directory)
        #expect(run.status == 2)
        #expect(run.stderr == "lightorgan: lightorgan.yaml: sender.port = 99999 is out of range 1…65535\n")
    }

    @Test("--help of each command explains its options with their defaults")
    func helpNamesDefaults() async throws {
        let send = try await Self.run(["send", "--help"])
        #expect(send.stdout.contains("--port") && send.stdout.contains("Default: 8181"))
        #expect(send.stdout.contains("Default: 100") && send.stdout.contains("Default: auto"))
        let receive = try await Self.run(["receive", "--help"])
        #expect(receive.stdout.contains("--output") && receive.stdout.contains("Default: terminal"))
        let demo = try await Self.run(["demo", "--help"])
        #expect(demo.stdout.contains("--duration"))
    }
}

@Suite("lightorgan analyze")
struct AnalyzeTests {
    func writeWAV(seconds: Double, frequency: Double) throws -> String {
        var data = Data("RIFF".utf8)
        let count = Int(seconds * 44_100)
        func le(_ value: Int, _ bytes: Int) {
            for i in 0..<bytes { data.append(UInt8(truncatingIfNeeded: value >> (8 * i))) }
        }
        le(36 + count * 4, 4)
        data.append(contentsOf: Array("WAVEfmt ".utf8))
        le(16, 4); le(1, 2); le(2, 2); le(44_100, 4); le(44_100 * 4, 4); le(4, 2); le(16, 2)
        data.append(contentsOf: Array("data".utf8))
        le(count * 4, 4)
        for index in 0..<count {
            let value = Int(16_000 * sin(2 * .pi * frequency * Double(index) / 44_100))
            le(value, 2); le(value, 2)
        }
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("analyze-\(UUID()).wav").path
        try data.write(to: URL(fileURLWithPath: path))
        return path
    }

    @Test("writes one CSV row per frame with the audio time of its last sample, and an SVG plot")
    func csvAndPlot() async throws {
        let wav = try writeWAV(seconds: 1, frequency: 60)
        let plot = wav + ".svg"
        let run = try await ExecutableTests.run(
            ["analyze", wav, "--fps", "1000", "--plot", plot], environment: steadyLamps)
        #expect(run.status == 0, "\(run.stderr)")
        let lines = run.stdout.split(separator: "\n")
        #expect(lines.first == "t_s,bass,mid,treble,beat,bpm")
        #expect(lines.count == 1001)
        #expect(lines[1] == "0.000975,0,0,0" || lines[1].hasPrefix("0.000975,"))
        #expect(lines.last?.hasPrefix("0.999977,") == true)
        let last = lines.last!.split(separator: ",").compactMap { Int($0) }
        #expect(last[0] >= 200 && last[1] <= 10 && last[2] <= 10, "60 Hz lights bass: \(last)")
        let svg = try String(contentsOfFile: plot, encoding: .utf8)
        #expect(svg.hasPrefix("<svg") && svg.contains("bass") && svg.contains("treble"), "\(svg.prefix(200))")
    }

    @Test("uses the crossovers of the settings file: 2 kHz is mid by default, treble with crossover_high 1000")
    func honoursAnalysisSettings() async throws {
        let wav = try writeWAV(seconds: 1, frequency: 2000)
        let config = wav + ".yaml"
        try "analysis:\n  crossover_low: 100\n  crossover_high: 1000\n".write(
            toFile: config, atomically: true, encoding: .utf8)
        func lastLevels(_ run: ExecutableTests.Run) -> [Int] {
            run.stdout.split(separator: "\n").last!.split(separator: ",").dropFirst().compactMap { Int($0) }
        }
        let standard = try await ExecutableTests.run(["analyze", wav], environment: steadyLamps)
        let tuned = try await ExecutableTests.run(["analyze", wav, "--config", config], environment: steadyLamps)
        #expect(standard.status == 0 && tuned.status == 0, "\(standard.stderr) \(tuned.stderr)")
        #expect(lastLevels(standard)[1] >= 200 && lastLevels(standard)[2] <= 10, "\(lastLevels(standard))")
        #expect(lastLevels(tuned)[2] >= 200 && lastLevels(tuned)[1] <= 10, "\(lastLevels(tuned))")
    }

    @Test("refuses a file that is not WAV with status 2 and says what it found")
    func refusesNonWAV() async throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("x-\(UUID()).mp3").path
        try Data("ID3\u{3}junkjunkjunk".utf8).write(to: URL(fileURLWithPath: path))
        let run = try await ExecutableTests.run(["analyze", path])
        #expect(run.status == 2)
        #expect(run.stderr.contains("is not a WAV file (it starts with \"ID3.\""))
    }
}

/// The ALSA capture path for real: libasound2 with its `file` plugin, which reads capture data from
/// a file (no sound card needed), through the sender, over TCP, to a receiver.
@Suite("ALSA capture")
struct ALSACaptureTests {
    /// A raw s16le stereo 48 kHz tone and an ALSA configuration that defines `pcm.testsignal` on it.
    func makeTestSignal(frequency: Double, seconds: Double) throws -> (directory: String, configuration: String) {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("alsa-\(UUID())").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        try stereoTone(frequency: frequency, seconds: seconds, rate: 48_000)
            .write(to: URL(fileURLWithPath: directory + "/signal.raw"))
        let configuration = directory + "/test.conf"
        try """
        pcm.testsignal {
            type file
            slave.pcm { type null }
            file "/dev/null"
            infile "\(directory)/signal.raw"
            format "raw"
        }
        """.write(toFile: configuration, atomically: true, encoding: .utf8)
        return (directory, configuration)
    }

    @Test("a tone captured through libasound2 lights the receiver's matching lamp", arguments: [(60.0, 0), (1000, 1)])
    func captureThroughFilePlugin(frequency: Double, band: Int) async throws {
        let (directory, configuration) = try makeTestSignal(frequency: frequency, seconds: 4)
        let port = Int.random(in: 40_001...50_000)
        let environment = steadyLamps.merging(["ALSA_CONFIG_PATH": "/usr/share/alsa/alsa.conf:\(configuration)"]) { $1 }
        async let receiver = ExecutableTests.run(
            ["receive", "--bind", "127.0.0.1", "--port", "\(port)", "--output", "stdout"], directory: directory,
            signal: SIGTERM, after: 3)
        _ = await eventually(within: .seconds(3)) { isListening(port: port) }
        let sender = try await ExecutableTests.run(
            [
                "send", "--input", "testsignal", "--host", "127.0.0.1", "--port", "\(port)", "--verbose", "--delay",
                "20",
            ],
            directory: directory,
            environment: environment, signal: SIGTERM, after: 2)
        let received = try await receiver
        #expect(sender.status == 0, "\(sender.stderr)")
        #expect(sender.stderr.contains("ALSA testsignal (48000 Hz, stereo)"), "\(sender.stderr)")
        // Delayed, the frames are timed by what the device says it captured beyond each read.
        #expect(sender.stderr.contains(" ms (snd_pcm_delay)"), "\(sender.stderr)")
        let frames = received.stdout.split(separator: "\n").map {
            $0.split(separator: " ").dropFirst().compactMap { Int($0) }
        }
        #expect(frames.count >= 100, "about 100 frames per second: \(frames.count)")
        let settled = frames.dropFirst(60).dropLast(2)
        #expect(!settled.isEmpty)
        for frame in settled {
            #expect(frame[band] >= 200, "\(frame)")
            for other in 0..<3 where other != band { #expect(frame[other] <= 10, "\(frame)") }
        }
    }

    @Test("a device that does not exist gives one line with the devices that do, and status 1")
    func missingDevice() async throws {
        let run = try await ExecutableTests.run(["send", "--input", "hw:9,0", "--quiet"])
        #expect(run.status == 1)
        #expect(run.stderr.hasPrefix("lightorgan: ALSA device hw:9,0 does not exist"), "\(run.stderr)")
        #expect(!run.stderr.contains("ALSA lib "), "alsa-lib's own messages stay off stderr")
        #expect(run.stderr.split(separator: "\n").count == 1)
    }
}

/// `input: auto` (the default) and `input: monitor` without a sound server. The test against a real PulseAudio daemon is
/// Tests/System/test_monitor.py: a test fixture manages the daemon's processes more simply.
///
/// What they say depends on whether `pactl` (pulseaudio-utils, an optional package) is there: each test runs once with
/// this machine's PATH, expecting the message for the case the machine is in, and once with a PATH without `pactl`, so
/// that both messages are checked on a machine that has it and the missing-pactl one on a machine that has not.
@Suite("Monitor input")
struct MonitorInputTests {
    /// The PATH a test runs the sender with.
    enum Path: String, CaseIterable, CustomTestStringConvertible {
        case thisMachine = "this machine's PATH"
        case withoutPactl = "a PATH without pactl"
        var testDescription: String { rawValue }

        /// The PATH value: this process's, or an empty folder of its own.
        func value() throws -> String {
            switch self {
            case .thisMachine:
                return ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
            case .withoutPactl:
                let empty = FileManager.default.temporaryDirectory.appendingPathComponent("nopactl-\(UUID())").path
                try FileManager.default.createDirectory(atPath: empty, withIntermediateDirectories: true)
                return empty
            }
        }
    }

    /// Whether an executable `pactl` is in a folder of `path`, as the sender looks for it.
    static func hasPactl(_ path: String) -> Bool {
        path.split(separator: ":").contains { access("\($0)/pactl", X_OK) == 0 }
    }

    /// Runs `lightorgan ARGUMENTS` with no sound server to answer and PATH `path`.
    static func runWithoutServer(_ arguments: [String], path: String) async throws -> ExecutableTests.Run {
        let runtime = FileManager.default.temporaryDirectory.appendingPathComponent("nopulse-\(UUID())").path
        try FileManager.default.createDirectory(atPath: runtime, withIntermediateDirectories: true)
        return try await ExecutableTests.run(
            arguments, environment: ["XDG_RUNTIME_DIR": runtime, "PULSE_SERVER": "unix:\(runtime)/none", "PATH": path])
    }

    @Test(
        "says so and names what works when no sound server runs, or what to install without pactl",
        arguments: Path.allCases)
    func noServer(path: Path) async throws {
        let value = try path.value()
        let run = try await Self.runWithoutServer(["send", "--input", "monitor", "--quiet"], path: value)
        #expect(run.status == 1)
        #expect(run.stderr.split(separator: "\n").count == 1, "\(run.stderr)")
        if Self.hasPactl(value) {
            #expect(
                run.stderr.hasPrefix("lightorgan: input monitor: no PipeWire or PulseAudio server answers"),
                "\(run.stderr)")
            #expect(run.stderr.contains("--input -"), "\(run.stderr)")
        } else {
            #expect(
                run.stderr.hasPrefix("lightorgan: input monitor records what this machine plays and needs pactl"),
                "\(run.stderr)")
            #expect(run.stderr.contains("apt install pulseaudio-utils"), "\(run.stderr)")
        }
    }

    @Test(
        "the default input says in one line that nothing is playing, or what to install, and names every other input, at once",
        arguments: Path.allCases)
    func defaultInputWithoutServer(path: Path) async throws {
        let value = try path.value()
        let clock = ContinuousClock()
        let started = clock.now
        let run = try await Self.runWithoutServer(["send", "--host", "127.0.0.1", "--quiet"], path: value)
        let took = clock.now - started
        #expect(run.status == 1)
        if Self.hasPactl(value) {
            #expect(
                run.stderr.hasPrefix("lightorgan: input auto: no PipeWire or PulseAudio server answers"),
                "\(run.stderr)")
        } else {
            #expect(
                run.stderr.hasPrefix("lightorgan: input auto records what this machine plays and needs pactl"),
                "\(run.stderr)")
            #expect(run.stderr.contains("apt install pulseaudio-utils"), "\(run.stderr)")
        }
        #expect(run.stderr.split(separator: "\n").count == 1, "\(run.stderr)")
        for alternative in ["--input demo", "--input default", "--input song.wav", "--input -"] {
            #expect(run.stderr.contains(alternative), "names \(alternative): \(run.stderr)")
        }
        #expect(took < .seconds(10), "nothing hangs: \(took)")
    }
}
