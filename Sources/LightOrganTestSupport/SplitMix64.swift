/// SplitMix64: a small, fast, seedable random number generator, so that a failing test or fuzz
/// case can be replayed from its seed.
public struct SplitMix64: RandomNumberGenerator {
    private var state: UInt64

    /// The generator whose sequence `seed` names.
    public init(seed: UInt64) { state = seed }

    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// `count` random bytes, 0…255 each.
    public mutating func bytes(_ count: Int) -> [UInt8] {
        (0..<count).map { _ in UInt8.random(in: 0...255, using: &self) }
    }
}
