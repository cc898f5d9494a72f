/// Which discovered receiver the sender streams to, decided from what DNS-SD sees.
///
/// Rules, in order:
/// 1. With `sender.receiver_name` set, the receiver of that name (exact, else ignoring case), or none.
/// 2. Otherwise the receiver already chosen, while it is still there (no hopping between Pis).
/// 3. Otherwise the first by name.
///
/// A receiver seen on several interfaces or address families is one receiver: its IPv4
/// address is preferred (the receiver listens on `0.0.0.0` by default), then a global IPv6 one.
public struct ReceiverChoice: Sendable, Equatable {
    /// Every receiver seen, one per name, sorted by name.
    public var seen: [DiscoveredReceiver]
    /// The one to stream to, if any.
    public var chosen: DiscoveredReceiver?

    /// Decides from `sightings` (all resolved sightings), the wanted name (empty: any) and the
    /// name chosen before.
    public init(sightings: [DiscoveredReceiver], wanted: String, previous: String?) {
        var best: [String: DiscoveredReceiver] = [:]
        for sighting in sightings {
            if let known = best[sighting.name], Self.rank(known) <= Self.rank(sighting) { continue }
            best[sighting.name] = sighting
        }
        seen = best.values.sorted { ($0.name, $0.address) < ($1.name, $1.address) }
        if !wanted.isEmpty {
            chosen = best[wanted] ?? seen.first { $0.name.lowercased() == wanted.lowercased() }
        } else if let previous, let kept = best[previous] {
            chosen = kept
        } else {
            chosen = seen.first
        }
    }

    /// Lower is better: IPv4, then global IPv6, then link-local IPv6.
    private static func rank(_ receiver: DiscoveredReceiver) -> Int {
        if !receiver.isIPv6 { return 0 }
        return receiver.address.lowercased().hasPrefix("fe80:") ? 2 : 1
    }

    /// One log line that says what was seen and what was chosen (and how to choose another), or
    /// that the wanted receiver is not there.
    public func summary(wanted: String, service: DiscoveredService = .receiver) -> String {
        let list = seen.map(\.description).joined(separator: ", ")
        let noun = service.noun
        if !wanted.isEmpty {
            guard let chosen else {
                return seen.isEmpty
                    ? "no \(noun) \"\(wanted)\" on the network yet (\(service.nameSetting)); waiting for it"
                    : "no \(noun) \"\(wanted)\" on the network (\(service.nameSetting)); seen: \(list); waiting for it"
            }
            return "found \(noun) \(chosen.description)"
        }
        guard let chosen else {
            return "no \(noun) on the network yet; waiting for one (or set \(service.hostSetting))"
        }
        if seen.count == 1 { return "found \(noun) \(chosen.description)" }
        return
            "\(noun)s on the network: \(list); \(service.verb) \"\(chosen.name)\" (set \(service.nameSetting) to choose another)"
    }
}

/// What kind of service discovery looks for, and how to talk about it in logs.
public struct DiscoveredService: Sendable, Equatable {
    /// The DNS-SD service type, e.g. `_lightorgan._tcp`.
    public var type: String
    /// What one is called: `receiver`, `WLED device`.
    public var noun: String
    /// The setting that picks one by name.
    public var nameSetting: String
    /// The setting that names one by address instead.
    public var hostSetting: String
    /// What the sender does with the chosen one: `streaming to`.
    public var verb: String

    /// lightorgan receivers (`_lightorgan._tcp`).
    public static let receiver = DiscoveredService(
        type: ServiceName.serviceType, noun: "receiver", nameSetting: "sender.receiver_name",
        hostSetting: "sender.host",
        verb: "streaming to")
    /// WLED devices, which announce themselves as `_wled._tcp` (their web server's port).
    public static let wled = DiscoveredService(
        type: "_wled._tcp", noun: "WLED device", nameSetting: "?name= in the target",
        hostSetting: "the device's address in the target",
        verb: "driving")
}
