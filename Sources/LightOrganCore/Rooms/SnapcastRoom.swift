import FoundationEssentials

/// What a Snapcast server says of one room (client) of its house, from its JSON-RPC control API
/// (`Server.GetStatus` on port 1705): the room's group, the stream the group plays and whether it plays, and
/// the name Snapcast's apps show for it.
public struct SnapcastRoom: Sendable, Equatable {
    /// The client's id (snapclient's `--hostID`).
    public var id: String
    /// The name the apps show: the one set for it (`config.name`), else its host's name.
    public var name: String
    /// Whether the server counts it connected.
    public var connected: Bool
    /// The MAC address of the machine the server last saw it on (empty when it did not say).
    public var mac: String
    /// Its group's name (empty when the group has none) and id.
    public var groupName: String
    public var groupID: String
    /// The stream its group plays (its id is its name, `default`) and that stream's state: `playing`, `idle`.
    public var stream: String
    public var streamState: String
    /// Whether its group or the client itself is muted, and its volume, percent.
    public var muted: Bool
    public var volume: Int
    /// The ids of the other clients connected from this room's machine (its host's address and name) under
    /// snapclient's default id, a MAC address: another snapclient playing here, most likely Debian's own
    /// `snapclient.service`.
    public var neighbours: [String]

    /// The room `id` in a `Server.GetStatus` reply (the whole JSON-RPC message, or its `result`); nil when the
    /// server does not know it.
    ///
    /// - Throws: ``SnapcastRoomError`` when the reply is not a status the server would send.
    public static func find(_ id: String, inStatusReply reply: [UInt8]) throws(SnapcastRoomError) -> SnapcastRoom? {
        let status: Status
        do {
            if let message = try? JSONDecoder().decode(Message.self, from: Data(reply)), let result = message.result {
                status = result
            } else {
                status = try JSONDecoder().decode(Status.self, from: Data(reply))
            }
        } catch {
            throw SnapcastRoomError("not a Snapcast server's status (\(String(describing: error).prefix(120)))")
        }
        let everyone = status.server.groups.flatMap(\.clients)
        for group in status.server.groups {
            guard let client = group.clients.first(where: { $0.id == id }) else { continue }
            let neighbours = everyone.filter {
                $0.id != id && $0.connected && $0.host.ip != nil && $0.host.ip == client.host.ip
                    && $0.host.name == client.host.name && Self.isMACAddress($0.id)
            }
            let stream = status.server.streams.first { $0.id == group.stream_id }
            let configured = client.config.name ?? ""
            return SnapcastRoom(
                id: id, name: configured.isEmpty ? client.host.name ?? id : configured, connected: client.connected,
                mac: client.host.mac ?? "",
                groupName: group.name ?? "", groupID: group.id, stream: group.stream_id,
                streamState: stream?.status ?? "unknown",
                muted: group.muted ?? false || client.config.volume?.muted ?? false,
                volume: client.config.volume?.percent ?? 100, neighbours: neighbours.map(\.id))
        }
        return nil
    }

    /// Whether `id` is written as a MAC address (`02:fc:00:00:00:01`), snapclient's id unless told `--hostID`.
    static func isMACAddress(_ id: String) -> Bool {
        let parts = id.split(separator: ":", omittingEmptySubsequences: false)
        return parts.count == 6 && parts.allSatisfy { $0.count == 2 && $0.allSatisfy(\.isHexDigit) }
    }

    /// `group "Upstairs", stream default: playing` (the group by its id's first 8 characters when it has no name).
    public var description: String {
        let group = groupName.isEmpty ? "group \(groupID.prefix(8))" : "group \"\(groupName)\""
        return "\(group), stream \(stream): \(streamState)\(muted ? ", muted" : "")"
    }

    // The parts of the reply read here (snake_case as the server writes them).
    private struct Message: Decodable { var result: Status? }
    private struct Status: Decodable { var server: Server }
    private struct Server: Decodable {
        var groups: [Group]
        var streams: [Stream]
    }
    private struct Group: Decodable {
        var id: String
        var name: String?
        var stream_id: String
        var muted: Bool?
        var clients: [Client]
    }
    private struct Client: Decodable {
        var id: String
        var connected: Bool
        var host: Host
        var config: Config
    }
    private struct Host: Decodable {
        var name: String?
        var ip: String?
        var mac: String?
    }
    private struct Config: Decodable {
        var name: String?
        var volume: Volume?
    }
    private struct Volume: Decodable {
        var muted: Bool?
        var percent: Int?
    }
    private struct Stream: Decodable {
        var id: String
        var status: String?
    }
}

/// A Snapcast server's reply that is not what it should be.
public struct SnapcastRoomError: Error, Sendable, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}

/// The JSON-RPC requests the receiver sends a Snapcast server, one line each.
public enum SnapcastRequest {
    /// `Server.GetStatus`, with `id`.
    public static func status(id: Int) -> String {
        JSONValue.object(["id": .integer(id), "jsonrpc": "2.0", "method": "Server.GetStatus"]).text + "\r\n"
    }

    /// `Client.SetName` for the client `client`, so that Snapcast's apps show `name`.
    public static func setName(id: Int, client: String, name: String) -> String {
        JSONValue.object([
            "id": .integer(id), "jsonrpc": "2.0", "method": "Client.SetName",
            "params": ["id": .string(client), "name": .string(name)],
        ]).text + "\r\n"
    }
}
