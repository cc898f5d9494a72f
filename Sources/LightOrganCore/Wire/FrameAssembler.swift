/// Cuts a receiver's byte stream into 3-byte frames and keeps only the newest complete one.
///
/// TCP delivers bytes, not frames: a read may hold half a frame or a backlog of hundreds (after
/// the receiver was paused). Showing a backlog frame by frame would replay the past; the receiver
/// shows only the newest complete frame of each read and counts the ones it skipped. Any split
/// of the same stream yields the same frame boundaries: bytes are never lost or reordered.
///
/// Invariant: between reads at most two bytes (an incomplete frame) are held.
/// Cost: O(1) per read, whatever its size.
public struct FrameAssembler: Sendable {
    /// Bytes of an incomplete frame carried over to the next read (0, 1 or 2 of them used).
    private var carried: (UInt8, UInt8) = (0, 0)
    /// How many of `carried` are real bytes, 0…2.
    public private(set) var carriedCount = 0

    public init() {}

    /// What one read brought.
    public struct Result: Sendable, Equatable {
        /// The last frame completed by this read, if any.
        public var newest: LevelFrame?
        /// Frames completed by this read (the newest included).
        public var completed: Int
    }

    /// Takes the bytes of one read.
    public mutating func take(_ bytes: UnsafeRawBufferPointer) -> Result {
        let total = carriedCount + bytes.count
        let completed = total / LevelFrame.byteCount
        var newest: LevelFrame?
        if completed > 0 {
            // The newest frame's three bytes, at stream positions end-3…end-1 of the completed part,
            // where positions below carriedCount are the carried bytes.
            let end = completed * LevelFrame.byteCount
            func byte(at position: Int) -> UInt8 {
                if position >= carriedCount { return bytes[position - carriedCount] }
                return position == 0 ? carried.0 : carried.1
            }
            newest = LevelFrame(bass: byte(at: end - 3), mid: byte(at: end - 2), treble: byte(at: end - 1))
        }
        let leftover = total % LevelFrame.byteCount
        // The leftover bytes are the last `leftover` of the stream so far.
        var next: (UInt8, UInt8) = (0, 0)
        for index in 0..<leftover {
            let position = total - leftover + index
            let value =
                position >= carriedCount ? bytes[position - carriedCount] : (position == 0 ? carried.0 : carried.1)
            if index == 0 { next.0 = value } else { next.1 = value }
        }
        carried = next
        carriedCount = leftover
        return Result(newest: newest, completed: completed)
    }

    /// Takes the bytes of one read from an array (tests, fuzzing).
    public mutating func take(_ bytes: [UInt8]) -> Result {
        bytes.withUnsafeBytes { take($0) }
    }
}
