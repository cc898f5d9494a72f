/// Settings of the receiver's MQTT link to a home's hub (`mqtt.*`): off unless `mqtt.broker` names one.
public struct MQTTSettings: Sendable, Equatable {
    /// The broker: none (the default: no MQTT at all), found by DNS-SD, or an address.
    public var broker = MQTTBroker.none
    /// User name at the broker; empty: none.
    public var username = ""
    /// A file holding the broker's password (its first line); empty: none. The password itself is never
    /// in the settings file, nor in a log.
    public var passwordFile = ""
    /// PEM certificates to trust for `mqtts://`; empty: the system's.
    public var caFile = ""
    /// The receiver's own topics start with this; empty: `lightorgan/<receiver name>` (``MQTTTopic/defaultBase(name:)``).
    public var topic = ""
    /// Home Assistant's discovery prefix.
    public var discoveryPrefix = "homeassistant"

    public init() {}

    /// Whether the receiver connects to a broker at all.
    public var isEnabled: Bool { broker != .none }
}

/// Where the MQTT broker is (`mqtt.broker`).
public enum MQTTBroker: Sendable, Equatable, CustomStringConvertible {
    /// No MQTT.
    case none
    /// The broker the local network announces by DNS-SD (`_mqtt._tcp`), without TLS.
    case auto
    /// `mqtt://host[:port]` (1883 by default) or, with `tls`, `mqtts://host[:port]` (8883).
    case address(host: String, port: Int, tls: Bool)

    /// What the setting allows, for messages.
    public static let allowed =
        "empty (no MQTT), auto (the broker found by DNS-SD, _mqtt._tcp), mqtt://host[:port] (1883) or mqtts://host[:port] (8883, TLS)"

    /// Reads the setting's text; nil when it is none of the allowed forms.
    public init?(parsing raw: String) {
        let text = raw.trimmingWhitespace()
        let lowered = text.lowercased()
        if lowered.isEmpty || lowered == "none" {
            self = .none
            return
        }
        if lowered == "auto" {
            self = .auto
            return
        }
        let tls: Bool
        if lowered.hasPrefix("mqtt://") {
            tls = false
        } else if lowered.hasPrefix("mqtts://") {
            tls = true
        } else {
            return nil
        }
        var rest = String(text.drop(while: { $0 != ":" }).dropFirst(3))
        if rest.hasSuffix("/") { rest.removeLast() }
        guard !rest.contains("/"), !rest.contains("@"), let endpoint = Endpoint(parsing: rest) else { return nil }
        self = .address(host: endpoint.host, port: endpoint.port ?? (tls ? 8883 : 1883), tls: tls)
    }

    public var description: String {
        switch self {
        case .none: ""
        case .auto: "auto"
        case .address(let host, let port, let tls):
            "\(tls ? "mqtts" : "mqtt")://\(host.contains(":") ? "[\(host)]" : host):\(port)"
        }
    }
}

/// MQTT topic names as the receiver uses them.
public enum MQTTTopic {
    /// Longest topic prefix the settings allow, in UTF-8 bytes (a topic may hold 65,535; the receiver adds a few
    /// levels of its own).
    public static let longestPrefix = 200

    /// What a topic prefix allows, for messages.
    public static let allowedLevels =
        "topic levels separated by / (none empty, the first not starting with $) without +, #, spaces or control characters, at most \(longestPrefix) bytes"
    /// What `mqtt.topic` allows, for messages.
    public static let allowed = "empty (lightorgan/<receiver name>), or " + allowedLevels

    /// Whether `text` can start the receiver's topics: levels separated by `/`, none empty, without the wildcards
    /// `+` and `#`, spaces or control characters, not starting with `$` (the broker's own topics).
    public static func isPrefix(_ text: String) -> Bool {
        guard !text.isEmpty, text.utf8.count <= longestPrefix, !text.hasPrefix("$") else { return false }
        let levels = text.split(separator: "/", omittingEmptySubsequences: false)
        return levels.allSatisfy { !$0.isEmpty }
            && !text.unicodeScalars.contains {
                $0 == "+" || $0 == "#" || $0.properties.isWhitespace || $0.properties.generalCategory == .control
            }
    }

    /// `lightorgan/` and `name` as one topic level (``ServiceName/slug(_:)``).
    public static func defaultBase(name: String) -> String {
        "lightorgan/" + ServiceName.slug(name)
    }
}
