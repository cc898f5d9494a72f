import Foundation
import LightOrganCore
import LightOrganNetwork
import LightOrganServices
import LightOrganTestSupport
import LightOrganWeb
import Logging
import NIOCore
import NIOEmbedded
import NIOWebSocket
import Synchronization
import Testing

/// One of the page's WebSockets on NIO's embedded channel, with the receiver's own backend behind
/// it: ``ReceiverControl`` over ``LampSwitchboard`` → ``DelayedOutput`` → ``LampTap`` → a
/// ``RecordingOutput``, all on the channel's event loop as in the receiver. Messages go in with
/// ``send(_:)``; what the handler wrote comes out of ``written()``.
///
/// Use it on the thread that made it, and call ``finish()`` at the end (an embedded channel and
/// loop may not be freed open, or with timers set).
final class PageSocket {
    /// A message the handler wrote.
    enum Message: Equatable {
        case text(String)
        case binary([UInt8])
        case pong([UInt8])
        case close(code: UInt16, reason: String)
    }

    /// The page's secret in these tests.
    static let key = "test-secret-0123456789"

    let loop = EmbeddedEventLoop()
    let output = RecordingOutput()
    let switchboard: LampSwitchboard
    let control: ReceiverControl
    let channel: EmbeddedChannel
    /// Where the page's settings are kept (a fresh temporary directory).
    let pageFile: String
    private var senderChannels: [EmbeddedChannel] = []

    /// A socket from 192.168.1.30:40000 with the handler `makeHandler` makes, its first timer tick
    /// run and what that wrote read.
    ///
    /// - Parameter rules: the switchboard's rules.
    init(rules: ReceiverRules = ReceiverRules(), _ makeHandler: (PageSocketContext) -> any ChannelHandler) throws {
        let logger = Logger(label: "lightorgan-test") { _ in SwiftLogNoOpLogHandler() }
        var raw: [String: RawSetting] = [:]
        for key in SettingsCatalog.keys { raw[key.name] = RawSetting(key.defaultValue, from: .builtInDefault) }
        pageFile =
            FileManager.default.temporaryDirectory.appendingPathComponent("lightorgan-\(UUID())").path
            + "/page-settings.yaml"
        let live = LiveSettings(raw: raw, settings: try SettingsCatalog.resolve(raw), pageFile: pageFile)
        let lines = [
            LampTap.Line(band: .bass, offset: 17), LampTap.Line(band: .mid, offset: 27),
            LampTap.Line(band: .treble, offset: 22),
        ]
        let tap = LampTap(output: output, lines: lines, maxBrightness: 100, eventLoop: loop)
        let delayed = DelayedOutput(wrapping: tap, delay: .zero, eventLoop: loop) { _ in }
        switchboard = LampSwitchboard(output: delayed, rules: rules, logger: logger)
        control = ReceiverControl(
            configuration: .init(live: live, secret: PageSecret(reading: Self.key)!, port: 4242, chip: nil, name: "pi"),
            switchboard: switchboard, delayed: delayed, tap: tap, logger: logger)
        channel = EmbeddedChannel(loop: loop)
        try channel.connect(to: SocketAddress(ipAddress: "192.168.1.30", port: 40_000)).wait()
        let connections = PageConnections(logger: logger)
        let id = try #require(connections.admit(channel, address: "192.168.1.30"))
        let context = PageSocketContext(id: id, connections: connections, backend: control, logger: logger)
        try channel.pipeline.syncOperations.addHandler(makeHandler(context))
        loop.run()
        _ = try written()
    }

    /// Sends a text message.
    func send(_ text: String) throws {
        try channel.writeInbound(WebSocketFrame(fin: true, opcode: .text, data: ByteBuffer(string: text)))
    }

    /// Sends a binary message.
    func send(binary bytes: [UInt8]) throws {
        try channel.writeInbound(WebSocketFrame(fin: true, opcode: .binary, data: ByteBuffer(bytes: bytes)))
    }

    /// Sends a ping carrying `bytes`.
    func ping(_ bytes: [UInt8]) throws {
        try channel.writeInbound(WebSocketFrame(fin: true, opcode: .ping, data: ByteBuffer(bytes: bytes)))
    }

    /// What the handler wrote since the last call, in order.
    func written() throws -> [Message] {
        var messages: [Message] = []
        while let frame = try channel.readOutbound(as: WebSocketFrame.self) {
            var data = frame.unmaskedData
            switch frame.opcode {
            case .text: messages.append(.text(String(buffer: data)))
            case .binary: messages.append(.binary(Array(data.readableBytesView)))
            case .pong: messages.append(.pong(Array(data.readableBytesView)))
            case .connectionClose:
                let code = data.readInteger(as: UInt16.self) ?? 0
                messages.append(.close(code: code, reason: data.readString(length: data.readableBytes) ?? ""))
            default: continue
            }
        }
        return messages
    }

    /// The text messages written since the last call (lamp pushes left out).
    func texts() throws -> [String] {
        try written().compactMap { message in
            if case .text(let text) = message { return text }
            return nil
        }
    }

    /// Shows `frame` as a sender's (connection 1 from 192.168.1.20:50000), through the switchboard.
    func showFromSender(_ frame: LevelFrame) throws {
        let sender = EmbeddedChannel()
        senderChannels.append(sender)
        try sender.connect(to: SocketAddress(ipAddress: "192.168.1.20", port: 50_000)).wait()
        let connection = FrameConnection(id: 1, address: "192.168.1.20", peer: "192.168.1.20:50000", channel: sender)
        _ = switchboard.opened(connection)
        switchboard.arrived(frame, completed: 1, bytes: 3, on: connection)
        // The pages hear of it in a task of their loop, after the frame is shown (LampTap.tellWatchers).
        loop.run()
    }

    /// The page's file as written, nil when there is none.
    var pageFileText: String? {
        FileManager.default.contents(atPath: pageFile).map { String(decoding: $0, as: UTF8.self) }
    }

    /// Closes the channels still open and drops the timers still set.
    func finish() {
        for sender in senderChannels { _ = try? sender.finish() }
        _ = try? channel.finish()
        try? loop.syncShutdownGracefully()
    }
}
