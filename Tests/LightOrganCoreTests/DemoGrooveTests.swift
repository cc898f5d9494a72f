import LightOrganCore
import Testing

@Suite("Demo groove")
struct DemoGrooveTests {
    @Test("moves every lamp through most of its range")
    func everyLampMoves() throws {
        let frames = try analyse(DemoGroove(), seconds: 6)
        for band in Band.allCases {
            let levels = frames.dropFirst(100).map { Int($0[band]) }
            #expect(levels.max()! - levels.min()! >= 150, "\(band): \(levels.min()!)…\(levels.max()!)")
        }
    }

    @Test("stays within full scale")
    func staysInFullScale() {
        var groove = DemoGroove()
        let samples = groove.read(frames: 44_100 * 4)
        #expect(samples.allSatisfy { abs($0) < 0.95 })
        #expect(samples.contains { abs($0) > 0.5 })
    }
}
