import LightOrganCore

/// One place settings come from (the command-line options, the environment, the page's file, the
/// settings file), with the values it sets by catalog key name (`sender.port`).
///
/// ``SettingsLoader`` stacks them, the first one that sets a key giving its value; a key that none
/// sets takes its built-in default.
struct SettingLayer {
    /// A value as written: one scalar, or a list of scalars (a YAML sequence, for the keys that
    /// accept one).
    enum Value: Equatable {
        case single(String)
        case list([String])
    }

    /// The values this layer sets, by catalog key name.
    var values: [String: Value]
    /// Where a key's value came from, as messages name it (`option --port`, `environment
    /// LIGHTORGAN_SENDER_PORT`, the file's path).
    var source: (_ key: String) -> SettingSource

    /// The value this layer sets for `key` and where it came from; nil when it does not set it.
    func value(of key: String) -> (Value, SettingSource)? {
        values[key].map { ($0, source(key)) }
    }
}
