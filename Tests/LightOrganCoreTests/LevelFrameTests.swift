import LightOrganCore
import Testing

@Suite("Level frames")
struct LevelFrameTests {
    @Test(
        "round unit levels as the 2016 apps did, clamping the rest",
        arguments: [
            (Float(0), UInt8(0)), (1, 255), (0.5, 128), (0.05, 13), (-1, 0), (2, 255), (.nan, 0), (.infinity, 255),
        ])
    func unitToByte(unit: Float, byte: UInt8) {
        #expect(
            LevelFrame(unitBass: unit, unitMid: unit, unitTreble: unit)
                == LevelFrame(bass: byte, mid: byte, treble: byte))
    }

    @Test("index by band in wire order")
    func bandSubscript() {
        let frame = LevelFrame(bass: 1, mid: 2, treble: 3)
        #expect(Band.allCases.map { frame[$0] } == [1, 2, 3])
        #expect(frame.levels == [1, 2, 3])
    }
}
