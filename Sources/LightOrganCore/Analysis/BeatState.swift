/// What the ``BeatTracker`` knows after a frame: whether a beat falls on it, the tempo, the phase and how sure it is.
///
/// Invariants: while the tracker holds no beat (``bpm`` 0: silence, noise, speech, a pad, or the first seconds of
/// music), ``beat`` is 0 and ``phase`` is 0. A beat is announced on exactly one frame: the one nearest the time the
/// beat is predicted to fall.
public struct BeatState: Sendable, Hashable {
    /// 0, or on the frame where a beat is announced its place in the bar, 1…``BeatTracker/beatsPerBar``
    /// (1 = the downbeat).
    public var beat: Int
    /// The tempo held, beats per minute; 0 while none.
    public var bpm: Double
    /// Where the frame lies between the last beat (0) and the next (1), 0…1; 0 while no tempo is held.
    public var phase: Double
    /// How sure the tracker is of the beat, 0…1: the share of its last 8 beats that onsets confirmed, times the
    /// periodicity of the onsets relative to twice what a lock needs (at most 1). It falls through a break, while
    /// the beats go on.
    public var confidence: Double

    public init(beat: Int = 0, bpm: Double = 0, phase: Double = 0, confidence: Double = 0) {
        self.beat = beat
        self.bpm = bpm
        self.phase = phase
        self.confidence = confidence
    }

    /// No beat, no tempo.
    public static let none = BeatState()
}
