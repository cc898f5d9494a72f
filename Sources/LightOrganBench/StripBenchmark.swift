import Foundation
import LightOrganCore

/// `lightorgan-bench strip`: CPU cost of a strip's frame, microseconds: ``StripRenderer`` drawing
/// each effect on 300 pixels, and ``WS2812Encoding`` turning them into 2,790 SPI bytes.
///
/// The frames are the demo groove's levels at 100 frames a second (scroll's history and flash's
/// onsets see real music); time is the thread's CPU time, the best and the median of `--runs`
/// runs (default 7) of 3,000 frames. Run natively it shows the code's own cost; run under
/// `qemu-aarch64` (TCG, as the emulated Pis of the system tests run it) it shows what an emulated
/// Pi pays, where floating point costs most.
enum StripBenchmark {
    static let pixels = 300
    static let frames = 3_000

    static func run(_ arguments: [String]) {
        let runs = arguments.firstIndex(of: "--runs").flatMap { Int(arguments[$0 + 1]) } ?? 7
        var producer = FrameProducer(source: DemoGroove())
        let levels = (1...frames).map { (try? producer.frame(upTo: Double($0) / 100)) ?? .off }
        var checksum = 0
        for effect in StripEffect.allCases {
            var costs: [Double] = []
            for _ in 0..<runs {
                var renderer = StripRenderer(pixels: pixels, effect: effect)
                let start = ThreadCPUClock.seconds()
                for (index, frame) in levels.enumerated() {
                    renderer.render(frame, at: Double(index) / 100)
                    checksum &+= Int(renderer.pixels[3 * (index % pixels)])
                }
                costs.append((ThreadCPUClock.seconds() - start) / Double(frames))
            }
            report("render \(effect)", costs)
        }
        var renderer = StripRenderer(pixels: pixels, effect: .scroll)
        var spi = [UInt8](repeating: 0, count: WS2812Encoding.frameBytes(pixels: pixels, channels: 3))
        let order = StripLED.ws2812b.defaultOrder
        var costs: [Double] = []
        for _ in 0..<runs {
            let start = ThreadCPUClock.seconds()
            for (index, frame) in levels.enumerated() {
                if index % 100 == 0 { renderer.render(frame, at: Double(index) / 100) }
                WS2812Encoding.encode(rgb: renderer.pixels, order: order, into: &spi)
                checksum &+= Int(spi[index % spi.count])
            }
            costs.append((ThreadCPUClock.seconds() - start) / Double(frames))
        }
        report("encode ws2812b grb", costs)
        print("checksum \(checksum)")
    }

    static func report(_ what: String, _ costs: [Double]) {
        let sorted = costs.sorted()
        print(
            String(
                format: "strip %d pixels, %@: best %.1f µs, median %.1f µs a frame", pixels, what, sorted[0] * 1e6,
                sorted[sorted.count / 2] * 1e6))
    }
}
