#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Turns frames into the channel values of one target's fixtures: a buffer per universe (DDP:
/// one buffer, the device's bytes from offset 0), ready to be put in packets.
///
/// Levels are perceptual (0…255, see ``LevelFrame``); each fixture turns them into light with its
/// own gamma (`(level / 255)^gamma`), mixes colours in that linear light, and writes 8-bit channels.
/// Channels no fixture uses stay 0. Rendering allocates nothing.
public struct FixtureRenderer: Sendable {
    /// The patch it renders.
    public let patch: LightingPatch
    /// Channel values of each universe of ``LightingPatch/universes``, in that order; each holds
    /// ``slotCounts`` meaningful channels (a universe: 512 at most).
    public private(set) var buffers: [[UInt8]]
    /// Channels used in each buffer: up to the highest one any fixture uses, rounded up to an even
    /// count (Art-Net wants an even length; sACN and DDP accept it).
    public let slotCounts: [Int]
    /// Light (0…1) of each level for each fixture's gamma.
    private let lightTables: [[Float]]
    /// One fixture's channels, reused.
    private var scratch: [UInt8]
    /// The strip renderer of each strip fixture (nil for the others).
    private var strips: [StripRenderer?]

    public init(patch: LightingPatch) {
        self.patch = patch
        var slotCounts: [Int] = []
        for universe in patch.universes {
            let end = patch.spans.filter { $0.universe == universe }.map { $0.channel + $0.count }.max() ?? 0
            // DDP takes any length; a universe an even one of at least 2.
            slotCounts.append(patch.target.kind == .ddp ? end : max(2, end + end % 2))
        }
        self.slotCounts = slotCounts
        buffers = slotCounts.map { [UInt8](repeating: 0, count: $0) }
        lightTables = patch.fixtures.map { fixture in
            (0...255).map { level in Float(pow(Double(level) / 255, fixture.gamma)) }
        }
        scratch = [UInt8](repeating: 0, count: patch.fixtures.map(\.channelCount).max() ?? 0)
        strips = patch.fixtures.map { fixture in
            fixture.layout.stripEffect.map {
                StripRenderer(pixels: fixture.pixels, effect: $0, palette: fixture.palette, gamma: fixture.gamma)
            }
        }
    }

    /// Fills ``buffers`` with `frame`, shown at `time` seconds of ``MonotonicClock`` (the strip
    /// effects that move take their time from it).
    public mutating func render(_ frame: LevelFrame, at time: Double = MonotonicClock.seconds()) {
        for (index, fixture) in patch.fixtures.enumerated() {
            if strips[index] != nil {
                strips[index]!.render(frame, at: time)
                let pixels = strips[index]!.pixels
                for channel in pixels.indices { scratch[channel] = pixels[channel] }
            } else {
                let table = lightTables[index]
                let light = SIMD3(table[Int(frame.bass)], table[Int(frame.mid)], table[Int(frame.treble)])
                Self.channels(of: fixture, light: light, into: &scratch)
            }
            for span in patch.spans where span.fixture == index {
                let buffer = patch.universes.firstIndex(of: span.universe)!
                for offset in 0..<span.count {
                    buffers[buffer][span.channel + offset] = scratch[span.fixtureChannel + offset]
                }
            }
        }
    }

    /// Fills ``buffers`` with one step of the patch check: its channels at 255, every other 0.
    public mutating func render(_ step: PatchCheck.Step) {
        for index in buffers.indices {
            for channel in buffers[index].indices { buffers[index][channel] = 0 }
        }
        for span in patch.spans where span.fixture == step.fixture {
            let buffer = patch.universes.firstIndex(of: span.universe)!
            for offset in 0..<span.count where step.channels.contains(span.fixtureChannel + offset) {
                buffers[buffer][span.channel + offset] = 255
            }
        }
    }

    /// The channels of a lamp fixture (not a strip: ``StripRenderer`` draws those) for the bands'
    /// light (each 0…1), into the first ``Fixture/channelCount`` bytes of `channels`.
    static func channels(of fixture: Fixture, light bands: SIMD3<Float>, into channels: inout [UInt8]) {
        switch fixture.layout {
        case .dimmers:
            for band in 0..<3 { channels[band] = byte(bands[band]) }
        case .rgb:
            let (red, green, blue) = mix(bands, fixture.palette)
            channels[0] = red
            channels[1] = green
            channels[2] = blue
        case .rgbw:
            let (red, green, blue) = mix(bands, fixture.palette)
            let white = min(red, green, blue)
            channels[0] = red - white
            channels[1] = green - white
            channels[2] = blue - white
            channels[3] = white
        case .segments, .blend, .scroll, .energy, .flash:
            preconditionFailure("strip layouts are drawn by StripRenderer")
        }
    }

    /// The bands' colours added in proportion to their light, each channel clipped at full.
    private static func mix(_ bands: SIMD3<Float>, _ palette: Palette) -> (UInt8, UInt8, UInt8) {
        var red: Float = 0
        var green: Float = 0
        var blue: Float = 0
        for band in 0..<3 {
            let color = palette.colors[band]
            red += bands[band] * Float(color.red) / 255
            green += bands[band] * Float(color.green) / 255
            blue += bands[band] * Float(color.blue) / 255
        }
        return (byte(red), byte(green), byte(blue))
    }

    /// 0…1 → 0…255, rounded, clipped.
    private static func byte(_ unit: Float) -> UInt8 {
        guard unit > 0 else { return 0 }
        guard unit < 1 else { return 255 }
        return UInt8((unit * 255).rounded())
    }
}
