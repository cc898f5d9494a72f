/// DNS-SD instance names of receivers: the default, and the next one to try after a conflict.
public enum ServiceName {
    /// The DNS-SD service type of a lightorgan receiver.
    public static let serviceType = "_lightorgan._tcp"

    /// The longest instance name DNS-SD allows, in UTF-8 bytes.
    public static let maximumLength = 63

    /// The name to try when `name` is taken on the network, the way Bonjour does it:
    /// `stage` → `stage (2)`, `stage (2)` → `stage (3)`. The result is at most ``maximumLength``
    /// bytes (the base is shortened at a character boundary to make room for the suffix).
    public static func alternative(to name: String) -> String {
        var base = Substring(name)
        var number = 2
        if name.hasSuffix(")"), let open = name.lastIndex(of: "("),
            open > name.startIndex, name[name.index(before: open)] == " ",
            let current = Int(name[name.index(after: open)..<name.index(before: name.endIndex)]), current >= 2
        {
            base = name[..<name.index(before: open)]
            number = current + 1
        }
        let suffix = " (\(number))"
        while base.utf8.count + suffix.utf8.count > maximumLength, !base.isEmpty { base = base.dropLast() }
        return base + suffix
    }

    /// The name a receiver publishes when `receiver.name` is empty: the host name without its domain.
    public static func defaultName(hostName: String) -> String {
        let short = hostName.split(separator: ".").first.map(String.init) ?? ""
        return short.isEmpty ? "lightorgan" : String(short.utf8.prefix(maximumLength)) ?? "lightorgan"
    }

    /// `name` as an identifier other programs take (an MQTT topic level, a Snapcast client id): letters, digits,
    /// `-` and `_` kept (lowercased), any run of other characters one `-`; `receiver` when nothing is left.
    /// "Living room" → `living-room`.
    public static func slug(_ name: String) -> String {
        var slug = ""
        for scalar in name.lowercased().unicodeScalars {
            if ("a"..."z").contains(scalar) || ("0"..."9").contains(scalar) || scalar == "-" || scalar == "_" {
                slug.unicodeScalars.append(scalar)
            } else if !slug.isEmpty, !slug.hasSuffix("-") {
                slug += "-"
            }
        }
        while slug.hasSuffix("-") { slug.removeLast() }
        return slug.isEmpty ? "receiver" : slug
    }
}
