/// How a strip's pixels show the three levels: the same effects for a strip on the Pi and for a
/// DDP/WLED strip on the network (``StripRenderer`` draws both).
///
/// Every effect is defined in fractions of the strip and in seconds, never in pixels or frames, so
/// it reads the same on 30 pixels as on 300 and at 40 frames a second as at 100.
public enum StripEffect: String, Sendable, CaseIterable, CustomStringConvertible {
    /// Three segments, bass first: each in its band's colour at its band's light.
    case segments
    /// The whole strip in the bands' colours mixed by their light.
    case blend
    /// Each frame's mixed colour enters at the centre and moves outward, fading: the music's recent
    /// past spreads along the strip (``StripRenderer/scrollTravel`` from the centre to the ends).
    case scroll
    /// A bar per band growing from the centre to both ends with its level, in its colour; where
    /// bars overlap their colours add.
    case energy
    /// The whole strip flashes in the bass colour on each bass onset of the dance response and
    /// fades (``StripRenderer/flashDecay``), dark between beats.
    case flash
    /// On each beat the whole strip and every lamp flash at full and fall within ``LightLook/strobeDecay``:
    /// a strobe locked to the tempo (LedFx's and WLED's `bpm_strobe`). Without a beat held: `flash`.
    case bpmStrobe = "bpm_strobe"
    /// One colour of the palette at a time, stepping to the next on each bar's downbeat; the strip and the
    /// lamp of that colour's band show the music's loudest level. Without a beat held: `blend`.
    case barStep = "bar_step"
    /// A pulse runs from the centre to both ends in each beat (by the beat's phase), in the palette's colours
    /// beat by beat; the lamps chase bass → mid → treble within each beat. Without a beat held: `scroll`.
    case beatPulse = "beat_pulse"

    public var description: String { rawValue }

    /// True for the effects that follow the beat; they drive the lamps too (the other effects are the strip's own).
    public var followsBeat: Bool {
        switch self {
        case .bpmStrobe, .barStep, .beatPulse: true
        case .segments, .blend, .scroll, .energy, .flash: false
        }
    }

    /// What is drawn while no beat is held: the effect itself, or for a beat effect the nearest effect of the levels.
    public var withoutBeat: StripEffect {
        switch self {
        case .bpmStrobe: .flash
        case .barStep: .blend
        case .beatPulse: .scroll
        case .segments, .blend, .scroll, .energy, .flash: self
        }
    }
}
