import LightOrganCore
import LightOrganTestSupport
import Testing

@Suite("Frame assembly from a byte stream")
struct FrameAssemblerTests {
    /// The frames of a whole stream, cut at whole triples.
    func reference(_ bytes: [UInt8]) -> [LevelFrame] {
        stride(from: 0, to: bytes.count - bytes.count % 3, by: 3).map {
            LevelFrame(bass: bytes[$0], mid: bytes[$0 + 1], treble: bytes[$0 + 2])
        }
    }

    @Test(
        "any split of a stream yields the frames at the same boundaries: each read's newest is the reference frame at its end"
    )
    func anySplit() {
        var generator = SplitMix64(seed: 7)
        for _ in 0..<2000 {
            let bytes = (0..<Int.random(in: 0...40, using: &generator)).map { _ in
                UInt8.random(in: 0...255, using: &generator)
            }
            let frames = reference(bytes)
            var assembler = FrameAssembler()
            var offset = 0
            var total = 0
            while offset < bytes.count {
                let length = Int.random(in: 0...7, using: &generator)
                let piece = Array(bytes[offset..<min(bytes.count, offset + length)])
                offset += piece.count
                let result = assembler.take(piece)
                total += result.completed
                #expect(result.completed == offset / 3 - (offset - piece.count) / 3)
                #expect(result.newest == (result.completed > 0 ? frames[offset / 3 - 1] : nil))
                #expect(assembler.carriedCount == offset % 3)
            }
            #expect(total == frames.count)
        }
    }

    @Test("a backlog of a thousand frames in one read gives only the last one")
    func backlog() {
        var assembler = FrameAssembler()
        _ = assembler.take([1])
        let backlog = (0..<3000).map { UInt8($0 % 251) } + [9]
        let result = assembler.take(backlog)
        #expect(result.completed == 1000)
        // Stream positions 2997…2999 are backlog bytes 2996…2998.
        #expect(result.newest == LevelFrame(bass: UInt8(2996 % 251), mid: UInt8(2997 % 251), treble: UInt8(2998 % 251)))
        #expect(assembler.carriedCount == 2)
    }
}
