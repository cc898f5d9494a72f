#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Turns frames into a strip's pixels: one renderer for a strip on the Pi (``StripEffect``) and
/// for the strip layouts of DDP/WLED fixtures.
///
/// Levels are perceptual (0…255, see ``LevelFrame``); each band's light is `(level / 255)^gamma`
/// (0…1), mixed in that linear light with the ``Palette``'s colours, scaled by ``brightness`` and
/// written as 8-bit red, green, blue per pixel in ``pixels``. Time is passed in (seconds of any
/// monotonic clock), so every effect is a pure function of the frames and their times; rendering
/// allocates nothing.
///
/// Cost: a frame's colours are mixed once in floating point; the per-pixel work (scroll's history
/// and fade, energy's bars, the brightness limit, the bytes) is integer arithmetic on light in
/// 1/65535 steps, a pixel's three channels at once in a vector where it runs on every pixel, so a
/// 300-pixel scroll costs about 4,300 instructions a frame (floating point is what a CPU without an
/// FPU, or an emulator, pays most for).
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
    public var palette: Palette {
        didSet { mixColors() }
    }
    /// Exponent from level to light.
    public let gamma: Double
    /// Light at full level, 0…1 (the strip's brightness limit: power and glare).
    public var brightness: Float {
        didSet { scaleTables() }
    }

    /// Red, green, blue of each pixel after the last render: `3 × count` bytes.
    public private(set) var pixels: [UInt8]

    private let lightTable: [Float]
    private var colors: [SIMD3<Float>] = []
    /// The palette's colours as linear light, 0…65535 a channel.
    private var fixedColors: [FixedLight] = []
    /// Distance steps from the centre to an end: pixel `count - stepCount + k` right of the centre
    /// and pixel `stepCount - 1 - k` left of it (below `count / 2`) are step `k`.
    private let stepCount: Int
    /// energy: bytes (red, green, blue) of each distance step, copied to the step's pixels
    /// (``drawSteps()``).
    private var stepBytes: [UInt8]
    /// The brightness limit as a factor from light to bytes (``byteFactor(_:)``).
    private var brightnessFactor: UInt64 = 0
    /// scroll: each step's fade toward the ends times the brightness limit, factors from light to
    /// bytes with 24 fraction bits (``scrollFactor(_:)``), one a channel.
    private var scrollFactors: [SIMD4<UInt32>] = []
    /// scroll: how far back in time each step shows, microseconds.
    private let scrollDelays: [Int64]
    /// scroll: the mixed colours of past frames (unscaled by the brightness limit; red, green,
    /// blue, 0, each 0…65535) and their times in microseconds, a ring of ``historyMask`` + 1.
    private var history: [(time: Int64, color: SIMD4<UInt32>)]
    private var historyEnd = 0
    /// The history's size less one: a power of two less one, so that an index wraps with a mask
    /// (1,024 frames: 10 s at 100 frames a second, far more than ``scrollTravel``).
    private static let historyMask = 1023
    private var historyCount = 0
    /// flash: the envelope's peak time and the bass levels of the onset window, a ring.
    private var lastOnset = -Double.infinity
    private var recentBass: [(time: Double, level: Int)]
    private var recentEnd = 0
    private var recentCount = 0

    public init(
        pixels count: Int, effect: StripEffect, palette: Palette = .standard, gamma: Double = 2.2, brightness: Float = 1
    ) {
        precondition(count >= 1, "a strip has at least one pixel")
        self.count = count
        self.effect = effect
        self.palette = palette
        self.gamma = gamma
        self.brightness = brightness
        pixels = [UInt8](repeating: 0, count: 3 * count)
        lightTable = (0...255).map { Float(pow(Double($0) / 255, gamma)) }
        let stepCount = (count + 1) / 2
        self.stepCount = stepCount
        stepBytes = [UInt8](repeating: 0, count: 3 * stepCount)
        let travel = Int64((Self.scrollTravel * 1e6).rounded())
        scrollDelays = (0..<stepCount).map { Int64($0) * travel / Int64(max(1, stepCount - 1)) }
        history = Array(repeating: (0, .zero), count: Self.historyMask + 1)
        recentBass = Array(repeating: (0, 0), count: 64)
        mixColors()
        scaleTables()
    }

    /// The palette's colours as the effects mix them.
    private mutating func mixColors() {
        colors = palette.colors.map { SIMD3(Float($0.red), Float($0.green), Float($0.blue)) / 255 }
        fixedColors = palette.colors.map {
            FixedLight(UInt32($0.red) * 257, UInt32($0.green) * 257, UInt32($0.blue) * 257)
        }
    }

    /// Draws `frame`, shown at `time` seconds, into ``pixels``, with no beat held (a beat effect draws its
    /// ``StripEffect/withoutBeat``).
    public mutating func render(_ frame: LevelFrame, at time: Double) {
        render(frame, look: .none, at: time)
    }

    /// Draws `frame` as the ``LightLook`` made it, shown at `time` seconds, into ``pixels``: the idle look as
    /// `blend` of its glow, a beat effect while `look` holds a beat, else the effect of the levels.
    public mutating func render(_ frame: LevelFrame, look: LookCue, at time: Double) {
        if look.isIdle {
            draw(frame, as: .blend, at: time)
        } else if effect.followsBeat, let beat = look.beat {
            switch effect {
            case .beatPulse:
                drawPulse(phase: beat.phase, place: look.place)
            default:
                // bpm_strobe and bar_step: the look made the levels; the strip shows them in their mixed colour.
                draw(frame, as: .blend, at: time)
            }
        } else {
            draw(frame, as: effect.withoutBeat, at: time)
        }
    }

    private mutating func draw(_ frame: LevelFrame, as effect: StripEffect, at time: Double) {
        let light = SIMD3(lightTable[Int(frame.bass)], lightTable[Int(frame.mid)], lightTable[Int(frame.treble)])
        switch effect {
        case .segments:
            for band in 0..<3 {
                let color = Self.bytes(FixedLight(colors[band] * light[band]), times: brightnessFactor)
                // Pixels whose band (pixel × 3 / count) is this one.
                fill(from: (band * count + 2) / 3, to: band == 2 ? count : ((band + 1) * count + 2) / 3, with: color)
            }
        case .blend:
            fill(from: 0, to: count, with: Self.bytes(FixedLight(mix(light)), times: brightnessFactor))
        case .scroll:
            remember(FixedLight(mix(light)), at: Int64((time * 1e6).rounded()))
            drawScroll()
        case .energy:
            drawEnergy(frame)
        case .flash:
            let envelope = flashEnvelope(bass: Int(frame.bass), at: time)
            fill(from: 0, to: count, with: Self.bytes(FixedLight(colors[0] * envelope), times: brightnessFactor))
        case .bpmStrobe, .barStep, .beatPulse:
            draw(frame, as: effect.withoutBeat, at: time)
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
        func lit(_ pixel: Int, _ color: SIMD3<Float>) {
            if pixel >= 0, pixel < count {
                fill(from: pixel, to: pixel + 1, with: Self.bytes(FixedLight(color), times: brightnessFactor))
            }
        }
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

    /// Sets the pixels `first..<end` to `color`'s bytes.
    private mutating func fill(from first: Int, to end: Int, with color: (UInt8, UInt8, UInt8)) {
        pixels.withUnsafeMutableBufferPointer { pixels in
            for pixel in first..<end {
                pixels[3 * pixel] = color.0
                pixels[3 * pixel + 1] = color.1
                pixels[3 * pixel + 2] = color.2
            }
        }
    }

    /// Copies each distance step's bytes to the pixels at that distance from the centre: the
    /// steps in order on the centre's right (pixel `count - stepCount + k` is step `k`), mirrored on
    /// its left (pixel `p` below `count / 2` is step `stepCount - 1 - p`).
    private mutating func drawSteps() {
        let count = self.count, stepCount = self.stepCount
        stepBytes.withUnsafeBufferPointer { steps in
            pixels.withUnsafeMutableBufferPointer { pixels in
                let steps = steps.baseAddress!, pixels = pixels.baseAddress!
                (pixels + 3 * (count - stepCount)).update(from: steps, count: 3 * stepCount)
                var from = steps + 3 * (stepCount - 1)
                for pixel in 0..<count / 2 {
                    pixels[3 * pixel] = from[0]
                    pixels[3 * pixel + 1] = from[1]
                    pixels[3 * pixel + 2] = from[2]
                    from -= 3
                }
            }
        }
    }

    /// The factors that depend on the brightness limit, again.
    private mutating func scaleTables() {
        let limit = min(max(brightness, 0), 1)
        brightnessFactor = Self.byteFactor(Double(limit))
        let fadePerStep = log(Double(Self.scrollEndLight)) / Double(max(1, stepCount - 1))
        scrollFactors = (0..<stepCount).map {
            SIMD4(repeating: Self.scrollFactor(exp(fadePerStep * Double($0)) * Double(limit)))
        }
    }

    // MARK: scroll

    private mutating func remember(_ color: FixedLight, at time: Int64) {
        history[historyEnd] = (time, SIMD4(color.red, color.green, color.blue, 0))
        historyEnd = (historyEnd + 1) & Self.historyMask
        historyCount = min(historyCount + 1, history.count)
    }

    /// Each distance step shows the colour of `step / steps × scrollTravel` seconds ago (the newest
    /// frame at least that old), faded exponentially toward ``scrollEndLight`` at the ends; a step
    /// older than the whole history is dark, and so is every step beyond it.
    ///
    /// This runs for every frame on every pixel of the strip, so it is written for the machine: one
    /// walk back through the history, each frame drawn on the steps whose delay it is the newest
    /// frame for (about 1.5 steps a frame at 100 frames a second); a step's three bytes made at
    /// once in a vector (light × factor, rounded, the top byte) and stored straight into both its
    /// pixels, right of the centre (pixel `count - stepCount + step`) and mirrored left of it
    /// (pixel `stepCount - 1 - step`, below `count / 2`). Each store is one 4-byte word (the left
    /// one rotated by a byte); its spare byte lands on a pixel written after it (the next step's on
    /// the right, the one before on the left), so the last step is stored byte by byte. On an odd
    /// strip step 0's left store writes the centre pixel, the same bytes as its right one.
    private mutating func drawScroll() {
        let count = self.count, stepCount = self.stepCount, historyCount = self.historyCount
        let firstLeftStep = stepCount - count / 2  // an odd strip's centre pixel is step 0's alone
        history.withUnsafeBufferPointer { history in
            scrollDelays.withUnsafeBufferPointer { delays in
                scrollFactors.withUnsafeBufferPointer { factors in
                    pixels.withUnsafeMutableBufferPointer { pixels in
                        let right = pixels.baseAddress! + 3 * (count - stepCount)
                        let left = pixels.baseAddress! + 3 * (stepCount - 1)  // step 0's mirror
                        /// The bytes of `color` at `factor`: red, green, blue, 0 from the lowest
                        /// address as a little-endian word.
                        @inline(__always) func bytes(_ color: SIMD4<UInt32>, _ factor: SIMD4<UInt32>) -> UInt32 {
                            let lanes = SIMD4<UInt8>(truncatingIfNeeded: (color &* factor &+ 0x80_0000) &>> 24)
                            return unsafeBitCast(lanes, to: UInt32.self)
                        }
                        // Pointers that move with the step (no index arithmetic to check in the loop).
                        let firstDelay = delays.baseAddress!, lastDelay = firstDelay + (stepCount - 1)
                        var delay = firstDelay, factor = factors.baseAddress!
                        var rightWord = UnsafeMutableRawPointer(right), leftWord = UnsafeMutableRawPointer(left - 1)
                        var index = (historyEnd &- 1) & Self.historyMask
                        let newest = history[index].time
                        for _ in 0..<historyCount {
                            let entry = history[index]
                            let age = newest &- entry.time
                            while delay < lastDelay, delay.pointee <= age {
                                let lit = bytes(entry.color, factor.pointee)
                                rightWord.storeBytes(of: lit, as: UInt32.self)
                                // (0, red, green, blue) from one byte lower.
                                leftWord.storeBytes(of: lit << 8 | lit >> 24, as: UInt32.self)
                                rightWord += 3
                                leftWord -= 3
                                delay += 1
                                factor += 1
                            }
                            if delay == lastDelay, delay.pointee <= age {
                                let lit = bytes(entry.color, factor.pointee), lastStep = stepCount - 1
                                for channel in 0..<3 {
                                    let byte = UInt8(truncatingIfNeeded: lit >> (8 * channel))
                                    right[3 * lastStep + channel] = byte
                                    if lastStep >= firstLeftStep { left[channel - 3 * lastStep] = byte }
                                }
                                return
                            }
                            index = (index &- 1) & Self.historyMask
                        }
                        let step = delay - firstDelay
                        // No frame is old enough for the steps from here on: dark to both ends.
                        (right + 3 * step).update(repeating: 0, count: 3 * (stepCount - step))
                        let leftDark = max(0, stepCount - max(step, firstLeftStep))
                        pixels.baseAddress!.update(repeating: 0, count: 3 * leftDark)
                    }
                }
            }
        }
    }

    // MARK: energy

    /// A step is lit by a band when the band's bar (its level as a fraction of the steps) reaches
    /// it, in proportion at the bar's tip.
    private mutating func drawEnergy(_ frame: LevelFrame) {
        // Each bar's reach in 1/256 steps.
        let reach = (
            Int(frame.bass) * stepCount * 256 / 255, Int(frame.mid) * stepCount * 256 / 255,
            Int(frame.treble) * stepCount * 256 / 255
        )
        func cover(_ reach: Int, _ step: Int) -> UInt32 { UInt32(min(max(reach - step * 256, 0), 256)) }
        let colors = (fixedColors[0], fixedColors[1], fixedColors[2]), factor = brightnessFactor
        stepBytes.withUnsafeMutableBufferPointer { bytes in
            for step in 0..<stepCount {
                var color = FixedLight()
                color.add(colors.0, times: cover(reach.0, step))
                color.add(colors.1, times: cover(reach.1, step))
                color.add(colors.2, times: cover(reach.2, step))
                let lit = Self.bytes(color, times: factor)
                bytes[3 * step] = lit.0
                bytes[3 * step + 1] = lit.1
                bytes[3 * step + 2] = lit.2
            }
        }
        drawSteps()
    }

    // MARK: beat_pulse

    /// Half-width of `beat_pulse`'s pulse, as a fraction of the distance from the centre to an end.
    public static let pulseWidth = 0.15

    /// A pulse `phase` of the way from the centre to the ends, in the palette's colour of the beat's place
    /// (beat 1 the bass colour, 2 mid, 3 treble, 4 bass again), brightest on the downbeat.
    private mutating func drawPulse(phase: Double, place: Int) {
        let color = fixedColors[max(0, place - 1) % 3]
        let accent: Double = place == 1 ? 1 : 0.7
        let last = Double(max(1, stepCount - 1)), factor = brightnessFactor
        stepBytes.withUnsafeMutableBufferPointer { bytes in
            for step in 0..<stepCount {
                let height = max(0, 1 - abs(Double(step) / last - phase) / Self.pulseWidth)
                var lit = FixedLight()
                lit.add(color, times: UInt32((accent * height * height * 256).rounded()))
                let channels = Self.bytes(lit, times: factor)
                bytes[3 * step] = channels.0
                bytes[3 * step + 1] = channels.1
                bytes[3 * step + 2] = channels.2
            }
        }
        drawSteps()
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

    // MARK: bytes

    /// The factor that turns light (0…65535) scaled by `scale` (0…1) into a byte (0…255): a fixed
    /// point number of 32 fraction bits, so a channel's byte is one multiplication and a shift.
    static func byteFactor(_ scale: Double) -> UInt64 {
        UInt64((scale * 255 / 65535 * 4_294_967_296).rounded())
    }

    /// The factor that turns light (0…65535) scaled by `scale` (0…1) into a byte with 24 fraction
    /// bits: at most 65,280, so light × factor + rounding stays within 32 bits and a vector of
    /// four lanes does a pixel's channels at once.
    static func scrollFactor(_ scale: Double) -> UInt32 {
        UInt32((min(max(scale, 0), 1) * 255 / 65535 * 16_777_216).rounded())
    }

    /// `color`'s bytes with `factor` (``byteFactor(_:)``), each channel rounded and clipped to 255.
    static func bytes(_ color: FixedLight, times factor: UInt64) -> (UInt8, UInt8, UInt8) {
        (byte(color.red, factor), byte(color.green, factor), byte(color.blue, factor))
    }

    @inline(__always)
    private static func byte(_ light: UInt32, _ factor: UInt64) -> UInt8 {
        UInt8(min((UInt64(light) &* factor &+ 0x8000_0000) >> 32, 255))
    }
}

/// Linear light of a pixel's red, green and blue, each 0…65535 for 0…1; sums may go past 1 and
/// are clipped when they become bytes.
struct FixedLight: Sendable {
    var red: UInt32 = 0, green: UInt32 = 0, blue: UInt32 = 0

    init() {}

    init(_ red: UInt32, _ green: UInt32, _ blue: UInt32) {
        self.red = red
        self.green = green
        self.blue = blue
    }

    /// `light` (0…1 a channel, more clipped to 1, less to 0) in 1/65535 steps.
    init(_ light: SIMD3<Float>) {
        let clipped = (light.clamped(lowerBound: .zero, upperBound: .one) * 65535).rounded(.toNearestOrEven)
        self.init(UInt32(clipped.x), UInt32(clipped.y), UInt32(clipped.z))
    }

    /// Adds `other` times `cover` / 256.
    mutating func add(_ other: FixedLight, times cover: UInt32) {
        red += (other.red * cover) >> 8
        green += (other.green * cover) >> 8
        blue += (other.blue * cover) >> 8
    }
}
