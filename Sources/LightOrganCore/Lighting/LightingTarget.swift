/// A lighting device on the LAN as written in `sender.hosts` or `receiver.forward`:
/// `sacn://192.168.1.60`, `sacn://multicast`, `artnet://10.0.0.255`, `ddp://wled-kitchen.local`,
/// `ddp://auto`, optionally with a port and settings after `?`
/// (`sacn://192.168.1.60:5568?rate=30&priority=120&universe=2&layout=rgb`).
///
/// The settings after `?` are of two kinds: the target's own (`rate`, `priority`, `sync`, `name`,
/// `interface`), and
/// those of the one fixture the target drives when no `fixtures:` entry names it (`universe`,
/// `address`, `layout`, `pixels`, `gamma`), validated with the fixture (``Fixture``).
public struct LightingTarget: Sendable, Hashable, CustomStringConvertible {
    /// What it speaks.
    public var kind: LightingProtocol
    /// Host name or address (IPv6 without brackets), or one of the words ``automatic`` (DDP and
    /// sACN: the first WLED device found by DNS-SD; Art-Net: every node that answers ArtPoll),
    /// ``multicast`` (sACN: 239.255.hi.lo of each universe) and ``broadcast`` (Art-Net:
    /// 255.255.255.255, or the broadcast address of ``interface``).
    public var host: String
    /// UDP port, 1…65535.
    public var port: Int
    /// Packets per second at most, 1…``maximumRate``; the newest frame wins.
    public var rate: Int
    /// sACN: the priority receivers merge sources by, 0…200 (100 is the standard default).
    public var priority: Int
    /// With host ``automatic``: the DNS-SD name of the WLED device to use (empty: the first found).
    public var deviceName: String
    /// sACN: the universe whose E1.31 synchronization packets make the receivers show every
    /// universe of a frame at once (1…63999); nil: no synchronization (the data packets carry 0).
    public var syncUniverse: Int?
    /// The network interface (`eth0`) multicast, broadcast and ArtPoll leave by, and that unicast
    /// is bound to when written after `?`; empty: the one the routing table picks.
    public var interface: String
    /// Fixture settings given after `?` (`universe`, `address`, `layout`, `pixels`, `gamma`), as text.
    public var fixtureFields: [String: String]

    /// The host word that finds a WLED device by DNS-SD.
    public static let automatic = "auto"
    /// The sACN host word for multicast to each universe's group.
    public static let multicast = "multicast"
    /// The Art-Net host word for the limited broadcast address.
    public static let broadcast = "broadcast"
    /// The longest network interface name Linux allows (IFNAMSIZ − 1).
    public static let longestInterfaceName = 15
    /// The fastest a target may be driven, packets per second.
    public static let maximumRate = 250
    /// The fixture settings that may follow `?`.
    public static let fixtureFieldNames = ["universe", "address", "layout", "pixels", "gamma"]
    /// What a target looks like, for messages.
    public static let allowedForm =
        "sacn://HOST, artnet://HOST or ddp://HOST (HOST: a name, an address, auto; sacn://multicast, "
        + "artnet://broadcast), optionally :PORT and ?rate=N&interface=NAME (sACN: &priority=N&sync=N) "
        + "and one fixture's universe=N&address=N&layout=L&pixels=N&gamma=G"

    /// Whether `text` is written as a lighting target (it has a scheme), not a receiver's host.
    public static func looksLikeTarget(_ text: String) -> Bool { text.contains("://") }

    /// Parses one target.
    ///
    /// - Throws: ``SettingProblemText`` saying what is wrong and what is allowed.
    public init(parsing text: String) throws(SettingProblemText) {
        guard let schemeEnd = text.firstRange(of: "://") else {
            throw SettingProblemText("`\(text)` is not a lighting target; allowed: \(Self.allowedForm)")
        }
        let scheme = text[..<schemeEnd.lowerBound].lowercased()
        guard let kind = LightingProtocol(rawValue: scheme) else {
            throw SettingProblemText(
                "`\(text)` has the unknown scheme \(scheme)://; allowed: sacn://, artnet://, ddp:// (or a receiver's host[:port] without a scheme)"
            )
        }
        var rest = String(text[schemeEnd.upperBound...])
        var query = ""
        if let mark = rest.firstIndex(of: "?") {
            query = String(rest[rest.index(after: mark)...])
            rest = String(rest[..<mark])
        }
        if rest.hasSuffix("/") { rest.removeLast() }
        guard !rest.isEmpty, !rest.contains(where: { $0.isWhitespace || $0 == "/" }),
            let endpoint = Endpoint(parsing: rest)
        else {
            throw SettingProblemText("`\(text)` has no usable host; allowed: \(Self.allowedForm)")
        }
        self.kind = kind
        host = endpoint.host.lowercased() == Self.automatic ? Self.automatic : endpoint.host
        port = endpoint.port ?? kind.defaultPort
        rate = kind.defaultRate
        priority = 100
        deviceName = ""
        interface = ""
        fixtureFields = [:]
        if host.lowercased() == Self.multicast {
            guard kind == .sacn else {
                throw SettingProblemText(
                    "`\(text)`: multicast is sACN's; use \(kind)://ADDRESS (Art-Net: artnet://broadcast)")
            }
            host = Self.multicast
        }
        if host.lowercased() == Self.broadcast {
            guard kind == .artnet else {
                throw SettingProblemText(
                    "`\(text)`: broadcast is Art-Net's; use \(kind)://ADDRESS (sACN: sacn://multicast)")
            }
            host = Self.broadcast
        }
        for pair in query.split(separator: "&") where !pair.isEmpty {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false).map(String.init)
            let key = parts[0].lowercased()
            let value = parts.count == 2 ? parts[1] : ""
            switch key {
            case "rate":
                guard let rate = Int(value), (1...Self.maximumRate).contains(rate) else {
                    throw SettingProblemText(
                        "`\(text)`: rate=\(value) is out of range 1…\(Self.maximumRate) packets per second")
                }
                self.rate = rate
            case "priority" where kind == .sacn:
                guard let priority = Int(value), (0...200).contains(priority) else {
                    throw SettingProblemText("`\(text)`: priority=\(value) is out of range 0…200")
                }
                self.priority = priority
            case "sync" where kind == .sacn:
                guard let universe = Int(value), LightingProtocol.sacn.universes!.contains(universe) else {
                    throw SettingProblemText(
                        "`\(text)`: sync=\(value) is not a universe; allowed: 1…63999 (the universe of the synchronization packets)"
                    )
                }
                syncUniverse = universe
            case "name" where host == Self.automatic && kind != .artnet:
                deviceName = value.replacing("%20", with: " ")
            case "interface":
                guard Self.isInterfaceName(value) else {
                    throw SettingProblemText(
                        "`\(text)`: interface=\(value) is not a network interface's name; allowed: 1…\(Self.longestInterfaceName) characters without /, : or spaces (eth0, wlan0; `ip link` lists them)"
                    )
                }
                interface = value
            case "universe" where kind == .ddp:
                throw SettingProblemText(
                    "`\(text)`: universe does not apply to DDP, which has one byte space per device; allowed after ?: \(allowedKeys.joined(separator: ", "))"
                )
            case _ where Self.fixtureFieldNames.contains(key):
                fixtureFields[key] = value
            default:
                let why =
                    key == "priority" || key == "sync"
                    ? " (\(key) is sACN's)" : key == "name" ? " (name picks a WLED device of \(kind)://auto)" : ""
                throw SettingProblemText(
                    "`\(text)`: unknown setting `\(key)`\(why); allowed after ?: \(allowedKeys.joined(separator: ", "))"
                )
            }
        }
    }

    /// Takes `interface` (`lighting.interface`) when none is written after `?` and the target
    /// leaves by broadcast or multicast (`sacn://multicast`, `artnet://broadcast`, `artnet://auto`);
    /// a unicast target keeps the link its route picks.
    public mutating func defaultInterface(_ interface: String) {
        guard self.interface.isEmpty,
            host == Self.multicast || host == Self.broadcast || (kind == .artnet && isDiscovered)
        else { return }
        self.interface = interface
    }

    /// The keys that may follow `?` for this target.
    public var allowedKeys: [String] {
        ["rate", "interface"] + (kind == .sacn ? ["priority", "sync"] : [])
            + (host == Self.automatic && kind != .artnet ? ["name"] : [])
            + Self.fixtureFieldNames.filter { !(kind == .ddp && $0 == "universe") }
    }

    /// Whether `name` can be a Linux network interface's name (`eth0`, `enp3s0`, `wlan0`).
    public static func isInterfaceName(_ name: String) -> Bool {
        (1...longestInterfaceName).contains(name.utf8.count) && name != "." && name != ".."
            && !name.contains { $0.isWhitespace || $0 == "/" || $0 == ":" || !$0.isASCII }
    }

    /// `sacn://192.168.1.60:5568`: what identifies the device (fixtures name their target by it;
    /// the settings after `?` do not count).
    public var address: String {
        let shown = host.contains(":") ? "[\(host)]" : host
        return "\(kind)://\(shown.lowercased()):\(port)"
    }

    /// True when the device is found by DNS-SD (`ddp://auto`).
    public var isDiscovered: Bool { host == Self.automatic }

    /// `sACN sacn://192.168.1.60:5568`, for logs.
    public var description: String {
        isDiscovered && !deviceName.isEmpty ? "\(address) (\"\(deviceName)\")" : address
    }
}

/// What is wrong with a value, as the rest of a message after `key = value`; public so that the
/// lighting types can say it from their own parsers.
public struct SettingProblemText: Error, Sendable, Equatable, CustomStringConvertible {
    public var text: String
    public init(_ text: String) { self.text = text }
    public var description: String { text }
}
