import LightOrganCore

/// Decides which of the page's connections stay open, so that the owner always gets in.
///
/// A stranger on the LAN can open connections without the key: idle TCP connections, TLS handshakes
/// that never finish, view-only `/live` sockets. None of them may keep the owner out:
///
/// - At most ``perAddress`` connections from one address (a browser opens a few for the files, one
///   `/live`, one `/audio`, and a reload leaves the old ones closing for a moment), and new ones at
///   most ``ratePerAddress`` a second after a burst of ``burstPerAddress``: each costs a TLS handshake
///   on the event loop that shows the lamps.
/// - At most ``capacity`` connections in all. A new connection when all are taken makes room by
///   closing one that has not shown the key: from the address that holds the most connections, the
///   oldest of that address; the connections of an address that has shown the key come last (the
///   owner's page reloading). A connection that showed the key (``Stage/owner``) is never closed to
///   make room; only when every place is an owner's is a newcomer refused.
/// - A connection ``Stage/opening`` for ``handshakeTimeout`` (TLS, the request, the upgrade) and a
///   WebSocket that has not said hello (or started its sound) within ``helloTimeout`` are closed (``overdue(_:at:)``).
///
/// Pure logic: the caller passes the time, closes what the answers name and logs the refusals
/// (``RateLimitedLog``). Invariant: every connection counted is open, and no address holds more
/// than ``perAddress`` of them.
public struct PageAdmission: Sendable {
    /// A connection's number, unique for the life of the page server.
    public typealias ConnectionID = Int
    public typealias Instant = ContinuousClock.Instant

    /// Connections open at once, pages and sound sockets together.
    public static let capacity = 64
    /// Connections open at once from one address.
    public static let perAddress = 12
    /// Time from accept to a WebSocket (or to a file served and closed): TLS handshake and request.
    public static let handshakeTimeout = Duration.seconds(5)
    /// Time from a WebSocket upgrade to its hello (`/live`) or start (`/audio`).
    public static let helloTimeout = Duration.seconds(5)
    /// New connections one address may open in a burst (a page load is five or six: the page, its
    /// files, `/live`; a reload as many again).
    public static let burstPerAddress = 30.0
    /// New connections per second one address may open once its burst is spent: each costs a TLS
    /// handshake on the receiver's event loop, where the lamps' frames are shown too.
    public static let ratePerAddress = 3.0
    /// Addresses whose rate is remembered before the idle ones (a full burst again) are forgotten.
    static let rememberedAddresses = 256

    /// How far a connection got.
    public enum Stage: Sendable, Equatable {
        /// Accepted: TLS, a file request or a WebSocket upgrade under way.
        case opening
        /// A WebSocket without the key: before its hello or start, or a view-only `/live` after its hello.
        case looking(greeted: Bool)
        /// A `/live` socket that gave the key, or an `/audio` socket that started with it.
        case owner
    }

    /// The answer to a new connection.
    public enum Admission: Sendable, Equatable {
        /// Keep it; close `evicting` first (a connection without the key) when set.
        case accept(evicting: ConnectionID?)
        /// Close it at once, for `reason` (words for the log).
        case refuse(reason: String)
    }

    private struct Connection {
        var address: String
        var opened: Instant
        var stage: Stage
        var since: Instant
    }

    private var connections: [ConnectionID: Connection] = [:]
    /// Per address: connections it may still open now (0…``burstPerAddress``), as of `at`.
    private var allowance: [String: (tokens: Double, at: Instant)] = [:]

    public init() {}

    /// Connections open now.
    public var openConnections: Int { connections.count }

    /// The stage of a connection, nil when it is not open.
    public func stage(of id: ConnectionID) -> Stage? { connections[id]?.stage }

    /// A connection from `address` was accepted by the socket: whether it may stay, and what must
    /// close to make room. An accepted connection is counted at once (``closed(_:)`` ends that).
    public mutating func admit(_ id: ConnectionID, address: String, at now: Instant) -> Admission {
        let fromAddress = connections.values.count(where: { $0.address == address })
        if fromAddress >= Self.perAddress {
            return .refuse(reason: "\(Self.perAddress) connections from \(address) are open already")
        }
        guard takeAllowance(address, at: now) else {
            return .refuse(
                reason: "\(address) opens connections faster than \(Int(Self.ratePerAddress)) a second")
        }
        var evicting: ConnectionID?
        if connections.count >= Self.capacity {
            guard let victim = victim() else {
                return .refuse(reason: "all \(Self.capacity) places are taken by pages with the key")
            }
            connections[victim] = nil
            evicting = victim
        }
        connections[id] = Connection(address: address, opened: now, stage: .opening, since: now)
        return .accept(evicting: evicting)
    }

    /// Takes one new connection from `address`'s allowance (a token bucket: ``burstPerAddress``,
    /// refilled at ``ratePerAddress``); false when it is spent.
    private mutating func takeAllowance(_ address: String, at now: Instant) -> Bool {
        func refilled(_ entry: (tokens: Double, at: Instant)) -> Double {
            let seconds = (now - entry.at) / .seconds(1)
            return min(Self.burstPerAddress, entry.tokens + max(0, seconds) * Self.ratePerAddress)
        }
        if allowance.count >= Self.rememberedAddresses, allowance[address] == nil {
            allowance = allowance.filter { refilled($0.value) < Self.burstPerAddress }
        }
        let tokens = allowance[address].map(refilled) ?? Self.burstPerAddress
        guard tokens >= 1 else { return false }
        allowance[address] = (tokens - 1, now)
        return true
    }

    /// The connection to close for a newcomer: one without the key, from the address holding the
    /// most connections (a stranger's flood, never the owner's few), the oldest of it; the addresses
    /// that have shown the key come last (the owner's page reloading). Not the stage: a stranger
    /// could otherwise fill every place with view-only pages and leave the owner's connection, still
    /// in its TLS handshake, the only one to close.
    private func victim() -> ConnectionID? {
        var perAddress: [String: Int] = [:]
        var owners: Set<String> = []
        for connection in connections.values {
            perAddress[connection.address, default: 0] += 1
            if connection.stage == .owner { owners.insert(connection.address) }
        }
        return connections.compactMap { id, connection -> (ConnectionID, Int, Int, Instant)? in
            guard connection.stage != .owner else { return nil }
            let trusted = owners.contains(connection.address) ? 1 : 0
            return (id, trusted, -(perAddress[connection.address] ?? 0), connection.opened)
        }
        .min { ($0.1, $0.2, $0.3, $0.0) < ($1.1, $1.2, $1.3, $1.0) }?.0
    }

    /// A WebSocket (`/live` or `/audio`) was upgraded: it has ``helloTimeout`` for its hello or start.
    public mutating func upgraded(_ id: ConnectionID, at now: Instant) {
        move(id, to: .looking(greeted: false), at: now)
    }

    /// A `/live` socket said hello, with the key or without.
    public mutating func greeted(_ id: ConnectionID, withKey: Bool, at now: Instant) {
        move(id, to: withKey ? .owner : .looking(greeted: true), at: now)
    }

    /// An `/audio` socket started with the key.
    public mutating func startedSound(_ id: ConnectionID, at now: Instant) {
        move(id, to: .owner, at: now)
    }

    private mutating func move(_ id: ConnectionID, to stage: Stage, at now: Instant) {
        guard connections[id] != nil else { return }
        connections[id]?.stage = stage
        connections[id]?.since = now
    }

    /// The connection closed (whoever closed it); unknown ids are ignored.
    public mutating func closed(_ id: ConnectionID) {
        connections[id] = nil
    }

    /// Why `id` must close now (it stayed too long in a stage), nil when it may stay.
    public func overdue(_ id: ConnectionID, at now: Instant) -> String? {
        guard let connection = connections[id] else { return nil }
        switch connection.stage {
        case .opening where now - connection.since >= Self.handshakeTimeout:
            return "no page request or WebSocket within \(Self.handshakeTimeout.components.seconds) s"
        case .looking(greeted: false) where now - connection.since >= Self.helloTimeout:
            return "no hello or start within \(Self.helloTimeout.components.seconds) s"
        default:
            return nil
        }
    }
}
