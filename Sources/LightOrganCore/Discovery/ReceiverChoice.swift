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
    public func summary(wanted: String) -> String {
        let list = seen.map(\.description).joined(separator: ", ")
        if !wanted.isEmpty {
            guard let chosen else {
                return seen.isEmpty
                    ? "no receiver \"\(wanted)\" on the network yet (sender.receiver_name); waiting for it"
                    : "no receiver \"\(wanted)\" on the network (sender.receiver_name); seen: \(list); waiting for it"
            }
            return "found receiver \(chosen.description)"
        }
        guard let chosen else { return "no receiver on the network yet; waiting for one (or set sender.host)" }
        if seen.count == 1 { return "found receiver \(chosen.description)" }
        return
            "receivers on the network: \(list); streaming to \"\(chosen.name)\" (set sender.receiver_name to choose another)"
    }
}
