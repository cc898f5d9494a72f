/// What the ``LightLook`` tells the outputs beside a frame's levels: enough for a strip to draw a beat effect
/// or the idle look in colour (lamps need only the levels).
public struct LookCue: Sendable, Equatable {
    /// The beat the lights follow, nil while none is held (no tempo yet, no beat in the music, or a sender
    /// over the network, whose beat stays on its side of the wire).
    public var beat: BeatState?
    /// The place in its bar of the latest beat, 1…``BeatTracker/beatsPerBar``; 0 before the first.
    public var place: Int
    /// Bars begun since the lights started following a beat: the colour step of `bar_step`.
    public var bar: Int
    /// True while the idle look is drawn.
    public var isIdle: Bool

    public init(beat: BeatState? = nil, place: Int = 0, bar: Int = 0, isIdle: Bool = false) {
        (self.beat, self.place, self.bar, self.isIdle) = (beat, place, bar, isIdle)
    }

    /// No beat, not idle: the levels as they are.
    public static let none = LookCue()
}
