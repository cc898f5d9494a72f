/// A receiver's address as written in `sender.hosts`: `pi.local`, `192.168.1.20:8181`,
/// `[fe80::1%wlan0]:8181` or a bare IPv6 address.
public struct Endpoint: Sendable, Hashable, CustomStringConvertible {
    /// Host name or address (IPv6 without brackets).
    public var host: String
    /// TCP port, nil when the entry names none (then `sender.port` applies).
    public var port: Int?

    public init(host: String, port: Int?) {
        self.host = host
        self.port = port
    }

    /// Parses one entry; nil when it is empty, has spaces or a port outside 1…65535.
    public init?(parsing text: String) {
        guard !text.isEmpty, !text.contains(where: \.isWhitespace) else { return nil }
        if text.hasPrefix("[") {
            // [v6] or [v6]:port
            guard let close = text.firstIndex(of: "]") else { return nil }
            let host = String(text[text.index(after: text.startIndex)..<close])
            let rest = text[text.index(after: close)...]
            guard !host.isEmpty else { return nil }
            if rest.isEmpty {
                self.init(host: host, port: nil)
                return
            }
            guard rest.hasPrefix(":"), let port = Int(rest.dropFirst()), (1...65535).contains(port) else { return nil }
            self.init(host: host, port: port)
            return
        }
        let colons = text.filter { $0 == ":" }.count
        if colons == 1, let colon = text.firstIndex(of: ":") {
            let host = String(text[..<colon])
            guard !host.isEmpty, let port = Int(text[text.index(after: colon)...]), (1...65535).contains(port) else {
                return nil
            }
            self.init(host: host, port: port)
        } else {
            self.init(host: text, port: nil)  // a name, an IPv4 address, or a bare IPv6 address
        }
    }

    /// `host:port` with brackets around an IPv6 address.
    public var description: String {
        let shown = host.contains(":") ? "[\(host)]" : host
        return port.map { "\(shown):\($0)" } ?? shown
    }
}
