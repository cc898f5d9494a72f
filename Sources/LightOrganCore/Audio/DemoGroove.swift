#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A synthesised groove for the demo: kick, snare, hi-hat, a bass line and chord stabs at 120 BPM.
///
/// Endless, deterministic (the noise comes from a fixed-seed generator) and made so that each lamp
/// has its own part: the kick and the bass line drive bass, snare body and chords drive mid,
/// hi-hats and snare rattle drive treble. Every eighth bar drops the drums, so the lamps also
/// show the AGC settling. Mono at 44.1 kHz, peaks below 0.9 full scale.
public struct DemoGroove: AudioSource {
    public let format = AudioFormat(sampleRate: 44_100, channels: 1)

    /// Beats per minute.
    public static let tempo = 120.0
    private static let sixteenth = 60.0 / tempo / 4
    /// Bass roots per bar (Hz): A1, F1, C2, G1.
    private static let bassRoots: [Double] = [55.0, 43.65, 65.41, 49.0]
    /// Chord tones per bar (Hz): A minor, F major, C major, G major, in the 200–700 Hz range.
    private static let chords: [[Double]] = [
        [220.0, 261.63, 329.63], [220.0, 261.63, 349.23], [261.63, 329.63, 392.0], [246.94, 293.66, 392.0],
    ]

    private var sampleIndex = 0
    private var noiseState: UInt32 = 0x1234_5678
    private var hatFilter = Biquad.highPass(frequency: 7000, q: 0.7, sampleRate: 44_100)
    private var snareFilter = Biquad.highPass(frequency: 1500, q: 0.7, sampleRate: 44_100)

    public init() {}

    public mutating func read(frames: Int) -> [Float] {
        var block = [Float](repeating: 0, count: frames)
        for index in 0..<frames { block[index] = nextSample() }
        return block
    }

    private mutating func nextSample() -> Float {
        let time = Double(sampleIndex) / format.sampleRate
        sampleIndex += 1
        let step = Int(time / Self.sixteenth)  // sixteenth notes since the start
        let stepInBar = step % 16
        let bar = step / 16
        let drumsPlay = bar % 8 != 7
        let noise = nextNoise()

        var mix = 0.0
        if drumsPlay {
            // Kick on every beat: a sine falling from 120 to 45 Hz.
            let sinceBeat = time - Double(step - step % 4) * Self.sixteenth
            let sweep = 45 * sinceBeat + 75 * 0.03 * (1 - exp(-sinceBeat / 0.03))
            mix += 0.8 * sin(2 * .pi * sweep) * exp(-sinceBeat / 0.16)
            // Snare on beats 2 and 4: a 185 Hz body and bright noise.
            if stepInBar / 4 % 2 == 1 {
                let sinceSnare = time - Double(step - step % 4) * Self.sixteenth
                mix += 0.35 * sin(2 * .pi * 185 * sinceSnare) * exp(-sinceSnare / 0.05)
                mix += 0.5 * Double(snareFilter.process(noise)) * exp(-sinceSnare / 0.09)
            } else {
                _ = snareFilter.process(noise)
            }
            // Hi-hat on every eighth, open on the last one of the bar.
            let hatDecay = stepInBar == 14 ? 0.18 : 0.03
            let sinceHat = time - Double(step - step % 2) * Self.sixteenth
            mix += 0.35 * Double(hatFilter.process(noise)) * exp(-sinceHat / hatDecay)
        }
        // Bass line: root on the eighths, an octave up on the off-beats.
        let root = Self.bassRoots[bar % 4] * (stepInBar % 4 == 2 ? 2 : 1)
        let sinceEighth = time - Double(step - step % 2) * Self.sixteenth
        let bassPhase = 2 * .pi * root * time
        mix += 0.3 * (sin(bassPhase) + 0.3 * sin(2 * bassPhase)) * exp(-sinceEighth / 0.07)
        // Chord stabs on the off-beat eighths.
        if stepInBar % 4 >= 2 {
            let sinceStab = time - Double(step - step % 4 + 2) * Self.sixteenth
            for tone in Self.chords[bar % 4] {
                let phase = 2 * .pi * tone * time
                mix += 0.09 * (sin(phase) + 0.2 * sin(3 * phase)) * exp(-sinceStab / 0.08)
            }
        }
        return Float(0.88 * tanh(mix))  // soft clip, peaks below 0.9
    }

    /// White noise, uniform in −1…1, from a 32-bit xorshift generator.
    private mutating func nextNoise() -> Float {
        noiseState ^= noiseState << 13
        noiseState ^= noiseState >> 17
        noiseState ^= noiseState << 5
        return Float(Int32(bitPattern: noiseState)) / Float(Int32.max)
    }
}
