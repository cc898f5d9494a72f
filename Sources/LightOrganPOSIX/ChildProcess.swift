import LightOrganCore
#if canImport(Glibc)
public import Glibc
#elseif canImport(Darwin)
public import Darwin
#endif

/// A program run beside us (`parec`, `pactl`, `openssl`) with `posix_spawn`: standard input from
/// /dev/null, standard output into a pipe we read, its error output into the same pipe, a pipe
/// of its own, or /dev/null.
///
/// The child starts with no signal blocked and SIGPIPE, SIGTERM and SIGINT at their defaults,
/// whichever thread of ours started it (Swift's worker threads block some), and with no other
/// descriptor of ours open. It is reaped exactly once: ``kill()`` after ``wait()`` never hits a
/// process that reused the number.
public final class ChildProcess: Sendable {
    /// Where the child's error output goes.
    public enum ErrorOutput: Sendable {
        /// /dev/null.
        case discarded
        /// The standard output's pipe, interleaved as written.
        case merged
        /// A pipe of its own, ``errorDescriptor``.
        case separate
    }

    /// How the child ended.
    public enum Termination: Equatable, Sendable {
        /// It exited with this status (0…255).
        case exited(Int32)
        /// A signal ended it (SIGKILL from ``kill()``, or another).
        case signalled(Int32)
    }

    /// The child's process id.
    public let processIdentifier: pid_t

    /// Gives the child nice `value` (see ``DedicatedThread/setNice(_:)``); false when not allowed.
    @discardableResult
    public func setNice(_ value: CInt) -> Bool {
        DedicatedThread.setNice(value, of: id_t(processIdentifier))
    }
    /// The read end of the child's standard output; closed when this object goes.
    public let outputDescriptor: Int32
    /// The read end of the child's error output with ``ErrorOutput/separate``, else nil.
    public let errorDescriptor: Int32?
    /// The termination once reaped; reaping and killing happen under this lock.
    private let ending = ThreadCondition()
    private nonisolated(unsafe) var termination: Termination?

    /// Starts the program at `path` with `arguments` (not counting its name) and our environment.
    ///
    /// - Throws: ``ChildProcessError`` when it cannot be started (not there, not executable, no
    ///   memory or descriptors).
    public init(path: String, arguments: [String], errors: ErrorOutput = .discarded) throws(ChildProcessError) {
        var output: [Int32] = [-1, -1]
        var errorPipe: [Int32] = [-1, -1]
        guard Self.makePipe(&output) else { throw ChildProcessError(path: path, errno: errno) }
        if errors == .separate, !Self.makePipe(&errorPipe) {
            let code = errno
            close(output[0])
            close(output[1])
            throw ChildProcessError(path: path, errno: code)
        }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_adddup2(&actions, output[1], 1)
        switch errors {
        case .discarded: posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        case .merged: posix_spawn_file_actions_adddup2(&actions, output[1], 2)
        case .separate: posix_spawn_file_actions_adddup2(&actions, errorPipe[1], 2)
        }
        // Descriptors of ours that lack close-on-exec (a library's, a test harness's) stay with us.
        _ = Self.closeFrom?(&actions, 3)
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var noSignals = sigset_t()
        sigemptyset(&noSignals)
        posix_spawnattr_setsigmask(&attributes, &noSignals)
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for signal in [SIGPIPE, SIGTERM, SIGINT] { sigaddset(&defaults, signal) }
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))

        let argv = ([path] + arguments).map { strdup($0) } + [nil]
        defer { for argument in argv { free(argument) } }
        var pid = pid_t()
        let status = posix_spawn(&pid, path, &actions, &attributes, argv, environ)
        close(output[1])
        if errors == .separate { close(errorPipe[1]) }
        guard status == 0 else {
            close(output[0])
            if errors == .separate { close(errorPipe[0]) }
            throw ChildProcessError(path: path, errno: status)
        }
        processIdentifier = pid
        outputDescriptor = output[0]
        errorDescriptor = errors == .separate ? errorPipe[0] : nil
    }

    deinit {
        close(outputDescriptor)
        if let errorDescriptor { close(errorDescriptor) }
    }

    /// Every byte the child writes to standard output until it closes it (usually: until it ends).
    public func readAllOutput() -> [UInt8] { Self.readAll(outputDescriptor) }

    /// Every byte of the child's separate error output (empty unless ``ErrorOutput/separate``).
    public func readAllErrors() -> [UInt8] { errorDescriptor.map(Self.readAll) ?? [] }

    /// At most `capacity` bytes of standard output as they come; empty at its end.
    public func readOutput(upTo capacity: Int = 4096) -> [UInt8] {
        var buffer = [UInt8](repeating: 0, count: capacity)
        while true {
            let count = read(outputDescriptor, &buffer, capacity)
            if count >= 0 { return Array(buffer.prefix(count)) }
            if errno != EINTR { return [] }
        }
    }

    /// Blocks until the child ends and returns how; the same answer on every call.
    public func wait() -> Termination {
        if let known = ending.withLock({ termination }) { return known }
        // Wait for the end without reaping, then reap under the lock that `kill` takes.
        var info = siginfo_t()
        while waitid(P_PID, id_t(processIdentifier), &info, WEXITED | WNOWAIT) == -1, errno == EINTR {}
        return ending.withLock {
            if let known = termination { return known }
            var status: Int32 = 0
            while waitpid(processIdentifier, &status, 0) == -1, errno == EINTR {}
            // WIFEXITED / WEXITSTATUS / WTERMSIG are macros Swift does not see.
            let ended: Termination = status & 0x7f == 0 ? .exited((status >> 8) & 0xff) : .signalled(status & 0x7f)
            termination = ended
            return ended
        }
    }

    /// Ends the child at once with SIGKILL (these tools have nothing to save), unless it was
    /// reaped already.
    public func kill() {
        ending.withLock {
            if termination == nil { Self.sendKill(to: processIdentifier) }
        }
    }

    /// Asks the child to end with SIGTERM (a daemon that deregisters itself: shairport-sync),
    /// unless it was reaped already.
    public func terminate() {
        ending.withLock {
            if termination == nil { Self.send(SIGTERM, to: processIdentifier) }
        }
    }

    /// Runs the program to its end: its status and output, killed after `timeLimit` seconds.
    ///
    /// - Returns: the termination with standard output (and error output unless `errors` is
    ///   ``ErrorOutput/discarded`` or ``ErrorOutput/separate``) and the separate error output.
    public static func run(
        path: String, arguments: [String], errors: ErrorOutput = .discarded, timeLimit: Double? = nil
    ) throws(ChildProcessError) -> (termination: Termination, output: [UInt8], errors: [UInt8]) {
        let child = try ChildProcess(path: path, arguments: arguments, errors: errors)
        if let timeLimit {
            DedicatedThread.start(named: "lightorgan child limit") { [child] in
                let deadline = MonotonicClock.nanoseconds() + Int64(timeLimit * 1e9)
                child.ending.withLock {
                    while child.termination == nil, MonotonicClock.nanoseconds() < deadline {
                        child.ending.wait(untilNanoseconds: deadline)
                    }
                    if child.termination == nil { Self.sendKill(to: child.processIdentifier) }
                }
            }
        }
        let output = child.readAllOutput()
        let errorOutput = child.readAllErrors()
        let termination = child.wait()
        child.ending.withLock { child.ending.signal() }
        return (termination, output, errorOutput)
    }

    private static func readAll(_ descriptor: Int32) -> [UInt8] {
        var all: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 16_384)
        while true {
            let count = read(descriptor, &buffer, buffer.count)
            if count > 0 {
                all += buffer.prefix(count)
            } else if count == 0 || errno != EINTR {
                return all
            }
        }
    }

    /// glibc's `posix_spawn_file_actions_addclosefrom_np` (2.34 and later), looked up at run time:
    /// Swift's Glibc module does not show GNU extensions.
    private static let closeFrom: (@convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32)? =
        {
            #if canImport(Glibc)
            guard let symbol = dlsym(dlopen(nil, RTLD_NOW), "posix_spawn_file_actions_addclosefrom_np") else {
                return nil
            }
            return unsafeBitCast(
                symbol, to: (@convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32).self)
            #else
            return nil
            #endif
        }()

    /// SIGKILL to `pid`.
    private static func sendKill(to pid: pid_t) { send(SIGKILL, to: pid) }

    /// `signal` to `pid` (the global `kill`, which the method of that name hides).
    private static func send(_ signal: Int32, to pid: pid_t) {
        #if canImport(Glibc)
        _ = Glibc.kill(pid, signal)
        #else
        _ = Darwin.kill(pid, signal)
        #endif
    }

    /// A pipe whose two ends close on exec (the child gets copies at 1 and 2 only).
    private static func makePipe(_ ends: inout [Int32]) -> Bool {
        // pipe2 is a GNU extension Swift's Glibc does not show; nothing of ours forks between the two calls.
        guard pipe(&ends) == 0 else { return false }
        for end in ends { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
        return true
    }
}

/// A program that could not be started.
public struct ChildProcessError: Error, CustomStringConvertible, Sendable {
    /// The program's path.
    public let path: String
    /// The system's error number.
    public let errno: Int32

    public var description: String { "cannot run \(path): \(String(cString: strerror(errno)))" }
}
