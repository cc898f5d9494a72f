/// A Bluetooth name as the log, the status and the page show it: a phone chooses its own name, and may put
/// anything in it (control characters, escape sequences, hundreds of bytes).
public enum PhoneName {
    /// The longest name shown, characters (BlueZ's own limit is 248 bytes).
    public static let longest = 64

    /// `name` with every control character (C0, DEL, C1: a terminal's escape sequences, new lines) made a
    /// space, runs of white space made one, trimmed, cut to ``longest`` characters; `?` when nothing is left.
    public static func shown(_ name: String) -> String {
        var shown = ""
        var lastWasSpace = true
        for scalar in name.unicodeScalars {
            let isControl = scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value)
            if isControl || scalar.properties.isWhitespace {
                if !lastWasSpace { shown.unicodeScalars.append(" ") }
                lastWasSpace = true
            } else {
                shown.unicodeScalars.append(scalar)
                lastWasSpace = false
            }
        }
        shown = shown.trimmingWhitespace()
        if shown.count > longest { shown = String(shown.prefix(longest)) + "…" }
        return shown.isEmpty ? "?" : shown
    }
}
