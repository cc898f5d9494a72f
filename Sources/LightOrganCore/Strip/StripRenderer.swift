#if os(Linux)
import FoundationEssentials
import Glibc
#else
import Foundation
#endif

/// Turns frames into a strip's pixels: one renderer for a strip on the Pi (``StripEffect``) and
/// for the strip layouts of DDP/WLED fixtures.
///
/// Levels are perceptual (0…255, see ``LevelFrame``); each band's light is `(level / 255)^gamma`
/// (0…1), mixed in that linear light with the ``Palette``'s colours, scaled by ``brightness`` and
/// written as 8-bit red, green, blue per pixel in ``pixels``. Time is passed in (seconds of any
/// monotonic clock), so every effect is a pure function of the frames and their times; rendering
/// allocates nothing.
public struct StripRenderer: Sendable {
    /// Seconds a colour of `scroll` takes from the centre to the ends.
    public static let scrollTravel = 1.0
    /// Light left at the ends of `scroll`, as a fraction of the centre's.
    public static let scrollEndLight: Float = 0.08
    /// Seconds in which a `flash` falls to 1/e of its peak.
    public static let flashDecay = 0.12
    /// `flash`: a bass onset is the bass level rising to at least this (0…255)…
    public static let onsetLevel = 128
    /// …by at least this many levels above its lowest of the last ``onsetWindow`` seconds…
    public static let onsetRise = 64
    /// …the window of that lowest level, seconds…
    public static let onsetWindow = 0.1
    /// …and no sooner than this after the previous onset, seconds.
    public static let onsetSpacing = 0.15

    /// Pixels of the strip, at least 1.
    public let count: Int
    /// The effect drawn.
    public var effect: StripEffect
    /// Colours of bass, mid, treble.
    public let palette: Palette
    /// Exponent from level to light.
    public let gamma: Double
    /// Light at full level, 0…1 (the strip's brightness limit: power and glare).
    public var brightness: Float

    /// Red, green, blue of each pixel after the last render: `3 × count` bytes.
    public private(set) var pixels: [UInt8]

    private let lightTable: [Float]
    private let colors: [SIMD3<Float>]
    /// Each pixel's distance from the centre in steps (0 at the centre), and the steps there are.
    private let steps: [Int]
    private let stepCount: Int
    /// Linear light of each distance step, reused by scroll and energy.
    private var stepLight: [SIMD3<Float>]
    /// scroll: the mixed colours of past frames and their times, a ring.
    private var history: [(time: Double, color: SIMD3<Float>)]
    private var historyEnd = 0
    private var historyCount = 0
    /// flash: the envelope's peak time and the bass levels of the onset window, a ring.
    private var lastOnset = -Double.infinity
    private var recentBass: [(time: Double, level: Int)]
    private var recentEnd = 0
    private var recentCount = 0

    public init(pixels count: Int, effect: StripEffect, palette: Palette = .standard, gamma: Double = 2.2, brightness: Float = 1) {
        precondition(count >= 1, "a strip has at least one pixel")
        self.count = count
        self.effect = effect
        self.palette = palette
        self.gamma = gamma
        self.brightness = brightness
        pixels = [UInt8](repeating: 0, count: 3 * count)
        lightTable = (0...255).map { Float(pow(Double($0) / 255, gamma)) }
        colors = palette.colors.map { SIMD3(Float($0.red), Float($0.green), Float($0.blue)) / 255 }
        steps = (0..<count).map { abs(2 * $0 - (count - 1)) / 2 }
        stepCount = (count + 1) / 2
        stepLight = Array(repeating: .zero, count: (count + 1) / 2)
        history = Array(repeating: (0, .zero), count: 1024)
        recentBass = Array(repeating: (0, 0), count: 64)
    }

    /// Draws `frame`, shown at `time` seconds, into ``pixels``.
    public mutating func render(_ frame: LevelFrame, at time: Double) {
        let light = SIMD3(lightTable[Int(frame.bass)], lightTable[Int(frame.mid)], lightTable[Int(frame.treble)])
        switch effect {
        case .segments:
            for pixel in 0..<count {
                let band = min(2, pixel * 3 / count)
                write(pixel, colors[band] * light[band])
            }
        case .blend:
            let mixed = mix(light)
            for pixel in 0..<count { write(pixel, mixed) }
        case .scroll:
            remember(mix(light), at: time)
            drawScroll(at: time)
        case .energy:
            drawEnergy(frame)
        case .flash:
            let envelope = flashEnvelope(bass: Int(frame.bass), at: time)
            let color = colors[0] * envelope
            for pixel in 0..<count { write(pixel, color) }
        }
    }

    /// Every pixel dark, and the effects' memory of the past forgotten.
    public mutating func clear() {
        for index in pixels.indices { pixels[index] = 0 }
        historyCount = 0
        recentCount = 0
        lastOnset = -.infinity
    }

    /// Sets ``pixels`` to one step of the strip's wiring check (``StripCheck``).
    public mutating func render(_ step: StripCheck.Step) {
        for index in pixels.indices { pixels[index] = 0 }
        func lit(_ pixel: Int, _ color: SIMD3<Float>) { if pixel >= 0, pixel < count { write(pixel, color) } }
        switch step {
        case .ends:
            lit(count - 1, SIMD3(0, 0, 1))
            lit(0, SIMD3(1, 0, 0))
        case .runner(let pixel):
            lit(pixel, SIMD3(0, 1, 0))
        case .dark:
            break
        }
    }

    /// The bands' colours added in proportion to their light.
    private func mix(_ light: SIMD3<Float>) -> SIMD3<Float> {
        colors[0] * light[0] + colors[1] * light[1] + colors[2] * light[2]
    }

    /// Writes `color` (linear light, each channel clipped to 0…1) times the brightness to `pixel`.
    private mutating func write(_ pixel: Int, _ color: SIMD3<Float>) {
        let scaled = color * brightness
        pixels[3 * pixel] = Self.byte(scaled.x)
        pixels[3 * pixel + 1] = Self.byte(scaled.y)
        pixels[3 * pixel + 2] = Self.byte(scaled.z)
    }

    // MARK: scroll

    private mutating func remember(_ color: SIMD3<Float>, at time: Double) {
        history[historyEnd] = (time, color)
        historyEnd = (historyEnd + 1) % history.count
        historyCount = min(historyCount + 1, history.count)
    }

    /// Each distance step shows the colour of `step / steps × scrollTravel` seconds ago (the newest
    /// frame at least that old), faded exponentially toward ``scrollEndLight`` at the ends.
    private mutating func drawScroll(at time: Double) {
        let fadePerStep = log(Self.scrollEndLight) / Float(max(1, stepCount - 1))
        var back = 0  // frames back from the newest, walked as the steps go further into the past
        for step in 0..<stepCount {
            let wanted = time - Double(step) / Double(max(1, stepCount - 1)) * Self.scrollTravel
            while back < historyCount - 1, entry(back).time > wanted + 1e-9 { back += 1 }
            let found = entry(back)
            stepLight[step] = found.time <= wanted + 1e-9 ? found.color * exp(fadePerStep * Float(step)) : .zero
        }
        for pixel in 0..<count { write(pixel, stepLight[steps[pixel]]) }
    }

    private func entry(_ back: Int) -> (time: Double, color: SIMD3<Float>) {
        history[(historyEnd - 1 - back + 2 * history.count) % history.count]
    }

    // MARK: energy

    /// A step is lit by a band when the band's bar (its level as a fraction of the steps) reaches
    /// it, in proportion at the bar's tip.
    private mutating func drawEnergy(_ frame: LevelFrame) {
        let reach = SIMD3(Float(frame.bass), Float(frame.mid), Float(frame.treble)) / 255 * Float(stepCount)
        for step in 0..<stepCount {
            var color = SIMD3<Float>.zero
            for band in 0..<3 {
                let cover = min(max(reach[band] - Float(step), 0), 1)
                color += colors[band] * cover
            }
            stepLight[step] = color
        }
        for pixel in 0..<count { write(pixel, stepLight[steps[pixel]]) }
    }

    // MARK: flash

    /// 1 at a bass onset, falling by e every ``flashDecay`` seconds.
    private mutating func flashEnvelope(bass: Int, at time: Double) -> Float {
        var lowest = bass
        for back in 0..<recentCount {
            let entry = recentBass[(recentEnd - 1 - back + recentBass.count) % recentBass.count]
            guard time - entry.time <= Self.onsetWindow else { break }
            lowest = min(lowest, entry.level)
        }
        recentBass[recentEnd] = (time, bass)
        recentEnd = (recentEnd + 1) % recentBass.count
        recentCount = min(recentCount + 1, recentBass.count)
        if bass >= Self.onsetLevel, bass - lowest >= Self.onsetRise, time - lastOnset >= Self.onsetSpacing {
            lastOnset = time
        }
        let age = time - lastOnset
        return age.isFinite ? Float(exp(-age / Self.flashDecay)) : 0
    }

    /// 0…1 → 0…255, rounded, clipped.
    static func byte(_ unit: Float) -> UInt8 {
        guard unit > 0 else { return 0 }
        guard unit < 1 else { return 255 }
        return UInt8((unit * 255).rounded())
    }
}
