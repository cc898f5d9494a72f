/// When a live source's samples were made, on the monotonic clock: sample n at
/// `origin + n / sampleRate` nanoseconds.
///
/// A source that hands its audio over in blocks (a sound server's monitor gives 10–40 ms at once)
/// delivers each block when its *last* sample is made, so every earlier sample of the block arrives
/// late: `arrival − n / sampleRate` is smallest for the block's end, and that one tells when the
/// block was made. The observation to give is therefore the block's end and the time it arrived
/// (``ReadAhead``), not the moment a piece of it was read: those come later and later as the pieces
/// before them are analysed. So the clock takes the smallest such offset in each
/// ``sliceNanoseconds`` slice of time (the end of the blocks that arrived in it) and uses the median
/// of those of the last ``windowNanoseconds``: it ticks with the audio at the source's own rate
/// however the audio is chunked, one block handed over early or late does not move it, and a drift
/// between the audio and the monotonic clock or a gap (an overrun, a recorder restarted on another
/// output) is taken up within a window.
///
/// Invariant: memory is fixed (``slices`` offsets); nothing allocates after creation.
public struct AudioClock: Sendable {
    /// Samples (per channel) per second of the source.
    public let sampleRate: Double
    /// How long an observation counts, nanoseconds.
    public static let windowNanoseconds: Int64 = 2_000_000_000
    /// The slices of time the window is made of.
    public static let slices = 20
    /// One slice, nanoseconds.
    public static let sliceNanoseconds = windowNanoseconds / Int64(slices)

    /// Per slice (by slice number modulo ``slices``): its number and its smallest offset.
    private var sliceNumbers: [Int64]
    private var smallest: [Int64]
    /// The window's offsets, sorted by `observe` to find their median (scratch space).
    private var sorted: [Int64]
    private var latestSlice: Int64 = -1
    /// The median, kept up to date by `observe`.
    public private(set) var origin: Int64?

    /// A clock for a source of `sampleRate` samples per second (> 0).
    public init(sampleRate: Double) {
        self.sampleRate = sampleRate
        sliceNumbers = Array(repeating: -1, count: Self.slices)
        smallest = Array(repeating: 0, count: Self.slices)
        sorted = Array(repeating: 0, count: Self.slices)
    }

    /// Records that `samples` samples in all had arrived by `nanoseconds` (monotonic clock, ≥ 0).
    public mutating func observe(samples: Int, at nanoseconds: Int64) {
        let offset = nanoseconds - duration(ofSamples: samples)
        let slice = nanoseconds / Self.sliceNanoseconds
        let index = Int(slice % Int64(Self.slices))
        if sliceNumbers[index] == slice {
            guard offset < smallest[index] else { return }
            smallest[index] = offset
        } else {
            sliceNumbers[index] = slice
            smallest[index] = offset
        }
        latestSlice = max(latestSlice, slice)
        origin = median()
    }

    /// When sample `sample` was made (monotonic nanoseconds); nil before the first observation.
    public func nanoseconds(atSample sample: Int) -> Int64? {
        origin.map { $0 + duration(ofSamples: sample) }
    }

    /// The median of the smallest offsets of the slices in the window (the lower middle one of an
    /// even count); insertion sort in place, no allocation.
    private mutating func median() -> Int64? {
        var count = 0
        for index in 0..<Self.slices where sliceNumbers[index] > latestSlice - Int64(Self.slices) {
            let value = smallest[index]
            var position = count
            while position > 0, sorted[position - 1] > value {
                sorted[position] = sorted[position - 1]
                position -= 1
            }
            sorted[position] = value
            count += 1
        }
        return count == 0 ? nil : sorted[(count - 1) / 2]
    }

    private func duration(ofSamples samples: Int) -> Int64 {
        Int64((Double(samples) * 1e9 / sampleRate).rounded())
    }
}
