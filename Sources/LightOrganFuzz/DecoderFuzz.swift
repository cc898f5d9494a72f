import LightOrganCore
import LightOrganNetwork
import LightOrganTestSupport
import NIOCore
import NIOEmbedded
import Synchronization

/// Random streams in random pieces through ``FrameAssembler``: each read's newest frame and count
/// are those of the reference cut of the whole stream into triples; at most 2 bytes carried.
enum AssemblerFuzz {
    static func run(_ generator: inout SplitMix64, count: Int) throws(FuzzFailure) {
        var assembler = FrameAssembler()
        var stream: [UInt8] = []  // the bytes since the last frame boundary the reference knows
        var position = 0
        for input in 0..<count {
            if input % 10_000 == 0 { assembler = FrameAssembler(); stream = []; position = 0 }
            let length = Int.random(in: 0...(generator.next() % 8 == 0 ? 4096 : 9), using: &generator)
            let piece = generator.bytes(length)
            let result = assembler.take(piece)
            let before = position
            position += length
            stream += piece
            let expectedCount = position / 3 - before / 3
            try require(
                result.completed == expectedCount,
                "read \(input): \(result.completed) frames, expected \(expectedCount)")
            if expectedCount > 0 {
                let end = position / 3 * 3 - (position - stream.count)
                let expected = LevelFrame(bass: stream[end - 3], mid: stream[end - 2], treble: stream[end - 1])
                try require(
                    result.newest == expected,
                    "read \(input): newest \(String(describing: result.newest)), expected \(expected)")
            } else {
                try require(result.newest == nil, "read \(input): a frame from no complete frame")
            }
            try require(assembler.carriedCount == position % 3, "read \(input): carries \(assembler.carriedCount)")
            stream = Array(stream.suffix(position % 3))  // keep only the incomplete tail
        }
    }
}

/// The receiver's NIO handler on an embedded channel: random batches of random reads; each batch
/// delivers exactly its newest frame, its count of completed frames and its byte count.
enum HandlerFuzz {
    final class Sink: FrameSink {
        let last = Mutex<(LevelFrame?, Int, Int)?>(nil)
        func opened(_ connection: FrameConnection) -> Bool { true }
        func arrived(_ newest: LevelFrame?, completed: Int, bytes: Int, on connection: FrameConnection) {
            last.withLock { $0 = (newest, completed, bytes) }
        }
        func closed(_ connection: FrameConnection) {}
    }

    static func run(_ generator: inout SplitMix64, count: Int) throws(FuzzFailure) {
        let sink = Sink()
        var channel = EmbeddedChannel(handler: FrameReceiverHandler(sink: sink, connectionID: 1))
        var position = 0
        var tail: [UInt8] = []
        var batches = 0
        var input = 0
        while input < count {
            if batches % 1000 == 0 {
                _ = try? channel.finish()
                channel = EmbeddedChannel(handler: FrameReceiverHandler(sink: sink, connectionID: 1))
                do { try channel.connect(to: SocketAddress(ipAddress: "10.0.0.1", port: 1)).wait() } catch {
                    throw FuzzFailure("embedded connect failed: \(error)")
                }
                position = 0
                tail = []
            }
            batches += 1
            sink.last.withLock { $0 = nil }
            var batch: [UInt8] = []
            for _ in 0..<Int.random(in: 1...4, using: &generator) {
                let piece = generator.bytes(
                    Int.random(in: 0...(generator.next() % 16 == 0 ? 2000 : 10), using: &generator))
                batch += piece
                channel.pipeline.syncOperations.fireChannelRead(NIOAny(ByteBuffer(bytes: piece)))
                input += 1
            }
            channel.pipeline.syncOperations.fireChannelReadComplete()
            let before = position
            position += batch.count
            let stream = tail + batch
            let completed = position / 3 - before / 3
            let delivered = sink.last.withLock { $0 }
            if batch.isEmpty {
                try require(delivered == nil, "an empty batch delivered something")
                continue
            }
            guard let (newest, count, bytes) = delivered else {
                throw FuzzFailure("batch \(batches) delivered nothing")
            }
            try require(
                count == completed && bytes == batch.count,
                "batch \(batches): \(count) frames, \(bytes) bytes; expected \(completed), \(batch.count)")
            if completed > 0 {
                let end = position / 3 * 3 - before + tail.count
                let expected = LevelFrame(bass: stream[end - 3], mid: stream[end - 2], treble: stream[end - 1])
                try require(
                    newest == expected, "batch \(batches): newest \(String(describing: newest)), expected \(expected)")
            } else {
                try require(newest == nil, "batch \(batches): a frame from no complete frame")
            }
            tail = Array(stream.suffix(position % 3))
        }
    }
}
