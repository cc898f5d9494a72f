import FoundationEssentials
public import LightOrganCore
import LightOrganPOSIX

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
/// samples the lamps see; no metadata pipe). The child is a ``SoundProgram``: started with the
/// first read, ended with the receiver, started again when it dies.
public final class ShairportSpeaker: OwnSoundInput, Sendable {
    public let format = AudioFormat(sampleRate: 44_100, channels: 2)
    public let label = "AirPlay"
    /// The name AirPlay clients show, and the port.
    public let name: String
    public let port: Int
    /// What `shairport-sync -V` says (`3.3.8-libdaemon-OpenSSL-Avahi-…`, `4.3.7-…`): its version first.
    public let build: String
    private let configurationPath: String
    private let program: SoundProgram

    /// Checks that shairport-sync is there and the port is free, writes the configuration into
    /// `folder` and starts the speaker. `log` gets the child's messages and restarts, one line each.
    ///
    /// - Throws: ``AudioInputError``, one line that says what to do.
    public init(name: String, port: Int, folder: String, log: @escaping @Sendable (String) -> Void) throws {
        (self.name, self.port) = (name, port)
        guard let path = SoundProgram.find("shairport-sync") else {
            throw AudioInputError(
                "receiver.sound = airplay needs shairport-sync: sudo apt install shairport-sync (its own service may stay disabled)"
            )
        }
        let answer = try? ChildProcess.run(path: path, arguments: ["-V"], errors: .merged, timeLimit: 10)
        build = String(decoding: answer?.output ?? [], as: UTF8.self).trimmingWhitespace()
        if let holder = Self.portInUse(port) {
            throw AudioInputError(
                "receiver.airplay.port \(port) is in use (\(holder)), most likely by Debian's own shairport-sync.service: "
                    + "sudo systemctl disable --now shairport-sync, or set receiver.airplay.port to a free port")
        }
        configurationPath = folder + "/shairport-sync.conf"
        // 3.x logs to syslog unless told -u; 4.x logs to its error output already, and warns about -u.
        program = SoundProgram(
            name: "shairport-sync", program: path,
            arguments: ["-c", configurationPath] + (Self.version(of: build).hasPrefix("3.") ? ["-u"] : []),
            channels: 2, log: log)
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
        try program.read(frames: frames, timeoutMilliseconds: timeoutMilliseconds)
    }

    public func close() {
        program.close()
    }

    /// The version alone (`4.3.7`), or `?` when it did not say.
    public var version: String { Self.version(of: build) }

    private static func version(of build: String) -> String {
        build.split(separator: "-").first.map(String.init) ?? "?"
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
