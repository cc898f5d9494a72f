import LightOrganCore

/// Where a plain-HTTP request that reached the page's port is sent: the same host, port and path over
/// HTTPS (`http://pi.local:8443/x` → `https://pi.local:8443/x`), built only from characters that are
/// safe in a `Location` header.
public enum HTTPSRedirect {
    /// The HTTPS address for `host` (a `Host` header: `name`, `name:port`, `[v6]:port`) and `uri` (the
    /// request target), or nil when the header holds anything but a host and a port.
    ///
    /// A target that is not a plain path (`//other`, absolute, spaces, bytes outside printable ASCII)
    /// becomes `/`: the redirect never leads off this receiver.
    public static func location(host: String?, uri: String) -> String? {
        guard let host, !host.isEmpty, host.utf8.count <= 255,
            host.utf8.allSatisfy({ isHostCharacter($0) })
        else { return nil }
        let plainPath =
            uri.hasPrefix("/") && !uri.hasPrefix("//") && uri.utf8.count <= 2048
            && uri.utf8.allSatisfy { (0x21...0x7e).contains($0) }
        return "https://\(host)\(plainPath ? uri : "/")"
    }

    /// Letters, digits, `.`, `-`, `:` (a port), `[` and `]` (an IPv6 address).
    private static func isHostCharacter(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"):
            true
        case UInt8(ascii: "."), UInt8(ascii: "-"), UInt8(ascii: ":"), UInt8(ascii: "["), UInt8(ascii: "]"):
            true
        default:
            false
        }
    }
}
