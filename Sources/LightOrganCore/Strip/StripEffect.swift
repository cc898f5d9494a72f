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

    public var description: String { rawValue }
}
