/// The choices Home Assistant's selects offer: fixed lists, with the setting's value now added when it is
/// not one of them (a select's state must be one of its options).
public enum HomeOptions {
    /// Palettes offered by name of their colours (``Palette/init(parsing:)`` reads each), the standard first.
    public static let palettes = [
        "red, green, blue", "red, amber, white", "orange, yellow, white", "purple, magenta, cyan", "blue, cyan, white",
        "red, magenta, blue",
    ]

    /// The sound sources to offer: network, AirPlay, Bluetooth and Snapcast (the server DNS-SD finds) always; each capture device the receiver found (ALSA
    /// names, as `receiver.sound` takes them); and `current`, the setting's value now (a pipe the settings file
    /// names, or a device not found today), when not among them. Nothing else: a command may name only these,
    /// so nothing from the broker names a path.
    public static func sounds(captureDevices: [String], current: String) -> [String] {
        adding(current, to: ["network", "airplay", "bluetooth", "snapcast"] + captureDevices)
    }

    /// ``palettes`` and `current` when it is not one of them.
    public static func palettes(current: String) -> [String] {
        adding(current, to: palettes)
    }

    private static func adding(_ current: String, to list: [String]) -> [String] {
        var options: [String] = []
        for option in list where !options.contains(option) { options.append(option) }
        if !current.isEmpty, !options.contains(current) { options.append(current) }
        return options
    }
}
