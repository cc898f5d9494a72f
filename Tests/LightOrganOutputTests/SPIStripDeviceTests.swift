import LightOrganCore
import LightOrganOutput
import LightOrganTestSupport
import Testing

@Suite("SPI strip: the writer's encoder makes the core's bytes")
struct SPIStripDeviceTests {
    @Test(
        "the C encoder (NEON on arm64, 16 pixels at a time) gives WS2812Encoding's bytes, reset included",
        arguments: ["grb", "rgb", "brg", "bgr"])
    func sameBytes(order text: String) {
        let order = ColorOrder(parsing: text)!
        var random = SplitMix64(seed: UInt64(text.unicodeScalars.first!.value))
        // Below, at and past 16 pixels, a tail of every length, and a long strip.
        for pixels in Array(1...40) + [300] {
            let rgb = (0..<3 * pixels).map { _ in UInt8(truncatingIfNeeded: random.next()) }
            var expected = [UInt8](repeating: 0xFF, count: WS2812Encoding.frameBytes(pixels: pixels, channels: 3))
            WS2812Encoding.encode(rgb: rgb, order: order, into: &expected)
            var written = [UInt8](repeating: 0xAA, count: expected.count)  // the last frame's bytes, say
            SPIStripDevice.encode(rgb: rgb, order: order, into: &written)
            #expect(written == expected, "\(pixels) pixels in \(text)")
            if written != expected { return }
        }
    }

    @Test("RGBW strips go through the core's encoder")
    func rgbw() {
        let order = StripLED.sk6812Rgbw.defaultOrder
        var expected = [UInt8](repeating: 0, count: WS2812Encoding.frameBytes(pixels: 2, channels: 4))
        WS2812Encoding.encode(rgb: [200, 250, 100, 1, 2, 3], order: order, into: &expected)
        var written = [UInt8](repeating: 0, count: expected.count)
        SPIStripDevice.encode(rgb: [200, 250, 100, 1, 2, 3], order: order, into: &written)
        #expect(written == expected)
    }
}
