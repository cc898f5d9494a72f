import LightOrganCore
import LightOrganNetwork
import NIOCore
import NIOEmbedded
import NIOTestUtils
import Testing

@Suite("Frame decoder")
struct LevelFrameDecoderTests {
    @Test("yields the same frames for every split of the byte stream")
    func everySplit() throws {
        let frames = [
            LevelFrame(bass: 255, mid: 0, treble: 1), LevelFrame(bass: 13, mid: 13, treble: 13),
            LevelFrame(bass: 0, mid: 128, treble: 255), .off,
        ]
        var stream = ByteBuffer()
        for frame in frames { stream.writeLevelFrame(frame) }
        try ByteToMessageDecoderVerifier.verifyDecoder(
            inputOutputPairs: [(stream, frames)], decoderFactory: { LevelFrameDecoder() })
    }

    @Test("drops a partial frame at the end of the stream instead of showing it")
    func partialFrameAtEnd() throws {
        let channel = EmbeddedChannel(handler: ByteToMessageHandler(LevelFrameDecoder()))
        try channel.writeInbound(ByteBuffer(bytes: [10, 20, 30, 40, 50]))
        #expect(try channel.readInbound(as: LevelFrame.self) == LevelFrame(bass: 10, mid: 20, treble: 30))
        #expect(try channel.finish().isClean)  // the two stray bytes produced nothing
    }
}
