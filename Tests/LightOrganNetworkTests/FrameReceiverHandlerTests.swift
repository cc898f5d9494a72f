import LightOrganCore
import LightOrganNetwork
import NIOCore
import NIOEmbedded
import Synchronization
import Testing

/// A sink that records what the handler hands it.
final class RecordingSink: FrameSink {
    struct Delivery: Equatable {
        var newest: LevelFrame?
        var completed: Int
        var bytes: Int
    }
    let admit: Bool
    private let state = Mutex<(opened: Int, closed: Int, deliveries: [Delivery])>((0, 0, []))
    init(admit: Bool = true) { self.admit = admit }

    func opened(_ connection: FrameConnection) -> Bool {
        state.withLock { $0.opened += 1 }
        return admit
    }
    func arrived(_ newest: LevelFrame?, completed: Int, bytes: Int, on connection: FrameConnection) {
        state.withLock { $0.deliveries.append(Delivery(newest: newest, completed: completed, bytes: bytes)) }
    }
    func closed(_ connection: FrameConnection) { state.withLock { $0.closed += 1 } }

    var deliveries: [Delivery] { state.withLock { $0.deliveries } }
    var opened: Int { state.withLock { $0.opened } }
    var closed: Int { state.withLock { $0.closed } }
}

@Suite("The receiver's connection handler")
struct FrameReceiverHandlerTests {
    func connectedChannel(_ sink: RecordingSink) throws -> EmbeddedChannel {
        let channel = EmbeddedChannel(handler: FrameReceiverHandler(sink: sink, connectionID: 1))
        try channel.connect(to: SocketAddress(ipAddress: "192.168.1.20", port: 50_000)).wait()
        return channel
    }

    @Test("hands the sink only the newest complete frame of a batch of reads, with the counts")
    func newestOfBatch() throws {
        let sink = RecordingSink()
        let channel = try connectedChannel(sink)
        // Three reads in one batch: 7 frames and 1 byte over.
        let bytes: [UInt8] = Array(1...22)
        for piece in [bytes[0..<5], bytes[5..<16], bytes[16..<22]] {
            channel.pipeline.syncOperations.fireChannelRead(NIOAny(ByteBuffer(bytes: piece)))
        }
        channel.pipeline.syncOperations.fireChannelReadComplete()
        #expect(sink.deliveries == [.init(newest: LevelFrame(bass: 19, mid: 20, treble: 21), completed: 7, bytes: 22)])
        // The carried byte starts the next frame.
        try channel.writeInbound(ByteBuffer(bytes: [23, 24]))
        #expect(
            sink.deliveries.last == .init(newest: LevelFrame(bass: 22, mid: 23, treble: 24), completed: 1, bytes: 2))
        try channel.writeInbound(ByteBuffer(bytes: [9]))
        #expect(sink.deliveries.last == .init(newest: nil, completed: 0, bytes: 1))
        _ = try channel.finish()
        #expect(sink.opened == 1 && sink.closed == 1)
    }

    @Test("a connection the sink refuses is closed at once and never delivers")
    func refused() throws {
        let sink = RecordingSink(admit: false)
        let channel = try connectedChannel(sink)
        #expect(!channel.isActive)
        #expect(sink.deliveries.isEmpty && sink.closed == 0)
    }
}
