import LightOrganCore
import LightOrganOutput
import Synchronization
import Testing

/// A strip device that keeps every frame it is sent (the unit test's stand-in for spidev).
final class RecordingStripDevice: StripDevice {
    let path = "recording"
    let frames = Mutex<[[UInt8]]>([])
    private let closedFlag = Atomic<Bool>(false)
    var closed: Bool { closedFlag.load(ordering: .relaxed) }
    var notes: [String] { [] }
    var appliesGamma: Bool { false }

    func write(rgb: [UInt8]) throws(StripError) { frames.withLock { $0.append(rgb) } }

    func close() { closedFlag.store(true, ordering: .relaxed) }

    /// Waits up to 2 s for a frame that `matches`.
    func waitFor(_ matches: ([UInt8]) -> Bool) async -> Bool {
        for _ in 0..<200 {
            if frames.withLock({ $0.contains(where: matches) }) { return true }
            try? await Task.sleep(for: .milliseconds(10))
        }
        return false
    }
}

@Suite("LED strip output: the writer thread, the check and the dark end")
struct LEDStripTests {
    func settings(pixels: Int = 9, effect: StripEffect = .segments) -> StripSettings {
        var settings = StripSettings()
        settings.device = "recording"
        settings.pixels = pixels
        settings.effect = effect
        settings.gamma = 1
        settings.brightness = 100
        return settings
    }

    @Test("frames reach the device as pixels; shut down writes a dark frame last and closes it")
    func framesThenDark() async throws {
        let device = RecordingStripDevice()
        let strip = LEDStrip(device: device, settings: settings())
        try strip.show(LevelFrame(bass: 255, mid: 0, treble: 200))
        let lit: [UInt8] = [
            255, 0, 0, 255, 0, 0, 255, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 200, 0, 0, 200, 0, 0, 200,
        ]
        #expect(await device.waitFor { $0 == lit })
        #expect(strip.stripPixels() == lit)
        strip.shutDown()
        #expect(device.frames.withLock { $0.last } == [UInt8](repeating: 0, count: 27))
        #expect(device.closed)
    }

    @Test("a strip opened is written dark at once, before any frame (whatever it showed before)")
    func darkFromTheStart() async {
        let device = RecordingStripDevice()
        let strip = LEDStrip(device: device, settings: settings())
        #expect(await device.waitFor { $0 == [UInt8](repeating: 0, count: 27) })
        strip.shutDown()
    }

    @Test("the strip's check: ends, then a runner; a line's check or none leaves it dark")
    func check() async throws {
        let device = RecordingStripDevice()
        let strip = LEDStrip(device: device, settings: settings(pixels: 4))
        try strip.showCheck(.strip(.ends))
        #expect(await device.waitFor { $0 == [255, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 255] })
        try strip.showCheck(.strip(.runner(2)))
        #expect(await device.waitFor { $0 == [0, 0, 0, 0, 0, 0, 0, 255, 0, 0, 0, 0] })
        try strip.showCheck(.line(band: .bass, offset: 5))
        #expect(await device.waitFor { $0 == [UInt8](repeating: 0, count: 12) })
        strip.shutDown()
    }

    @Test("the page's changes: another effect and a lower brightness from the next frame on")
    func changes() async throws {
        let device = RecordingStripDevice()
        let strip = LEDStrip(device: device, settings: settings(pixels: 3, effect: .segments))
        strip.apply(.stripEffect(.blend))
        strip.apply(.stripBrightness(50))
        try strip.show(LevelFrame(bass: 255, mid: 0, treble: 0))
        #expect(await device.waitFor { $0 == [128, 0, 0, 128, 0, 0, 128, 0, 0] })
        #expect(strip.strips.first?.effect == .blend)
        strip.shutDown()
    }

    @Test("lamps and strip together: a line's check darkens the strip, the strip's check darkens the lamps")
    func combined() async throws {
        let device = RecordingStripDevice()
        let strip = LEDStrip(device: device, settings: settings(pixels: 3))
        var combined = CombinedOutput(lamps: StdoutLinesRecorder(), strip: strip)
        try combined.show(LevelFrame(bass: 255, mid: 255, treble: 255))
        #expect(await device.waitFor { $0 == [255, 0, 0, 0, 255, 0, 0, 0, 255] })
        try combined.showCheck(.strip(.ends))
        #expect(await device.waitFor { $0 == [255, 0, 0, 0, 0, 0, 0, 0, 255] })
        #expect(combined.strips.count == 1)
        combined.shutDown()
        #expect(device.closed)
    }
}

/// Lamps that only remember what they were told (no terminal, no stdout).
struct StdoutLinesRecorder: LevelOutput {
    mutating func show(_ frame: LevelFrame) throws {}
    mutating func shutDown() {}
}
