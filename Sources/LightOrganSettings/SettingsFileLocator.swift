public import FoundationEssentials
import Glibc
public import LightOrganCore

/// Finds the settings file: `--config PATH`, else `$LIGHTORGAN_CONFIG`, else the first that exists
/// of `./lightorgan.yaml`, `$XDG_CONFIG_HOME/lightorgan/lightorgan.yaml` (or
/// `~/.config/lightorgan/lightorgan.yaml`) and `/etc/lightorgan/lightorgan.yaml`.
public struct SettingsFileLocator: Sendable {
    /// The process environment (for `LIGHTORGAN_CONFIG`, `XDG_CONFIG_HOME`, `HOME`).
    public var environment: [String: String]
    /// Tells whether a regular file exists at a path.
    public var fileExists: @Sendable (String) -> Bool

    public init(
        environment: [String: String] = ProcessInfo.processInfo.environment,
        fileExists: @escaping @Sendable (String) -> Bool = SettingsFileLocator.isFile
    ) {
        self.environment = environment
        self.fileExists = fileExists
    }

    /// Whether something other than a directory is at `path` (a file, or a link to one).
    public static func isFile(_ path: String) -> Bool {
        var status = stat()
        return stat(path, &status) == 0 && status.st_mode & S_IFMT != S_IFDIR
    }

    /// The places searched when no file is named, in order.
    public var searchPath: [String] {
        let configHome =
            environment["XDG_CONFIG_HOME"].flatMap { $0.isEmpty ? nil : $0 }
            ?? environment["HOME"].map { "\($0)/.config" }
        return ["lightorgan.yaml"] + (configHome.map { ["\($0)/lightorgan/lightorgan.yaml"] } ?? [])
            + ["/etc/lightorgan/lightorgan.yaml"]
    }

    /// The file to read, or nil when none is named and none of ``searchPath`` exists.
    ///
    /// - Throws: ``SettingsError`` when a file named by `--config` or `LIGHTORGAN_CONFIG` does not exist:
    ///   a file the user asked for is never skipped silently.
    public func locate(explicitPath: String?) throws(SettingsError) -> String? {
        if let explicitPath {
            guard fileExists(explicitPath) else {
                throw SettingsError("option --config: settings file \(explicitPath) does not exist")
            }
            return explicitPath
        }
        if let fromEnvironment = environment[SettingsCatalog.configEnvironmentVariable], !fromEnvironment.isEmpty {
            guard fileExists(fromEnvironment) else {
                throw SettingsError(
                    "environment \(SettingsCatalog.configEnvironmentVariable): settings file \(fromEnvironment) does not exist"
                )
            }
            return fromEnvironment
        }
        return searchPath.first(where: fileExists)
    }
}
