import LightOrganCore
import Testing

@Suite("Strip renderer: the beat effects and the idle look, from a look's cue to pixels")
struct StripBeatEffectTests {
    private let beat = BeatState(beat: 1, bpm: 120, phase: 0, confidence: 1)

    @Test("bpm_strobe on the beat: the whole strip in the mixed colour of the look's levels")
    func strobe() {
        var renderer = StripRenderer(pixels: 30, effect: .bpmStrobe, gamma: 1)
        var look = LightLook(effect: .bpmStrobe)
        let (levels, cue) = look.look(LevelFrame(bass: 90, mid: 0, treble: 0), beat: beat, at: 0)
        renderer.render(levels, look: cue, at: 0)
        for index in 0..<30 { #expect(pixel(renderer, index) == [255, 255, 255]) }
    }

    @Test("bar_step: the strip takes the palette's next colour on each downbeat")
    func barStep() {
        var renderer = StripRenderer(pixels: 12, effect: .barStep, gamma: 1)
        var look = LightLook(effect: .barStep)
        var colors: [[UInt8]] = []
        for bar in 0..<3 {
            let (levels, cue) = look.look(LevelFrame(bass: 255, mid: 0, treble: 0), beat: beat, at: Double(bar) * 2)
            renderer.render(levels, look: cue, at: Double(bar) * 2)
            colors.append(pixel(renderer, 5))
        }
        #expect(colors == [[0, 255, 0], [0, 0, 255], [255, 0, 0]])
    }

    @Test("beat_pulse: the pulse lies at the beat's phase from the centre, in the colour of the beat's place")
    func pulse() {
        var renderer = StripRenderer(pixels: 41, effect: .beatPulse, gamma: 1)
        for (phase, place) in [(0.0, 1), (0.5, 2), (0.9, 3)] {
            let cue = LookCue(beat: BeatState(beat: 0, bpm: 120, phase: phase, confidence: 1), place: place)
            renderer.render(.off, look: cue, at: 0)
            let brightest = (20..<41).max { pixel(renderer, $0).max()! < pixel(renderer, $1).max()! }!
            let distance = Double(brightest - 20) / 20
            #expect(abs(distance - phase) <= 0.05, "phase \(phase): brightest at \(distance)")
            let channel = (place - 1) % 3
            #expect(pixel(renderer, brightest)[channel] > 0)
            #expect(pixel(renderer, 40 - brightest) == pixel(renderer, brightest), "mirrored")
        }
    }

    @Test("a beat effect with no beat held draws its effect of the levels (bpm_strobe: flash, bar_step: blend)")
    func withoutBeat() {
        var strobe = StripRenderer(pixels: 10, effect: .bpmStrobe, gamma: 1)
        strobe.render(.off, at: 0)
        strobe.render(LevelFrame(bass: 255, mid: 0, treble: 0), at: 0.05)
        #expect(pixel(strobe, 3) == [255, 0, 0])
        var step = StripRenderer(pixels: 10, effect: .barStep, gamma: 1)
        step.render(LevelFrame(bass: 0, mid: 255, treble: 0), look: .none, at: 0)
        #expect(pixel(step, 3) == [0, 255, 0])
    }

    @Test("the idle look shows as blend whatever the effect: flash, dark between beats, glows too")
    func idleGlows() {
        var renderer = StripRenderer(pixels: 10, effect: .flash, gamma: 1)
        renderer.render(LevelFrame(bass: 100, mid: 100, treble: 100), look: LookCue(isIdle: true), at: 0)
        #expect(pixel(renderer, 0) == [100, 100, 100])
    }
}
