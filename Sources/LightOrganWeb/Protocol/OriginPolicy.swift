import LightOrganCore

/// Whether a WebSocket upgrade comes from the receiver's own page (no cross-site WebSocket hijacking).
///
/// Browsers send `Origin` with every WebSocket handshake and scripts cannot change it. The page's
/// sockets are opened by the page itself, so their Origin is `https://` + the `Host` the browser
/// asked for. Anything else — another site, a file, `null`, plain http, no Origin at all — is refused
/// before the upgrade: a page elsewhere on the web cannot read the lamps or use a stored secret.
public enum OriginPolicy {
    /// Whether `origin` (the `Origin` header) matches `host` (the `Host` header) over HTTPS.
    public static func allows(origin: String?, host: String?) -> Bool {
        guard let origin, let host, !host.isEmpty, host.utf8.count <= 255 else { return false }
        return origin.lowercased() == "https://" + host.lowercased()
            || origin.lowercased() == "https://" + Self.withoutDefaultPort(host.lowercased())
    }

    /// `host:443` written as browsers write the origin: without the default port.
    private static func withoutDefaultPort(_ host: String) -> String {
        host.hasSuffix(":443") ? String(host.dropLast(4)) : host
    }
}
