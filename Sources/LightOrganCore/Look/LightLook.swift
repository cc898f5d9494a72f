#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What the lights show of the music: the levels as they arrive, a beat effect, or the idle look.
///
/// It sits between the frames that arrive and the outputs, on the receiver (after `receiver.delay`, so that
/// everything is timed by when the frame is shown) and decides per frame of music:
/// - **Idle** (``IdleLook``, `analysis.idle`): after ``idleAfter`` seconds without music, the idle look's
///   glow replaces the levels. Music is a beat held (``BeatState/bpm`` above 0) or a strong onset (a band
///   leaping ``wakeRise`` levels to at least ``wakeLevel`` in one frame); for a frame whose beat is unknown
///   (a sender over the network: the beat stays on its side of the wire) any lit lamp is music. The first
///   sign of music ends the idle look on that very frame.
/// - **Beat effects** (``StripEffect/followsBeat``: `bpm_strobe`, `bar_step`, `beat_pulse`): while a beat is
///   held they replace the levels of the lamps (and so of every fixture that follows them), and the
///   ``LookCue`` tells a strip what to draw; without a beat held the levels pass unchanged.
/// - **Changes on the bar**: a change of the effect or the palette (``request(_:)``) asked for while a beat
///   is held waits for the next downbeat (at most ``changeWaitBeats`` beats), so that a look changes on the
///   one, as a DJ would; with no beat it applies at once.
///
/// Frames that are not music (the receiver darkening the lights on a timeout, a sender leaving, a wiring
/// check) never pass here: ``restart()`` tells the look, whose idle clock then starts again, so the idle glow
/// can never outlive the frames that carry it. Time is passed in (seconds, any monotonic clock): every look
/// is a pure function of the frames and their times. Nothing is allocated per frame.
public struct LightLook: Sendable {
    /// Seconds in which a `bpm_strobe` flash falls to 1/e of full.
    public static let strobeDecay = 0.05
    /// Seconds of one breath of `breathe`.
    public static let breathePeriod = 6.0
    /// Seconds for `drift`'s glow to go round the three bands.
    public static let driftPeriod = 24.0
    /// Seconds in which `drift`'s glow rises from dark.
    public static let driftRise = 2.0
    /// The idle glow's highest level, 0…1 (102 of 255: about 13 % light after the lamps' gamma 2.2).
    public static let glowLevel: Float = 0.4
    /// A strong onset, which ends the idle look at once: a band rising at least this many levels (of 255) in a
    /// frame...
    public static let wakeRise = 160
    /// ...to at least this level.
    public static let wakeLevel = 224
    /// A change asked for while a beat is held waits at most this many beats for a downbeat (two bars).
    public static let changeWaitBeats = 8

    /// The effect drawn now (`receiver.strip.effect`, once a change waiting for the downbeat is released).
    public private(set) var effect: StripEffect
    /// The look when there is no music (`analysis.idle`).
    public var idle: IdleLook
    /// Seconds without music before the idle look (`analysis.idle_after`).
    public var idleAfter: Double
    /// True while the idle look is drawn.
    public private(set) var isIdle = false
    /// True when the last frame held a beat.
    public private(set) var holdsBeat = false
    /// Time of the last sign of music; nil: the idle clock starts with the next frame.
    private var musicAt: Double?
    /// When the idle look began.
    private var idleAt = 0.0
    private var previous = LevelFrame.off
    /// Time of the latest beat, for `bpm_strobe`.
    private var beatAt = -Double.infinity
    private var place = 0
    private var bar = 0
    /// Changes waiting for the downbeat (at most one of each kind), and the beats they have waited.
    private var pending: [OutputChange] = []
    private var pendingBeats = 0
    /// Changes the last frame released, for the caller to apply to the outputs.
    private var released: [OutputChange] = []

    /// - Parameters:
    ///   - effect: `receiver.strip.effect`.
    ///   - idle: `analysis.idle`.
    ///   - idleAfter: `analysis.idle_after`, seconds.
    public init(effect: StripEffect = .scroll, idle: IdleLook = .dark, idleAfter: Double = 10) {
        self.effect = effect
        self.idle = idle
        self.idleAfter = idleAfter
        pending.reserveCapacity(2)
        released.reserveCapacity(2)
    }

    /// The levels to show for a frame of music shown at `time` seconds, and what a strip needs to draw it.
    ///
    /// - Parameters:
    ///   - frame: the levels as the analysis made them.
    ///   - beat: what the beat tracker said of that frame; nil when the beat is not known here (a sender over
    ///     the network).
    public mutating func look(_ frame: LevelFrame, beat: BeatState?, at time: Double) -> (
        levels: LevelFrame, cue: LookCue
    ) {
        let held = beat.flatMap { $0.bpm > 0 ? $0 : nil }
        holdsBeat = held != nil
        let music = held != nil || isStrongOnset(frame) || (beat == nil && !frame.isOff)
        previous = frame
        if music || musicAt == nil { musicAt = time }
        if music {
            isIdle = false
        } else if !isIdle, idle != .dark, let since = musicAt, time - since >= idleAfter {
            isIdle = true
            idleAt = time
        }
        if let held, held.beat > 0 {
            place = held.beat
            beatAt = time
            if held.beat == 1 { bar &+= 1 }
            pendingBeats += 1
            if held.beat == 1 || pendingBeats >= Self.changeWaitBeats { release() }
        } else if held == nil {
            release()
        }
        let cue = LookCue(beat: held, place: place, bar: bar, isIdle: isIdle)
        if isIdle { return (glow(at: time - idleAt), cue) }
        guard let held, effect.followsBeat else { return (frame, cue) }
        return (beatLevels(frame, beat: held, at: time), cue)
    }

    /// The lights were darkened by the receiver (no frame for `receiver.timeout`, the sender left): the idle
    /// clock starts again with the next frame of music, and the idle look ends.
    public mutating func restart() {
        musicAt = nil
        isIdle = false
        holdsBeat = false
        previous = .off
        release()
    }

    /// Asks for `change`: returned when it applies now; nil when it waits for the next downbeat (an effect or a
    /// palette while a beat is held), then ``takeReleased()`` returns it after the frame that releases it.
    public mutating func request(_ change: OutputChange) -> OutputChange? {
        switch change {
        case .stripEffect, .stripPalette:
            guard holdsBeat else {
                adopt(change)
                return change
            }
            pending.removeAll { Self.sameKind($0, change) }
            if pending.isEmpty { pendingBeats = 0 }
            pending.append(change)
            return nil
        case .lineMode, .stripBrightness:
            return change
        }
    }

    /// The changes the last frame released (at a downbeat, after ``changeWaitBeats``, or when the beat let go),
    /// oldest first; each is returned once.
    public mutating func takeReleased() -> [OutputChange] {
        guard !released.isEmpty else { return [] }
        defer { released.removeAll(keepingCapacity: true) }
        return released
    }

    /// Whether a change waits for the downbeat.
    public var isWaiting: Bool { !pending.isEmpty }

    private mutating func release() {
        guard !pending.isEmpty else { return }
        for change in pending {
            adopt(change)
            released.append(change)
        }
        pending.removeAll(keepingCapacity: true)
        pendingBeats = 0
    }

    private mutating func adopt(_ change: OutputChange) {
        if case .stripEffect(let newEffect) = change { effect = newEffect }
    }

    private static func sameKind(_ a: OutputChange, _ b: OutputChange) -> Bool {
        switch (a, b) {
        case (.stripEffect, .stripEffect), (.stripPalette, .stripPalette): true
        default: false
        }
    }

    private func isStrongOnset(_ frame: LevelFrame) -> Bool {
        for band in Band.allCases {
            let level = Int(frame[band])
            if level >= Self.wakeLevel, level - Int(previous[band]) >= Self.wakeRise { return true }
        }
        return false
    }

    /// The idle look `seconds` after it began.
    private func glow(at seconds: Double) -> LevelFrame {
        switch idle {
        case .dark:
            return .off
        case .breathe:
            let level = Self.glowLevel * Float(1 - cos(2 * Double.pi * seconds / Self.breathePeriod)) / 2
            return LevelFrame(unitBass: level, unitMid: level, unitTreble: level)
        case .drift:
            let rise = Self.glowLevel * Float(min(1, seconds / Self.driftRise))
            func band(_ index: Int) -> Float {
                let angle = 2 * Double.pi * (seconds / Self.driftPeriod - Double(index) / 3)
                return rise * Float(0.5 + 0.5 * cos(angle))
            }
            return LevelFrame(unitBass: band(0), unitMid: band(1), unitTreble: band(2))
        }
    }

    /// The lamps' levels of a beat effect.
    private func beatLevels(_ frame: LevelFrame, beat: BeatState, at time: Double) -> LevelFrame {
        switch effect {
        case .bpmStrobe:
            let level = Float(exp(-(time - beatAt) / Self.strobeDecay))
            return LevelFrame(unitBass: level, unitMid: level, unitTreble: level)
        case .barStep:
            var levels = LevelFrame.off
            levels[Band(rawValue: bar % 3)!] = max(frame.bass, frame.mid, frame.treble)
            return levels
        case .beatPulse:
            // Each lamp's bump is centred a third of a beat after the one before: bass on the beat.
            let accent: Float = place == 1 ? 1 : 0.7
            func bump(_ index: Int) -> Float {
                var distance = abs(beat.phase - Double(index) / 3)
                distance = min(distance, 1 - distance)
                let height = Float(max(0, 1 - 3 * distance))
                return accent * height * height
            }
            return LevelFrame(unitBass: bump(0), unitMid: bump(1), unitTreble: bump(2))
        case .segments, .blend, .scroll, .energy, .flash:
            return frame
        }
    }
}
