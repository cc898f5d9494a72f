/// When a live source's samples were made, on the monotonic clock: sample n at
/// `origin + n / sampleRate` nanoseconds.
///
/// A source that hands its audio over in blocks (a sound server's monitor gives 10–40 ms at once)
/// delivers each block when its *last* sample is made, so every earlier sample of the block arrives
/// late: `arrival − n / sampleRate` is smallest for the block's end, and that one tells when the
/// block was made. The observation to give is therefore the block's end and the time it arrived
/// (``ReadAhead``), not the moment a piece of it was read: those come later and later as the pieces
/// before them are analysed. So the clock takes the smallest such offset in each
/// ``sliceNanoseconds`` slice of time (the end of the blocks that arrived in it) and uses a low one
/// of those of the last ``windowNanoseconds`` (the second smallest of 20): blocks come late, never
/// early, so on a busy machine, where most come a few milliseconds late, the earliest tell when the
/// audio was made (with blocks up to 30 ms late, the median was 6–11 ms late). It ticks with the
/// audio at the source's own rate however the audio is chunked; one block handed over early or late
/// does not move it; a drift between the audio and the monotonic clock is taken up within a window;
/// and a gap (audio lost in an overrun, a recorder restarted on another output), which makes every
/// later block look later by the same amount, within ``gapSlices`` slices.
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
    /// Slices in a row whose earliest block came at least ``gapNanoseconds`` after the clock's
    /// time: audio was lost, and the window starts again from them.
    public static let gapSlices = 3
    /// How much later than the clock's time the earliest block of each of ``gapSlices`` slices must
    /// come to count as a gap, nanoseconds: just under one PipeWire quantum (512 samples at 48 kHz,
    /// 10.7 ms), the least a sound server loses at once. A busy machine that delays every block of
    /// 0.3 s by as much restarts the window too, and the next slice on time brings the clock back.
    public static let gapNanoseconds: Int64 = 10_000_000

    /// Per slice (by slice number modulo ``slices``): its number and its smallest offset.
    private var sliceNumbers: [Int64]
    private var smallest: [Int64]
    /// The window's offsets, sorted by `observe` to find a low one (scratch space).
    private var sorted: [Int64]
    private var latestSlice: Int64 = -1
    /// Completed slices in a row that came ``gapNanoseconds`` late or more.
    private var lateSlices = 0
    /// When sample 0 was made, monotonic nanoseconds; kept up to date by `observe`.
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
            if slice > latestSlice, latestSlice >= 0 { noteCompleted(latestSlice) }
            sliceNumbers[index] = slice
            smallest[index] = offset
        }
        latestSlice = max(latestSlice, slice)
        origin = lowOffset()
    }

    /// After slice `number` ended: a run of ``gapSlices`` late ones leaves only them in the window.
    private mutating func noteCompleted(_ number: Int64) {
        let index = Int(number % Int64(Self.slices))
        guard sliceNumbers[index] == number, let origin else { return }
        lateSlices = smallest[index] - origin >= Self.gapNanoseconds ? lateSlices + 1 : 0
        guard lateSlices >= Self.gapSlices else { return }
        for other in 0..<Self.slices where sliceNumbers[other] <= number - Int64(Self.gapSlices) {
            sliceNumbers[other] = -1
        }
        lateSlices = 0
    }

    /// When sample `sample` was made (monotonic nanoseconds); nil before the first observation.
    public func nanoseconds(atSample sample: Int) -> Int64? {
        origin.map { $0 + duration(ofSamples: sample) }
    }

    /// The second smallest of the slices' smallest offsets in the window (the smallest while it holds
    /// fewer than 10): one slice early does not move it. Insertion sort in place, no allocation.
    private mutating func lowOffset() -> Int64? {
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
        return count == 0 ? nil : sorted[count >= 10 ? 1 : 0]
    }

    /// How long `samples` samples (per channel) of this source last, nanoseconds (rounded).
    func duration(ofSamples samples: Int) -> Int64 {
        Int64((Double(samples) * 1e9 / sampleRate).rounded())
    }
}
