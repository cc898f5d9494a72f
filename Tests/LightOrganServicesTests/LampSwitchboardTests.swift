import LightOrganCore
import LightOrganNetwork
import LightOrganServices
import LightOrganTestSupport
import Logging
import NIOCore
import NIOEmbedded
import Synchronization
import Testing

/// A logger that says nothing (the switchboard logs every connection).
let quietLogger = Logger(label: "lightorgan-test") { _ in SwiftLogNoOpLogHandler() }

@Suite("LampSwitchboard: which sender's frames reach the lamps, and what the page is told")
struct LampSwitchboardTests {
    let red = LevelFrame(bass: 200, mid: 10, treble: 0)
    let blue = LevelFrame(bass: 0, mid: 10, treble: 200)
    /// What reached the lamps.
    let output = RecordingOutput()

    func switchboard(_ output: RecordingOutput, rules: ReceiverRules = ReceiverRules()) -> LampSwitchboard {
        LampSwitchboard(output: output, rules: rules, logger: quietLogger)
    }

    /// Connection 1 of `senders` on `board`, opened and driving: its first frame, ``red``, applied.
    func driving(_ board: LampSwitchboard, from senders: EmbeddedSenders) throws -> (
        connection: FrameConnection, channel: EmbeddedChannel
    ) {
        let (sender, channel) = try senders.connect(1)
        _ = board.opened(sender)
        board.arrived(red, completed: 1, bytes: 3, on: sender)
        return (sender, channel)
    }

    /// Connections 1 (192.168.1.20) and 2 (192.168.1.21) of `senders`, both opened on `board`.
    func twoOpened(on board: LampSwitchboard, from senders: EmbeddedSenders) throws -> (
        FrameConnection, FrameConnection
    ) {
        let (first, _) = try senders.connect(1)
        let (second, _) = try senders.connect(2, address: "192.168.1.21")
        #expect(board.opened(first) && board.opened(second))
        return (first, second)
    }

    @Test("the first sender's frames reach the output; a second sender's do not while the first streams")
    func firstSenderDrives() throws {
        let senders = EmbeddedSenders()
        defer { senders.finish() }
        let board = switchboard(output)
        let (first, second) = try twoOpened(on: board, from: senders)
        board.arrived(red, completed: 1, bytes: 3, on: first)
        board.arrived(blue, completed: 1, bytes: 3, on: second)
        board.arrived(nil, completed: 0, bytes: 1, on: first)
        #expect(output.frames == [red])
        let statistics = board.takeStatistics()
        #expect(statistics.counters.applied == 1 && statistics.counters.ignored == 1)
        #expect(statistics.activePeer == "192.168.1.20:50000" && statistics.open == 2)
    }

    @Test("a sender outside receiver.allow is refused, and its frames never reach the output")
    func allowList() throws {
        let senders = EmbeddedSenders()
        defer { senders.finish() }
        var rules = ReceiverRules()
        rules.allow = [try #require(AddressRange("10.0.0.0/8"))]
        let board = switchboard(output, rules: rules)
        let (stranger, _) = try senders.connect(1)
        #expect(!board.opened(stranger))
        board.arrived(red, completed: 1, bytes: 3, on: stranger)
        #expect(output.events.withLock { $0.isEmpty })
        let (friend, _) = try senders.connect(2, address: "10.0.0.5")
        #expect(board.opened(friend))
        board.arrived(blue, completed: 1, bytes: 3, on: friend)
        #expect(output.frames == [blue])
        #expect(board.takeStatistics().counters.refused == 1)
    }

    @Test("a full receiver closes its idlest connection to admit a newcomer, never the one driving")
    func eviction() throws {
        let senders = EmbeddedSenders()
        defer { senders.finish() }
        var rules = ReceiverRules()
        rules.maxConnections = 2
        let board = switchboard(RecordingOutput(), rules: rules)
        let (driving, drivingChannel) = try senders.connect(1)
        let (idle, idleChannel) = try senders.connect(2, address: "192.168.1.21")
        let (newcomer, newcomerChannel) = try senders.connect(3, address: "192.168.1.22")
        #expect(board.opened(driving) && board.opened(idle))
        board.arrived(red, completed: 1, bytes: 3, on: driving)
        #expect(board.opened(newcomer))
        #expect(!idleChannel.isActive, "the idle connection was closed")
        #expect(drivingChannel.isActive && newcomerChannel.isActive)
        #expect(board.pageSummary().connections == 2)
    }

    @Test("the driving sender closing turns the lamps off; another closing leaves them")
    func closingTurnsOff() throws {
        let senders = EmbeddedSenders()
        defer { senders.finish() }
        let board = switchboard(output)
        let (first, second) = try twoOpened(on: board, from: senders)
        board.arrived(red, completed: 1, bytes: 3, on: first)
        board.closed(second)
        #expect(output.frames == [red])
        board.closed(first)
        #expect(output.frames == [red, .off])
        #expect(board.pageSummary().sender == nil)
    }

    @Test("a flood closes the connection and turns the lamps it drove off")
    func flood() throws {
        let senders = EmbeddedSenders()
        defer { senders.finish() }
        let board = switchboard(output)
        let (sender, channel) = try driving(board, from: senders)
        board.arrived(nil, completed: 0, bytes: ReceiverRules().floodLimit + 1, on: sender)
        #expect(output.frames == [red, .off])
        #expect(!channel.isActive)
        #expect(board.takeStatistics().counters.flooded == 1)
    }

    @Test("a new lamp timeout applies at the next sweep: lit lamps go off once it has passed")
    func lampTimeoutSetting() throws {
        let senders = EmbeddedSenders()
        defer { senders.finish() }
        let board = switchboard(output)
        let (_, channel) = try driving(board, from: senders)
        board.sweep()
        #expect(output.frames == [red], "within the default second the lamps stay lit")
        board.setLampTimeout(.zero)
        board.sweep()
        #expect(output.frames == [red, .off])
        #expect(channel.isActive, "the lamp timeout turns lamps off; it closes no connection")
        #expect(board.pageSummary().sender == nil, "nobody drives after the lamp timeout")
    }

    @Test("after shutDown the output is released, connections are closed and later frames are ignored")
    func shutDown() throws {
        let senders = EmbeddedSenders()
        defer { senders.finish() }
        let board = switchboard(output)
        let (sender, channel) = try driving(board, from: senders)
        board.shutDown()
        #expect(output.last == .shutDown)
        #expect(!channel.isActive)
        board.arrived(blue, completed: 1, bytes: 3, on: sender)
        board.sweep()
        let (late, _) = try senders.connect(2)
        #expect(!board.opened(late))
        #expect(output.last == .shutDown)
        #expect(output.frames == [red])
    }

    @Test("the page's summary: the driving sender's address, port and mDNS name, drops, ages, reconnects")
    func pageSummary() throws {
        let senders = EmbeddedSenders()
        defer { senders.finish() }
        let asked = Mutex<[String]>([])
        let board = LampSwitchboard(
            output: RecordingOutput(), rules: ReceiverRules(),
            nameLookup: { address, answer in
                asked.withLock { $0.append(address) }
                answer(address == "192.168.1.20" ? "laptop.local" : nil)
            }, logger: quietLogger)
        let (sender, _) = try senders.connect(1, port: 50422)
        _ = board.opened(sender)
        #expect(board.pageSummary().sender == nil, "connected, no frame yet")
        board.arrived(red, completed: 3, bytes: 9, on: sender)
        let summary = board.pageSummary()
        let shown = try #require(summary.sender)
        #expect(shown.address == "192.168.1.20" && shown.port == 50422 && shown.name == "laptop.local")
        #expect(shown.kind == .unknown, "told after a second")
        #expect(summary.drops == 2 && summary.reconnects == 0 && summary.connections == 1)
        #expect(summary.frameAges.samples.count == 1)
        #expect(summary.frameAge != nil)
        board.closed(sender)
        let (again, _) = try senders.connect(2, port: 50423)
        _ = board.opened(again)
        #expect(board.pageSummary().reconnects == 1)
        #expect(asked.withLock { $0 } == ["192.168.1.20"], "a name is asked for once per address")
    }

    @Test("a page's sound (a negative id) drives like any sender and is shown as a browser without a port")
    func browserSender() throws {
        let senders = EmbeddedSenders()
        defer { senders.finish() }
        let board = switchboard(output)
        let (page, _) = try senders.connect(-1, address: "192.168.1.30", port: 40_000)
        #expect(board.opened(page))
        board.arrived(red, completed: 1, bytes: 3, on: page)
        #expect(output.frames == [red])
        let shown = try #require(board.pageSummary().sender)
        #expect(shown.kind == .browser && shown.port == nil && shown.address == "192.168.1.30")
    }
}
