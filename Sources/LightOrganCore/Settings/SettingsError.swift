/// A setting that stops the command: one line that names the source, the key, the value and what
/// is allowed, e.g. `lightorgan.yaml: sender.port = 99999 is out of range 1…65535`.
///
/// Commands exit with status 2 on this error.
public struct SettingsError: Error, CustomStringConvertible, Equatable {
    /// The whole message, one line.
    public let description: String

    public init(_ message: String) {
        description = message
    }

    /// A value that is present but not allowed.
    public static func badValue(key: String, raw: RawSetting, problem: String) -> SettingsError {
        SettingsError("\(raw.source): \(key) = \(raw.value) \(problem)")
    }

    /// A key (or environment variable) the catalog does not know.
    public static func unknownKey(_ name: String, in source: SettingSource, closest: String?) -> SettingsError {
        let hint =
            closest.map { "did you mean \($0)?" }
            ?? "known keys: \(SettingsCatalog.keys.map(\.name).joined(separator: ", "))"
        return SettingsError("\(source): unknown key \(name); \(hint)")
    }
}
