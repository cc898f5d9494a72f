#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Where the receiver keeps what it makes and learns at run time: the page's secret, its
/// self-signed certificate and the settings changed on the page (`page-settings.yaml`).
///
/// In order: `$STATE_DIRECTORY` (systemd's `StateDirectory=lightorgan`: `/var/lib/lightorgan`,
/// owned by the service user), `$XDG_STATE_HOME/lightorgan`, `~/.local/state/lightorgan`.
/// Files holding secrets are written mode 0600 in a directory made mode 0700.
public enum StateDirectory {
    /// The directory for this process's environment (not created).
    public static func path(environment: [String: String]) -> String {
        if let systemd = environment["STATE_DIRECTORY"], !systemd.isEmpty {
            // systemd may list several, separated by colons; ours is the first.
            return String(systemd.split(separator: ":").first ?? Substring(systemd))
        }
        if let xdg = environment["XDG_STATE_HOME"], xdg.hasPrefix("/") { return xdg + "/lightorgan" }
        let home = environment["HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? accountHome()
        return home + "/.local/state/lightorgan"
    }

    /// The home directory of the user we run as, from the password database ("/" when it has none).
    private static func accountHome() -> String {
        guard let entry = getpwuid(geteuid()), let directory = entry.pointee.pw_dir else { return "/" }
        return String(cString: directory)
    }

    /// The file the page writes its settings to, read after the settings file.
    public static func pageSettingsFile(environment: [String: String]) -> String {
        path(environment: environment) + "/page-settings.yaml"
    }

    /// Writes `text` to `path` readable by the owner only, through a temporary file and a rename
    /// (a crash never leaves half a file); makes the directory (0700) when missing.
    ///
    /// - Throws: ``StateDirectoryError`` naming the path and the system's reason.
    public static func writePrivate(_ text: String, to path: String) throws(StateDirectoryError) {
        let directory = path.lastIndex(of: "/").map { String(path[..<$0]) }.map { $0.isEmpty ? "/" : $0 } ?? "."
        let files = FileManager.default
        do {
            try files.createDirectory(
                atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            let temporary = path + ".new"
            let descriptor = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
            guard descriptor >= 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
            let bytes = Array(text.utf8)
            var written = 0
            while written < bytes.count {
                let count = bytes[written...].withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
                if count < 0, errno == EINTR { continue }
                guard count > 0 else {
                    let code = errno
                    close(descriptor)
                    throw POSIXError(POSIXErrorCode(rawValue: code) ?? .EIO)
                }
                written += count
            }
            guard fsync(descriptor) == 0, close(descriptor) == 0 else {
                throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO)
            }
            guard rename(temporary, path) == 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        } catch {
            throw StateDirectoryError(
                "\(path): cannot be written (\(SystemErrorText.reason(of: error))); the receiver keeps its state in \(directory) — make it writable for the user it runs as, or set STATE_DIRECTORY"
            )
        }
    }
}

/// A state file that could not be written, in one line.
public struct StateDirectoryError: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}
