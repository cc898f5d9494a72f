import Foundation
import LightOrganCore
import LightOrganTestSupport
import Testing

/// The pixel (red, green, blue) at `index` of a renderer's pixels.
func pixel(_ renderer: StripRenderer, _ index: Int) -> [UInt8] {
    Array(renderer.pixels[3 * index..<3 * index + 3])
}

@Suite("Strip renderer: the effects, from known levels to pixels")
struct StripRendererTests {
    @Test("segments: a third per band in its colour at its level (gamma 1), bass first", arguments: [9, 30, 300])
    func segments(pixels: Int) {
        var renderer = StripRenderer(pixels: pixels, effect: .segments, gamma: 1)
        renderer.render(LevelFrame(bass: 255, mid: 0, treble: 200), at: 0)
        for index in 0..<pixels {
            let band = min(2, index * 3 / pixels)
            let expected: [UInt8] = band == 0 ? [255, 0, 0] : band == 1 ? [0, 0, 0] : [0, 0, 200]
            #expect(pixel(renderer, index) == expected, "pixel \(index) of \(pixels)")
        }
    }

    @Test("blend mixes the bands' colours over the whole strip; gamma 2.2 turns level 128 into light 0.22")
    func blend() {
        var renderer = StripRenderer(pixels: 10, effect: .blend, gamma: 2.2)
        renderer.render(LevelFrame(bass: 128, mid: 255, treble: 0), at: 0)
        for index in 0..<10 { #expect(pixel(renderer, index) == [56, 255, 0]) }
    }

    @Test("the brightness limit scales every pixel's light")
    func brightness() {
        var renderer = StripRenderer(pixels: 3, effect: .blend, gamma: 1, brightness: 0.5)
        renderer.render(LevelFrame(bass: 255, mid: 255, treble: 255), at: 0)
        #expect(pixel(renderer, 1) == [128, 128, 128])
    }

    @Test(
        "scroll: a flash enters at the centre and reaches the ends after the travel time, fading", arguments: [30, 300])
    func scroll(pixels: Int) {
        var renderer = StripRenderer(pixels: pixels, effect: .scroll, gamma: 1)
        let centre = pixels / 2
        // One red flash at t = 0, dark frames every 10 ms after it.
        renderer.render(LevelFrame(bass: 255, mid: 0, treble: 0), at: 0)
        #expect(pixel(renderer, centre)[0] == 255)
        #expect(pixel(renderer, 0) == [0, 0, 0])
        var time = 0.0
        while time < StripRenderer.scrollTravel / 2 - 0.005 {
            time += 0.01
            renderer.render(.off, at: time)
        }
        // Half-way in time: the flash is half-way out, on both sides, dimmer than at the centre.
        let lit = (0..<pixels).filter { pixel(renderer, $0)[0] > 0 }
        #expect(!lit.isEmpty)
        let distances = lit.map { abs(2 * $0 - (pixels - 1)) / 2 }
        let half = Double((pixels + 1) / 2)
        #expect(distances.allSatisfy { abs(Double($0) / half - 0.5) < 0.1 }, "lit at \(distances) of \(half)")
        #expect(lit.allSatisfy { pixel(renderer, $0)[0] < 128 })
        #expect(pixel(renderer, centre) == [0, 0, 0])
        #expect(lit.contains { $0 < centre } && lit.contains { $0 >= centre }, "both sides")
        // After the travel time it has left the strip.
        while time < StripRenderer.scrollTravel + 0.05 {
            time += 0.01
            renderer.render(.off, at: time)
        }
        #expect(renderer.pixels.allSatisfy { $0 == 0 })
    }

    @Test(
        "scroll: every pixel is the frame of its delay, faded, on both sides, on strips odd and even",
        arguments: [1, 2, 3, 4, 5, 31, 300])
    func scrollAgainstReference(pixels: Int) {
        let palette = Palette(parsing: "#ff8000, #00ffc0, #4040ff")!
        let gamma = 2.2, brightness: Float = 0.7
        var renderer = StripRenderer(
            pixels: pixels, effect: .scroll, palette: palette, gamma: gamma, brightness: brightness)
        var random = SplitMix64(seed: UInt64(pixels))
        var shown: [(micros: Int64, frame: LevelFrame)] = []
        var micros: Int64 = 0
        while micros < 1_600_000 {
            // About 100 frames a second, jittered, with a gap of 0.3 s in the middle.
            micros += micros > 600_000 && micros < 610_000 ? 300_000 : 7_000 + Int64(random.next() % 6_000)
            let frame = LevelFrame(
                bass: UInt8(random.next() % 256), mid: UInt8(random.next() % 256), treble: UInt8(random.next() % 256))
            shown.append((micros, frame))
            renderer.render(frame, at: Double(micros) / 1e6)
            let expected = Self.referenceScroll(
                pixels: pixels, shown: shown, palette: palette, gamma: gamma, brightness: brightness)
            let apart = zip(renderer.pixels, expected).map { abs(Int($0) - Int($1)) }
            #expect(
                apart.allSatisfy { $0 <= 1 }, "\(pixels) pixels at \(micros) µs: \(renderer.pixels) against \(expected)"
            )
            if apart.contains(where: { $0 > 1 }) { return }
        }
    }

    /// Scroll's pixels computed the plain way, in floating point, pixel by pixel.
    static func referenceScroll(
        pixels: Int, shown: [(micros: Int64, frame: LevelFrame)], palette: Palette, gamma: Double, brightness: Float
    ) -> [UInt8] {
        let steps = (pixels + 1) / 2
        let newest = shown.last!.micros
        var bytes: [UInt8] = []
        for pixel in 0..<pixels {
            let step = abs(2 * pixel - (pixels - 1)) / 2
            let delay = Int64(step) * Int64(StripRenderer.scrollTravel * 1e6) / Int64(max(1, steps - 1))
            guard let (_, frame) = shown.last(where: { $0.micros <= newest - delay }) else {
                bytes += [0, 0, 0]
                continue
            }
            let levels = [frame.bass, frame.mid, frame.treble].map { pow(Double($0) / 255, gamma) }
            let fade = pow(Double(StripRenderer.scrollEndLight), Double(step) / Double(max(1, steps - 1)))
            for channel in 0..<3 {
                var light = 0.0
                for band in 0..<3 {
                    let color = palette.colors[band]
                    light += Double([color.red, color.green, color.blue][channel]) / 255 * levels[band]
                }
                bytes.append(UInt8((min(light, 1) * fade * Double(brightness) * 255).rounded()))
            }
        }
        return bytes
    }

    @Test("energy: each band's bar grows from the centre to the ends with its level", arguments: [30, 300])
    func energy(pixels: Int) {
        var renderer = StripRenderer(pixels: pixels, effect: .energy, gamma: 1)
        renderer.render(LevelFrame(bass: 255, mid: 128, treble: 0), at: 0)
        let centre = pixels / 2
        #expect(pixel(renderer, centre) == [255, 255, 0])
        #expect(pixel(renderer, 0) == [255, 0, 0] || pixel(renderer, 0)[0] == 255 && pixel(renderer, 0)[1] < 255)
        #expect(pixel(renderer, pixels - 1)[0] == 255)
        // Mid reaches about half-way out: a pixel at 3/4 of the way has no green.
        let outer = centre + (pixels / 2) * 3 / 4
        #expect(pixel(renderer, outer)[1] == 0)
        #expect(pixel(renderer, outer)[0] == 255)
    }

    @Test("flash: the whole strip on a bass onset, fading by e every flashDecay; no new flash while the bass stays up")
    func flash() {
        var renderer = StripRenderer(pixels: 20, effect: .flash, gamma: 1)
        renderer.render(LevelFrame(bass: 0, mid: 0, treble: 0), at: 0)
        #expect(renderer.pixels.allSatisfy { $0 == 0 })
        renderer.render(LevelFrame(bass: 220, mid: 0, treble: 0), at: 0.01)
        #expect((0..<20).allSatisfy { pixel(renderer, $0) == [255, 0, 0] })
        renderer.render(LevelFrame(bass: 220, mid: 0, treble: 0), at: 0.01 + StripRenderer.flashDecay)
        #expect(pixel(renderer, 5)[0] == 94)  // 255 / e
        renderer.render(LevelFrame(bass: 230, mid: 0, treble: 0), at: 0.3)
        #expect(
            pixel(renderer, 5)[0] == 23, "the bass held up: no new onset, the first one faded (255 · e^(−0.29/0.12))")
        renderer.render(LevelFrame(bass: 0, mid: 0, treble: 0), at: 0.4)
        renderer.render(LevelFrame(bass: 200, mid: 0, treble: 0), at: 0.45)
        #expect(pixel(renderer, 5)[0] == 255, "a new beat")
    }

    @Test("the wiring check: first red, last blue; the runner green; then dark")
    func check() {
        var renderer = StripRenderer(pixels: 8, effect: .scroll)
        renderer.render(StripCheck.Step.ends)
        #expect(pixel(renderer, 0) == [255, 0, 0])
        #expect(pixel(renderer, 7) == [0, 0, 255])
        #expect((1..<7).allSatisfy { pixel(renderer, $0) == [0, 0, 0] })
        renderer.render(StripCheck.Step.runner(3))
        #expect(pixel(renderer, 3) == [0, 255, 0])
        #expect(renderer.pixels.filter { $0 != 0 }.count == 1)
        renderer.render(StripCheck.Step.dark)
        #expect(renderer.pixels.allSatisfy { $0 == 0 })
    }

    @Test("the check's sequence: ends for 2 s, then every pixel in turn, then dark", arguments: [8, 300])
    func checkSequence(pixels: Int) {
        let check = StripCheck(pixels: pixels)
        #expect(check.step(at: 0) == .ends)
        #expect(check.step(at: 1.99) == .ends)
        #expect(check.step(at: 2.0) == .runner(0))
        #expect(check.step(at: check.duration - check.runnerStep / 2) == .runner(pixels - 1))
        #expect(check.step(at: check.duration + 0.01) == .dark)
        #expect(check.steps.count == pixels + 2)
        #expect(check.runnerStep >= StripCheck.shortestStep)
    }

    @Test("the check's steps keep its grid, but a late one stays up at least half its time and the next catch up")
    func checkPacing() {
        // On time: the next step at its place on the grid.
        #expect(
            StripCheck.nextStep(due: .seconds(2), seconds: 0.25, shown: .seconds(2)) == (.seconds(2.25), .seconds(2.25))
        )
        // Shown 0.6 s late: up for half its time, the grid kept for the steps after it.
        let late = StripCheck.nextStep(due: .seconds(2), seconds: 0.25, shown: .seconds(2.6))
        #expect(late == (.seconds(2.25), .seconds(2.725)))
        // Still behind: half a step each, until the grid is met again.
        #expect(StripCheck.nextStep(due: late.due, seconds: 0.25, shown: late.at) == (.seconds(2.5), .seconds(2.85)))
        #expect(
            StripCheck.nextStep(due: .seconds(4), seconds: 0.25, shown: .seconds(3.9)) == (
                .seconds(4.25), .seconds(4.25)
            ))
    }

    @Test("a strip fixture on DDP draws the same pixels as the strip renderer")
    func fixtureUsesTheSameRenderer() throws {
        var strip = Fixture(name: "s", target: "ddp://10.0.0.9")
        strip.layout = .energy
        strip.pixels = 30
        strip.gamma = 1
        let device = try LightingTarget(parsing: "ddp://10.0.0.9")
        var fixtures = FixtureRenderer(patch: try LightingPatch(target: device, fixtures: [strip]))
        var renderer = StripRenderer(pixels: 30, effect: .energy, gamma: 1)
        let frame = LevelFrame(bass: 200, mid: 90, treble: 30)
        fixtures.render(frame, at: 1)
        renderer.render(frame, at: 1)
        #expect(fixtures.buffers[0] == renderer.pixels)
    }
}

@Suite("WS2812 over SPI: 3 SPI bits per LED bit, colour orders, the frame's size and time")
struct WS2812EncodingTests {
    /// The LED bytes back from SPI bytes (110 = 1, 100 = 0), as an independent decoder would.
    func decode(_ spi: [UInt8]) -> [UInt8] {
        var bits: [Bool] = []
        for byte in spi { for bit in (0..<8).reversed() { bits.append(byte >> UInt8(bit) & 1 == 1) } }
        var bytes: [UInt8] = []
        var index = 0
        var current: UInt8 = 0
        var count = 0
        while index + 3 <= bits.count, bits[index] {
            current = current << 1 | (bits[index + 1] ? 1 : 0)
            count += 1
            if count == 8 {
                bytes.append(current)
                current = 0
                count = 0
            }
            index += 3
        }
        return bytes
    }

    @Test("a byte is 24 SPI bits: 0x80 → 110 then seven 100s")
    func table() {
        var spi = [UInt8](repeating: 0xff, count: WS2812Encoding.frameBytes(pixels: 1, channels: 3))
        WS2812Encoding.encode(rgb: [0, 0x80, 0], order: ColorOrder(parsing: "grb")!, into: &spi)
        // G = 0x80 first: 110 100 100 100 100 100 100 100 = 1101 0010 0100 1001 0010 0100
        #expect(Array(spi[0..<3]) == [0xD2, 0x49, 0x24])
        #expect(Array(spi[3..<9]) == [0x92, 0x49, 0x24, 0x92, 0x49, 0x24])  // R, B = 0
        #expect(spi[9...].allSatisfy { $0 == 0 }, "the reset: 90 zero bytes")
        #expect(spi.count == 9 + 90)
    }

    @Test("pixels decode back in the wire order", arguments: ["grb", "rgb", "brg"])
    func orders(order: String) {
        let rgb: [UInt8] = [10, 20, 30, 255, 0, 128]
        var spi = [UInt8](repeating: 0, count: WS2812Encoding.frameBytes(pixels: 2, channels: 3))
        WS2812Encoding.encode(rgb: rgb, order: ColorOrder(parsing: order)!, into: &spi)
        let wire = decode(spi)
        let index: [Character: Int] = ["r": 0, "g": 1, "b": 2]
        let expected = (0..<2).flatMap { pixel in order.map { rgb[3 * pixel + index[$0]!] } }
        #expect(wire == expected)
    }

    @Test("RGBW: white takes what red, green and blue share")
    func rgbw() {
        var spi = [UInt8](repeating: 0, count: WS2812Encoding.frameBytes(pixels: 1, channels: 4))
        WS2812Encoding.encode(rgb: [200, 250, 100], order: StripLED.sk6812Rgbw.defaultOrder, into: &spi)
        #expect(decode(spi) == [150, 100, 0, 100])
    }

    @Test("300 RGB pixels: 2790 bytes, 9.3 ms on the wire at 2.4 MHz")
    func size() {
        #expect(WS2812Encoding.frameBytes(pixels: 300, channels: 3) == 2790)
        #expect(abs(WS2812Encoding.wireSeconds(pixels: 300, channels: 3) - 0.0093) < 0.0001)
    }

    @Test("colour orders: each colour once; w only with all three")
    func colorOrders() {
        #expect(ColorOrder(parsing: "GRB")?.channels == [1, 0, 2])
        #expect(ColorOrder(parsing: "grbw")?.channels == [1, 0, 2, 3])
        #expect(ColorOrder(parsing: "rrb") == nil)
        #expect(ColorOrder(parsing: "rg") == nil)
        #expect(ColorOrder(parsing: "rgx") == nil)
    }

    @Test("a long strip is reduced to 150 pixels for the page, each the brightest of its run")
    func preview() {
        let rgb: [UInt8] = (0..<300).flatMap { index -> [UInt8] in [index % 2 == 0 ? 200 : 100, 0, 0] }
        let reduced = StripPreview.reduce(rgb)
        #expect(reduced.count == 450)
        #expect(reduced[0] == 200)
        #expect(StripPreview.reduce([1, 2, 3]) == [1, 2, 3])
    }
}
