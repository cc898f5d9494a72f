import LightOrganCore
import Testing

/// What the tracker says of a frame with no beat held: analysed here, no tempo.
private let quiet = BeatState.none

/// A beat held at `bpm`, with `place` on the frame (0: between beats) and `phase`.
private func held(_ place: Int = 0, bpm: Double = 120, phase: Double = 0) -> BeatState {
    BeatState(beat: place, bpm: bpm, phase: phase, confidence: 1)
}

/// Feeds `look` frames every 10 ms from `start` for `seconds`; the levels of the last frame.
@discardableResult
private func feed(
    _ look: inout LightLook, _ frame: LevelFrame, beat: BeatState?, from start: Double, seconds: Double
) -> LevelFrame {
    var last = LevelFrame.off
    for index in 0..<Int((seconds * 100).rounded()) {
        last = look.look(frame, beat: beat, at: start + Double(index) / 100).levels
    }
    return last
}

@Suite("Light look: the idle look after a while without music, and back on the first beat")
struct IdleLookTests {
    @Test("dark, the default, shows the levels as they are however long the silence")
    func darkChangesNothing() {
        var look = LightLook()
        #expect(feed(&look, .off, beat: quiet, from: 0, seconds: 30) == .off)
        #expect(!look.isIdle)
        let speech = LevelFrame(bass: 40, mid: 120, treble: 30)
        #expect(look.look(speech, beat: quiet, at: 30).levels == speech)
    }

    @Test("breathe starts after idle_after seconds of silence, not before", arguments: [2.0, 10.0])
    func breatheStartsAfterIdleAfter(idleAfter: Double) {
        var look = LightLook(idle: .breathe, idleAfter: idleAfter)
        feed(&look, .off, beat: quiet, from: 0, seconds: idleAfter - 0.05)
        #expect(!look.isIdle)
        feed(&look, .off, beat: quiet, from: idleAfter - 0.05, seconds: 0.1)
        #expect(look.isIdle)
    }

    @Test("breathe rises from dark to the glow's level in half a breath and falls again, on every lamp alike")
    func breatheGlows() {
        var look = LightLook(idle: .breathe, idleAfter: 1)
        feed(&look, .off, beat: quiet, from: 0, seconds: 1.01)
        #expect(look.isIdle)
        let start = look.look(.off, beat: quiet, at: 1.01).levels
        let peak = look.look(.off, beat: quiet, at: 1.0 + LightLook.breathePeriod / 2).levels
        let end = look.look(.off, beat: quiet, at: 1.0 + LightLook.breathePeriod - 0.01).levels
        #expect(start.bass < 5)
        #expect(abs(Int(peak.bass) - Int((LightLook.glowLevel * 255).rounded())) <= 1)
        #expect(peak.bass == peak.mid && peak.mid == peak.treble)
        #expect(end.bass < 5)
    }

    @Test("drift moves the glow from band to band: each lamp peaks a third of a round after the one before")
    func driftMoves() {
        var look = LightLook(idle: .drift, idleAfter: 1)
        feed(&look, .off, beat: quiet, from: 0, seconds: 1.01)
        var peaks = [0.0, 0.0, 0.0]
        var highest = [0, 0, 0]
        var time = 1.0 + LightLook.driftRise
        while time < 1.0 + LightLook.driftRise + LightLook.driftPeriod {
            let levels = look.look(.off, beat: quiet, at: time).levels
            for band in Band.allCases where Int(levels[band]) > highest[band.rawValue] {
                highest[band.rawValue] = Int(levels[band])
                peaks[band.rawValue] = time
            }
            time += 0.05
        }
        #expect(highest.allSatisfy { abs($0 - Int((LightLook.glowLevel * 255).rounded())) <= 1 })
        /// How long after `earlier` peaked `later` did, within a round.
        func lag(_ earlier: Double, _ later: Double) -> Double {
            (later - earlier + LightLook.driftPeriod).truncatingRemainder(dividingBy: LightLook.driftPeriod)
        }
        #expect(abs(lag(peaks[0], peaks[1]) - LightLook.driftPeriod / 3) < 0.2)
        #expect(abs(lag(peaks[1], peaks[2]) - LightLook.driftPeriod / 3) < 0.2)
    }

    @Test("sound without a beat (speech, analysed here) counts as no music: the idle look comes over it")
    func soundWithoutBeatGoesIdle() {
        var look = LightLook(idle: .breathe, idleAfter: 3)
        let speech = LevelFrame(bass: 60, mid: 150, treble: 40)
        feed(&look, speech, beat: quiet, from: 0, seconds: 3.1)
        #expect(look.isIdle)
    }

    @Test("a frame from a sender over the network (beat unknown) with any lamp lit is music: no idle look")
    func networkSoundIsMusic() {
        var look = LightLook(idle: .breathe, idleAfter: 3)
        let speech = LevelFrame(bass: 0, mid: 20, treble: 0)
        feed(&look, speech, beat: nil, from: 0, seconds: 10)
        #expect(!look.isIdle)
        feed(&look, .off, beat: nil, from: 10, seconds: 3.1)
        #expect(look.isIdle)
    }

    @Test("the first beat ends the idle look on its very frame, and the levels pass again")
    func firstBeatWakes() {
        var look = LightLook(idle: .drift, idleAfter: 1)
        feed(&look, .off, beat: quiet, from: 0, seconds: 2)
        #expect(look.isIdle)
        let kick = LevelFrame(bass: 200, mid: 30, treble: 10)
        let (levels, cue) = look.look(kick, beat: held(1), at: 2)
        #expect(!look.isIdle)
        #expect(!cue.isIdle)
        #expect(levels == kick)
    }

    @Test("a strong onset wakes the dance before the tracker holds a beat; a soft one does not")
    func strongOnsetWakes() {
        var look = LightLook(idle: .breathe, idleAfter: 1)
        feed(&look, .off, beat: quiet, from: 0, seconds: 2)
        _ = look.look(LevelFrame(bass: 150, mid: 0, treble: 0), beat: quiet, at: 2)
        #expect(look.isIdle)
        _ = look.look(.off, beat: quiet, at: 2.01)
        let hit = LevelFrame(bass: 255, mid: 0, treble: 0)
        #expect(look.look(hit, beat: quiet, at: 2.02).levels == hit)
        #expect(!look.isIdle)
    }

    @Test("the receiver darkening the lamps restarts the idle clock: the glow waits idle_after again")
    func restartWaitsAgain() {
        var look = LightLook(idle: .breathe, idleAfter: 2)
        feed(&look, .off, beat: quiet, from: 0, seconds: 2.5)
        #expect(look.isIdle)
        look.restart()
        #expect(!look.isIdle)
        feed(&look, .off, beat: quiet, from: 10, seconds: 1.9)
        #expect(!look.isIdle)
        feed(&look, .off, beat: quiet, from: 11.9, seconds: 0.2)
        #expect(look.isIdle)
    }
}

@Suite("Light look: the beat effects on the lamps, and changes that wait for the downbeat")
struct BeatEffectTests {
    @Test("bpm_strobe: every lamp at full on the beat's frame, below 2 % 200 ms after, and again on the next beat")
    func strobe() {
        var look = LightLook(effect: .bpmStrobe)
        let music = LevelFrame(bass: 90, mid: 40, treble: 20)
        #expect(look.look(music, beat: held(2), at: 0).levels == LevelFrame(bass: 255, mid: 255, treble: 255))
        let later = look.look(music, beat: held(0, phase: 0.4), at: 0.2).levels
        #expect(later.bass <= 5 && later.mid == later.bass && later.treble == later.bass)
        #expect(look.look(music, beat: held(3), at: 0.5).levels.treble == 255)
    }

    @Test("bar_step: one lamp at a time shows the loudest level, and the lamp steps on each downbeat, not between")
    func barStep() {
        var look = LightLook(effect: .barStep)
        let music = LevelFrame(bass: 90, mid: 200, treble: 20)
        var lit: [Band] = []
        for beat in 0..<12 {
            let place = beat % 4 + 1
            let levels = look.look(music, beat: held(place), at: Double(beat) / 2).levels
            let on = Band.allCases.filter { levels[$0] > 0 }
            #expect(on.count == 1)
            #expect(on.allSatisfy { levels[$0] == 200 })
            lit.append(contentsOf: on)
        }
        #expect(lit == [.mid, .mid, .mid, .mid, .treble, .treble, .treble, .treble, .bass, .bass, .bass, .bass])
    }

    @Test("beat_pulse: bass on the beat, mid a third of a beat on, treble two thirds; the downbeat brightest")
    func pulse() {
        var look = LightLook(effect: .beatPulse)
        let music = LevelFrame(bass: 90, mid: 40, treble: 20)
        let onBeat = look.look(music, beat: held(1, phase: 0), at: 0).levels
        #expect(onBeat.bass == 255 && onBeat.mid == 0 && onBeat.treble == 0)
        let third = look.look(music, beat: held(0, phase: 1.0 / 3), at: 0.17).levels
        #expect(third.mid == 255 && third.bass == 0)
        let twoThirds = look.look(music, beat: held(0, phase: 2.0 / 3), at: 0.33).levels
        #expect(twoThirds.treble == 255 && twoThirds.mid == 0)
        let backbeat = look.look(music, beat: held(2, phase: 0), at: 0.5).levels
        #expect(backbeat.bass < 255 && backbeat.bass > 128)
    }

    @Test("a beat effect without a beat held shows the levels as they are", arguments: StripEffect.allCases)
    func noBeatPassesLevels(effect: StripEffect) {
        var look = LightLook(effect: effect)
        let music = LevelFrame(bass: 90, mid: 40, treble: 20)
        #expect(look.look(music, beat: quiet, at: 0).levels == music)
        #expect(look.look(music, beat: nil, at: 0.01).levels == music)
    }

    @Test("an effect change while a beat is held waits for the next downbeat, then applies on that frame")
    func changeWaitsForDownbeat() {
        var look = LightLook(effect: .scroll)
        _ = look.look(.off, beat: held(2), at: 0)
        #expect(look.request(.stripEffect(.bpmStrobe)) == nil)
        #expect(look.effect == .scroll)
        _ = look.look(.off, beat: held(3), at: 0.5)
        _ = look.look(.off, beat: held(4), at: 1)
        #expect(look.effect == .scroll)
        #expect(look.takeReleased().isEmpty)
        let downbeat = look.look(.off, beat: held(1), at: 1.5).levels
        #expect(look.effect == .bpmStrobe)
        #expect(downbeat == LevelFrame(bass: 255, mid: 255, treble: 255))
        #expect(look.takeReleased() == [.stripEffect(.bpmStrobe)])
        #expect(look.takeReleased().isEmpty)
    }

    @Test("a palette change waits too, the newest of each kind wins, and the brightness applies at once")
    func newestChangeWins() {
        var look = LightLook()
        _ = look.look(.off, beat: held(2), at: 0)
        let warm = Palette(parsing: "red, amber, white")!
        #expect(look.request(.stripPalette(.standard)) == nil)
        #expect(look.request(.stripPalette(warm)) == nil)
        #expect(look.request(.stripBrightness(30)) == .stripBrightness(30))
        _ = look.look(.off, beat: held(1), at: 0.5)
        #expect(look.takeReleased() == [.stripPalette(warm)])
    }

    @Test("without a beat held a change applies at once; a change that waits goes when the beat lets go")
    func changeWithoutBeat() {
        var look = LightLook()
        #expect(look.request(.stripEffect(.flash)) == .stripEffect(.flash))
        #expect(look.effect == .flash)
        _ = look.look(.off, beat: held(2), at: 0)
        #expect(look.request(.stripEffect(.energy)) == nil)
        _ = look.look(.off, beat: quiet, at: 0.5)
        #expect(look.effect == .energy)
        #expect(look.takeReleased() == [.stripEffect(.energy)])
    }

    @Test("a change waits at most two bars for a downbeat the tracker never names")
    func changeWaitsAtMostTwoBars() {
        var look = LightLook()
        _ = look.look(.off, beat: held(2), at: 0)
        #expect(look.request(.stripEffect(.energy)) == nil)
        for beat in 1..<LightLook.changeWaitBeats { _ = look.look(.off, beat: held(2), at: Double(beat) / 2) }
        #expect(look.isWaiting)
        _ = look.look(.off, beat: held(2), at: 10)
        #expect(!look.isWaiting)
        #expect(look.effect == .energy)
    }
}
