/// Finds the flashes of one lamp: the moments its lightness jumps by at least ``rise`` L* within
/// ``window`` seconds, as a person sees a beat.
///
/// Feed lightness values in time order; ``feed(lightness:at:)`` returns true on the first frame of
/// each jump. The frames that keep rising within the same jump do not count again; after the lamp
/// stops rising, the next jump is a new flash. `scripts/lib/music_metrics.py` uses the same rule.
public struct FlashDetector: Sendable {
    /// Smallest rise that counts as a flash, L*.
    public var rise: Double = 15
    /// Time within which the rise must happen, seconds.
    public var window: Double = 0.060
    private var recent: [(time: Double, lightness: Double)] = []
    private var isRising = false

    public init() {}

    /// Takes the lamp's lightness (L*, 0…100) at `time` seconds; true when a flash starts here.
    public mutating func feed(lightness: Double, at time: Double) -> Bool {
        recent.removeAll { $0.time < time - window }
        recent.append((time, lightness))
        let lowest = recent.map(\.lightness).min() ?? lightness
        let rising = lightness - lowest >= rise
        defer { isRising = rising }
        return rising && !isRising
    }
}
