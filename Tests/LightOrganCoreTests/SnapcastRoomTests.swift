import LightOrganCore
import Testing

@Suite struct SnapcastRoomTests {
    /// snapserver 0.26.0's reply to Server.GetStatus, with one client "kitchen" (named "Kitchen") in an unnamed
    /// group playing the idle stream "default" (taken from a real server, trimmed).
    static let reply = #"""
        {"id":1,"jsonrpc":"2.0","result":{"server":{"groups":[{"clients":[{"config":{"instance":1,"latency":0,
        "name":"Kitchen","volume":{"muted":false,"percent":100}},"connected":true,"host":{"arch":"x86_64",
        "ip":"127.0.0.1","mac":"02:fc:00:00:00:01","name":"vm","os":"Debian GNU/Linux 12 (bookworm)"},"id":"kitchen",
        "lastSeen":{"sec":1795908741,"usec":544489},"snapclient":{"name":"Snapclient","protocolVersion":2,
        "version":"0.26.0"}},{"config":{"instance":1,"latency":0,"name":"","volume":{"muted":true,"percent":40}},
        "connected":false,"host":{"name":"hallpi"},"id":"hall"}],"id":"764c8720-ec5a-d6dd-9ca1-788464b3d6da",
        "muted":false,"name":"","stream_id":"default"}],"server":{"host":{"name":"vm"},"snapserver":{
        "controlProtocolVersion":1,"name":"Snapserver","protocolVersion":1,"version":"0.26.0"}},"streams":[{
        "id":"default","properties":{},"status":"idle","uri":{"raw":"pipe:////tmp/snap/fifo?name=default"}}]}}}
        """#

    @Test func findsTheRoomItsGroupAndItsStream() throws {
        let room = try #require(try SnapcastRoom.find("kitchen", inStatusReply: Array(Self.reply.utf8)))
        #expect(room.name == "Kitchen")
        #expect(room.connected && room.mac == "02:fc:00:00:00:01")
        #expect(room.stream == "default" && room.streamState == "idle")
        #expect(!room.muted && room.volume == 100)
        #expect(room.description == "group 764c8720, stream default: idle")
        #expect(room.neighbours.isEmpty)
    }

    @Test func anotherClientConnectedFromTheSameMachineIsANeighbour() throws {
        let twice = Self.reply.replacing(
            #""connected":false,"host":{"name":"hallpi"},"id":"hall"}"#,
            with: #""connected":true,"host":{"ip":"127.0.0.1","name":"vm"},"id":"02:fc:00:00:00:01"}"#)
        let room = try #require(try SnapcastRoom.find("kitchen", inStatusReply: Array(twice.utf8)))
        #expect(room.neighbours == ["02:fc:00:00:00:01"])
    }

    @Test func aRoomWithoutANameIsShownByItsHostAndItsMuteCounts() throws {
        let room = try #require(try SnapcastRoom.find("hall", inStatusReply: Array(Self.reply.utf8)))
        #expect(room.name == "hallpi" && !room.connected && room.muted && room.volume == 40)
    }

    @Test func aRoomTheServerDoesNotKnowIsNil() throws {
        #expect(try SnapcastRoom.find("attic", inStatusReply: Array(Self.reply.utf8)) == nil)
    }

    @Test(arguments: [
        "", "{}", "[1,2]", #"{"id":1,"error":{"code":-32601,"message":"Method not found"}}"#, "\u{0}garbage",
    ])
    func anythingElseIsAClearError(reply: String) {
        #expect(throws: SnapcastRoomError.self) { try SnapcastRoom.find("kitchen", inStatusReply: Array(reply.utf8)) }
    }

    @Test func requestsAreOneLineOfJSONRPC() {
        #expect(SnapcastRequest.status(id: 3) == #"{"id":3,"jsonrpc":"2.0","method":"Server.GetStatus"}"# + "\r\n")
        #expect(
            SnapcastRequest.setName(id: 4, client: "kitchen", name: "Küche \"1\"")
                == #"{"id":4,"jsonrpc":"2.0","method":"Client.SetName","params":{"id":"kitchen","name":"Küche \"1\""}}"#
                + "\r\n")
    }
}
