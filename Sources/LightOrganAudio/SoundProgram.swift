import FoundationEssentials
import LightOrganCore
import LightOrganPOSIX

#if canImport(Glibc)
import Glibc
#endif

/// A program whose standard output is the receiver's own sound (shairport-sync, snapclient: raw S16LE written in
/// real time), run as the receiver's child and kept running.
///
/// The child starts with the first read and ends with the thread that reads, even when the receiver is killed
/// (`setpriv --pdeathsig`); it keeps time as the receiver's own time-keeping threads do (nice −10). When it dies
/// on its own it is started again after a second, unless it died three times in a row within seconds of
/// starting: then reads throw, with its last words. Its error output goes to `log` a line at a time, through
/// `lines` (which may drop or reword a line, and sees every one); the last line shown is its last words.
final class SoundProgram: @unchecked Sendable {
    // @unchecked Sendable: `child` and `reader` change only on the reading thread, under `lock` (`close` takes
    // it too, from any thread).
    /// What the messages call it: `shairport-sync`.
    let name: String
    private let path: String
    private let arguments: [String]
    private let channels: Int
    private let log: @Sendable (String) -> Void
    private let lines: @Sendable (String) -> String?
    private let lock = ThreadCondition()
    private var child: ChildProcess?
    private var reader: DescriptorReader?
    private var closed = false
    private var quickDeaths = 0
    private var startedAt: Int64 = 0
    private let lastWords = LastWords()

    /// `program` (a path) with `arguments`, its output `channels` interleaved 16-bit samples. `lines` gets each
    /// line of its error output and returns what to log (nil: nothing).
    init(
        name: String, program: String, arguments: [String], channels: Int, log: @escaping @Sendable (String) -> Void,
        lines: @escaping @Sendable (String) -> String? = { $0 }
    ) {
        (self.name, self.channels, self.log, self.lines) = (name, channels, log, lines)
        if let setpriv = Self.deathSignalWrapper {
            // The program ends with the receiver, however the receiver ends. Where setpriv cannot run (the
            // service's sandbox, BusyBox's), the service's stop ends it with the rest of its control group, and
            // elsewhere its closed pipe does.
            path = setpriv
            self.arguments = ["--pdeathsig", "TERM", "--", program] + arguments
        } else {
            path = program
            self.arguments = arguments
        }
    }

    deinit {
        child?.kill()
    }

    /// As ``OwnSoundInput/read(frames:timeoutMilliseconds:)``.
    func read(frames: Int, timeoutMilliseconds: Int) throws -> [Int16]? {
        // Started by the reading thread, which lives as long as the input: the child's death signal follows the
        // thread that started it, not the process.
        let current = try lock.withLock { () throws -> DescriptorReader? in
            if !closed, child == nil { try start() }
            return closed ? nil : reader
        }
        guard let current else { return [] }
        guard let samples = try current.read(frames: frames, timeoutMilliseconds: timeoutMilliseconds) else {
            return nil  // nothing for the timeout: paused, or no client
        }
        if !samples.isEmpty { return samples }
        // The wake-up (close) or the child's end.
        let restarts = try lock.withLock { () throws -> Bool in
            guard let ended = child else { return false }
            guard !closed else {
                _ = ended.wait()  // ended by close(): reaped, its port free again, before the read ends
                return false
            }
            let termination = Self.describe(ended.wait())
            let words = lastWords.text
            let quick = MonotonicClock.nanoseconds() - startedAt < 5_000_000_000
            quickDeaths = quick ? quickDeaths + 1 : 0
            guard quickDeaths < 3 else {
                closed = true
                throw AudioInputError(
                    "\(name) \(termination) three times within seconds of starting\(words.isEmpty ? "" : ": \(words)")")
            }
            log("\(name) \(termination)\(words.isEmpty ? "" : ": \(words)"); starting it again")
            return true
        }
        guard restarts else { return [] }
        DedicatedThread.sleep(seconds: 1)
        try lock.withLock { if !closed { try start() } }
        return nil
    }

    /// Ends the program from any thread: a read waiting returns the end.
    func close() {
        lock.withLock {
            closed = true
            child?.terminate()
            reader?.close()
        }
    }

    private static func describe(_ termination: ChildProcess.Termination) -> String {
        switch termination {
        case .exited(let status): "exited with status \(status)"
        case .signalled(let signal): "was ended by signal \(signal)"
        }
    }

    /// Starts the child (with `lock` held).
    private func start() throws {
        let started: ChildProcess
        do {
            started = try ChildProcess(path: path, arguments: arguments, errors: .separate)
        } catch {
            throw AudioInputError("cannot start \(name): \(error)")
        }
        // At once, so that the threads it starts inherit it.
        started.setNice(DedicatedThread.timeKeepingNice)
        child = started
        startedAt = MonotonicClock.nanoseconds()
        reader = DescriptorReader(descriptor: started.outputDescriptor, owned: false, channels: channels, what: name)
        guard let errors = started.errorDescriptor else { return }
        let (words, log, lines, name) = (lastWords, log, lines, name)
        DedicatedThread.start(named: "lightorgan \(name) log") { [started] in
            _ = started  // keeps the descriptor open while it is read
            var line: [UInt8] = []
            var byte: UInt8 = 0
            while Glibc.read(errors, &byte, 1) == 1 {
                guard byte == 10 else {
                    line.append(byte)
                    continue
                }
                let text = String(decoding: line, as: UTF8.self).trimmingWhitespace()
                line.removeAll(keepingCapacity: true)
                guard !text.isEmpty, let shown = lines(text) else { continue }
                words.text = shown
                log("\(name): \(shown)")
            }
        }
    }

    /// util-linux's `setpriv`, when it can give a program a death signal here: nil where it is missing, is
    /// BusyBox's (no `--pdeathsig`), or fails. In the service's sandbox (no capabilities, no new privileges)
    /// util-linux's exits 127, "setpriv: activate capabilities: Operation not permitted", whatever it is asked.
    static let deathSignalWrapper: String? = {
        guard let setpriv = find("setpriv"), !isBusyBox(setpriv), let truth = find("true") else { return nil }
        let tried = try? ChildProcess.run(
            path: setpriv, arguments: ["--pdeathsig", "TERM", "--", truth], timeLimit: 5)
        return tried?.termination == .exited(0) ? setpriv : nil
    }()

    /// Whether `path` is a link to BusyBox (an applet of a minimal system).
    static func isBusyBox(_ path: String) -> Bool {
        guard let resolved = realpath(path, nil) else { return false }
        defer { free(resolved) }
        return String(cString: resolved).hasSuffix("/busybox")
    }

    /// The path of `name` on PATH (with /usr/sbin and /sbin), nil when it is nowhere.
    static func find(_ name: String) -> String? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        let directories = path.split(separator: ":").map(String.init) + ["/usr/sbin", "/sbin"]
        return directories.map { "\($0)/\(name)" }.first { access($0, X_OK) == 0 }
    }
}

/// The child's last line of error output, for the message when it ends.
private final class LastWords: @unchecked Sendable {
    private let lock = ThreadCondition()
    private var value = ""
    var text: String {
        get { lock.withLock { value } }
        set { lock.withLock { value = newValue } }
    }
}
