/// When the samples of a source that hands its sound over ahead of time are due to be heard (a Snapcast room:
/// by the server's clock, less the room's latency): each block read says when its first sample is due, and a
/// sample is due at the last such time at or before it plus its distance from there.
///
/// Unlike ``AudioClock`` nothing is estimated: the source says. Its sample count need not keep to one rate
/// against the clock: a client that catches up with its server drops or repeats a little audio, and each block
/// after that says its own time.
///
/// Invariant: memory is fixed (``capacity`` anchors, the newest kept); nothing allocates after creation.
public struct DueTimes: Sendable {
    /// Samples (per channel) per second of the source.
    public let sampleRate: Double
    /// The anchors kept: enough for 5 s of 50 ms blocks, longer than a player holds its sound.
    public static let capacity = 128
    private var samples: [Int]
    private var nanoseconds: [Int64]
    private var count = 0

    public init(sampleRate: Double) {
        self.sampleRate = sampleRate
        samples = Array(repeating: 0, count: Self.capacity)
        nanoseconds = Array(repeating: 0, count: Self.capacity)
    }

    /// The source's sample frame `sample` (the first of a block) is due at `due` (monotonic nanoseconds).
    /// Samples are recorded in order.
    public mutating func record(sample: Int, due: Int64) {
        samples[count % Self.capacity] = sample
        nanoseconds[count % Self.capacity] = due
        count += 1
    }

    /// When sample frame `sample` is due (monotonic nanoseconds): from the newest anchor at or before it (the
    /// oldest kept for a sample older than all), nil before the first.
    public func due(ofSample sample: Int) -> Int64? {
        guard count > 0 else { return nil }
        var index = count - 1
        let oldest = max(0, count - Self.capacity)
        while index > oldest, samples[index % Self.capacity] > sample { index -= 1 }
        let anchor = index % Self.capacity
        return nanoseconds[anchor] + Int64((Double(sample - samples[anchor]) * 1e9 / sampleRate).rounded())
    }
}
