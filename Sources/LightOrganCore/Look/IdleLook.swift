/// What the lights show when there is no music to dance to (`analysis.idle`): after
/// `analysis.idle_after` seconds of silence, or of sound without a beat (speech, a pad, room noise).
///
/// An idle look is a deliberate, slow glow, never a lamp left on: it is drawn only while a sender
/// delivers frames, so the receiver's own rules (`receiver.timeout`, a sender leaving, `receiver.lights:
/// off`) darken it as they darken the dance.
public enum IdleLook: String, Sendable, CaseIterable, CustomStringConvertible {
    /// The lights follow the levels as they are, dark in silence: the light organ as it always was.
    case dark
    /// Every lamp, and the strip in the palette's mixed colour, breathes: a slow rise and fall of a dim glow
    /// (``LightLook/breathePeriod``, at most ``LightLook/glowLevel``).
    case breathe
    /// A dim glow drifts from band to band, and so through the palette's colours on a strip
    /// (``LightLook/driftPeriod`` for a round).
    case drift

    public var description: String { rawValue }
}
