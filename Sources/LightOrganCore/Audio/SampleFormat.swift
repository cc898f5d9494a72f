/// How raw PCM samples are laid out (stdin, pipes, ALSA buffers). Little-endian throughout.
public enum SampleFormat: String, Sendable, CaseIterable, CustomStringConvertible {
    case s16le, s32le, f32le

    /// Bytes per sample.
    public var width: Int { self == .s16le ? 2 : 4 }

    public var description: String { rawValue }

    /// Converts `count` samples from `bytes` to `Float` (full scale ±1).
    public func decode(_ bytes: UnsafeRawBufferPointer, count: Int) -> [Float] {
        switch self {
        case .s16le:
            return (0..<count).map {
                Float(Int16(littleEndian: bytes.loadUnaligned(fromByteOffset: 2 * $0, as: Int16.self))) / 32768
            }
        case .s32le:
            return (0..<count).map {
                Float(Int32(littleEndian: bytes.loadUnaligned(fromByteOffset: 4 * $0, as: Int32.self))) / 2_147_483_648
            }
        case .f32le:
            return (0..<count).map {
                Float(bitPattern: UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: 4 * $0, as: UInt32.self)))
            }
        }
    }
}
