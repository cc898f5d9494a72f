import FoundationEssentials
public import LightOrganCore

#if canImport(Glibc)
import Glibc
#endif

/// The receiver as an AirPlay speaker (`receiver.sound: airplay`): shairport-sync runs as its
/// child with the stdout backend, and its standard output (raw S16LE, 44.1 kHz, stereo, written in
/// real time) is this input.
///
/// shairport-sync is Debian's (`sudo apt install shairport-sync`); its own service is left alone:
/// when it holds the port, the receiver says so and starts no second one. The configuration is
/// written to a file of its own (volume control off, so the client's volume does not scale the
/// samples the lamps see; no metadata pipe). The child starts with the first read, and ends with
/// the thread that reads, even when the receiver is killed (`setpriv --pdeathsig`); when it dies on its own it is started again after a second, unless it
/// died three times in a row within seconds of starting (then reads throw, with its last words).
public final class ShairportSpeaker: OwnSoundInput, @unchecked Sendable {
    // @unchecked Sendable: `child` and `reader` change only on the reading thread, under `lock`
    // (`close` takes it too, from any thread).
    public let format = AudioFormat(sampleRate: 44_100, channels: 2)
    public let label = "AirPlay"
    /// The name AirPlay clients show, and the port.
    public let name: String
    public let port: Int
    private let program: String
    /// What `shairport-sync -V` says (`3.3.8-libdaemon-OpenSSL-Avahi-…`, `4.3.7-…`): its version first.
    public let build: String
    private let configurationPath: String
    private let log: @Sendable (String) -> Void
    private let lock = ThreadCondition()
    private var child: ChildProcess?
    private var reader: DescriptorReader?
    private var closed = false
    private var quickDeaths = 0
    private var startedAt: Int64 = 0
    private let lastWords = LastWords()

    /// Checks that shairport-sync is there and the port is free, writes the configuration into
    /// `folder` and starts the speaker. `log` gets the child's messages and restarts, one line each.
    ///
    /// - Throws: ``AudioInputError``, one line that says what to do.
    public init(name: String, port: Int, folder: String, log: @escaping @Sendable (String) -> Void) throws {
        (self.name, self.port, self.log) = (name, port, log)
        guard let program = Self.find("shairport-sync") else {
            throw AudioInputError(
                "receiver.sound = airplay needs shairport-sync: sudo apt install shairport-sync (its own service may stay disabled)"
            )
        }
        self.program = program
        let answer = try? ChildProcess.run(path: program, arguments: ["-V"], errors: .merged, timeLimit: 10)
        build = String(decoding: answer?.output ?? [], as: UTF8.self).trimmingWhitespace()
        if let holder = Self.portInUse(port) {
            throw AudioInputError(
                "receiver.airplay.port \(port) is in use (\(holder)), most likely by Debian's own shairport-sync.service: "
                    + "sudo systemctl disable --now shairport-sync, or set receiver.airplay.port to a free port")
        }
        configurationPath = folder + "/shairport-sync.conf"
        var made = ""
        for component in folder.split(separator: "/") {  // the state folder and its parents, as needed
            made += "/\(component)"
            mkdir(made, 0o700)
        }
        let text = Self.configuration(name: name, port: port)
        guard Self.write(text, to: configurationPath) else {
            throw AudioInputError(
                "receiver.sound = airplay: cannot write \(configurationPath): \(String(cString: strerror(errno)))")
        }
    }

    deinit {
        child?.kill()
    }

    /// The configuration shairport-sync is given: this name and port, the stdout backend, Avahi for
    /// mDNS, its D-Bus and MPRIS interfaces on the session bus (a service has none: they stay off),
    /// the client's volume ignored, metadata and MQTT off.
    public static func configuration(name: String, port: Int) -> String {
        let quoted = name.replacing("\\", with: "\\\\").replacing("\"", with: "\\\"")
        return """
            // Written by lightorgan for receiver.sound: airplay; made again at each start.
            general = {
              name = "\(quoted)";
              port = \(port);
              output_backend = "stdout";
              mdns_backend = "avahi";
              dbus_service_bus = "session";
              mpris_service_bus = "session";
              ignore_volume_control = "yes";
            };
            metadata = { enabled = "no"; };
            mqtt = { enabled = "no"; };

            """
    }

    public func read(frames: Int, timeoutMilliseconds: Int) throws -> [Int16]? {
        // Started by the reading thread, which lives as long as the speaker: the child's death
        // signal follows the thread that started it, not the process.
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
                    "shairport-sync \(termination) three times within seconds of starting\(words.isEmpty ? "" : ": \(words)")"
                )
            }
            log("shairport-sync \(termination)\(words.isEmpty ? "" : ": \(words)"); starting it again")
            return true
        }
        guard restarts else { return [] }
        DedicatedThread.sleep(seconds: 1)
        try lock.withLock { if !closed { try start() } }
        return nil
    }

    private static func describe(_ termination: ChildProcess.Termination) -> String {
        switch termination {
        case .exited(let status): "exited with status \(status)"
        case .signalled(let signal): "was ended by signal \(signal)"
        }
    }

    public func close() {
        lock.withLock {
            closed = true
            child?.terminate()
            reader?.close()
        }
    }

    /// Starts the child (with `lock` held).
    /// The version alone (`4.3.7`), or `?` when it did not say.
    public var version: String { build.split(separator: "-").first.map(String.init) ?? "?" }

    private func start() throws {
        // 3.x logs to syslog unless told -u; 4.x logs to its error output already, and warns about -u.
        var arguments = [program, "-c", configurationPath] + (version.hasPrefix("3.") ? ["-u"] : [])
        var path = program
        if let setpriv = Self.find("setpriv") {
            // The speaker ends with the receiver, however the receiver ends.
            path = setpriv
            arguments = ["--pdeathsig", "TERM", "--"] + arguments
        } else {
            arguments.removeFirst()
        }
        let started: ChildProcess
        do {
            started = try ChildProcess(path: path, arguments: arguments, errors: .separate)
        } catch {
            throw AudioInputError("cannot start shairport-sync: \(error)")
        }
        // It keeps the sound's time as the receiver's own time-keeping threads do (at once, so that the
        // threads it starts inherit it).
        started.setNice(DedicatedThread.timeKeepingNice)
        child = started
        startedAt = MonotonicClock.nanoseconds()
        reader = DescriptorReader(
            descriptor: started.outputDescriptor, owned: false, channels: 2, what: "shairport-sync")
        if let errors = started.errorDescriptor {
            let words = lastWords
            let log = log
            DedicatedThread.start(named: "lightorgan airplay log") { [started] in
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
                    guard !text.isEmpty else { continue }
                    words.text = text
                    log("shairport-sync: \(text)")
                }
            }
        }
    }

    /// The path of `name` on PATH (with /usr/sbin and /sbin), nil when it is nowhere.
    static func find(_ name: String) -> String? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        let directories = path.split(separator: ":").map(String.init) + ["/usr/sbin", "/sbin"]
        return directories.map { "\($0)/\(name)" }.first { access($0, X_OK) == 0 }
    }

    /// Whether TCP `port` is taken on this machine: nil when it can be bound, else what binding said.
    static func portInUse(_ port: Int) -> String? {
        let descriptor = socket(AF_INET6, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { return nil }
        defer { Glibc.close(descriptor) }
        var no: CInt = 0
        setsockopt(descriptor, CInt(IPPROTO_IPV6), IPV6_V6ONLY, &no, socklen_t(MemoryLayout<CInt>.size))
        var yes: CInt = 1
        setsockopt(descriptor, SOL_SOCKET, SO_REUSEADDR, &yes, socklen_t(MemoryLayout<CInt>.size))
        var address = sockaddr_in6()
        address.sin6_family = sa_family_t(AF_INET6)
        address.sin6_port = in_port_t(UInt16(port).bigEndian)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in6>.size))
            }
        }
        guard bound != 0, errno == EADDRINUSE else { return nil }
        return "address in use"
    }

    private static func write(_ text: String, to path: String) -> Bool {
        let descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { return false }
        defer { Glibc.close(descriptor) }
        let bytes = Array(text.utf8)
        return bytes.withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress, $0.count) } == bytes.count
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
