#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

/// A RIFF/WAVE file of PCM samples, decoded to `Float` on demand.
///
/// Reads integer PCM of 16, 24 and 32 bits and IEEE float of 32 bits (also inside
/// `WAVE_FORMAT_EXTENSIBLE`), any channel count and rate. The file is memory-mapped, so a long
/// file costs no memory up front. Anything else is refused with a ``WAVFileError`` that names
/// what was found.
public struct WAVFile: AudioSource {
    /// How samples are stored in the file.
    public enum Encoding: Sendable, Hashable, CustomStringConvertible {
        case int16, int24, int32, float32

        var bytesPerSample: Int {
            switch self {
            case .int16: 2
            case .int24: 3
            case .int32, .float32: 4
            }
        }

        public var description: String {
            switch self {
            case .int16: "16-bit PCM"
            case .int24: "24-bit PCM"
            case .int32: "32-bit PCM"
            case .float32: "32-bit float"
            }
        }
    }

    public let format: AudioFormat
    public let encoding: Encoding
    /// Sample frames in the file.
    public let frameCount: Int
    /// Where the file came from, for messages.
    public let name: String
    private let data: Data
    private let dataOffset: Int
    /// Sample frames read so far.
    public private(set) var position = 0

    /// Opens and checks the WAV file at `path`.
    public init(path: String) throws(WAVFileError) {
        guard FileManager.default.fileExists(atPath: path) else {
            throw WAVFileError(path: path, problem: "does not exist")
        }
        let data: Data
        do {
            data = try Data(contentsOf: URL(fileURLWithPath: path), options: .alwaysMapped)
        } catch {
            throw WAVFileError(path: path, problem: "cannot be read (\(SystemErrorText.reason(of: error)))")
        }
        try self.init(data: data, name: path)
    }

    /// Parses WAV bytes already in memory; `name` is used in error messages.
    public init(data: Data, name: String) throws(WAVFileError) {
        func fail(_ problem: String) -> WAVFileError { WAVFileError(path: name, problem: problem) }
        // Indices from 0 whatever slice was passed; a whole file (a memory map) is kept as it is,
        // not copied into the heap.
        let data = data.startIndex == 0 ? data : Data(data)
        let bytes = [UInt8](data.prefix(12))
        guard bytes.count == 12, bytes[0..<4].elementsEqual("RIFF".utf8), bytes[8..<12].elementsEqual("WAVE".utf8)
        else {
            let start = String(decoding: bytes.prefix(4).map { (32...126).contains($0) ? $0 : 46 }, as: UTF8.self)
            throw fail("is not a WAV file (it starts with \"\(start)\", a WAV file with \"RIFF…WAVE\")")
        }
        var offset = 12
        var formatChunk: (tag: Int, channels: Int, rate: Int, bits: Int, subTag: Int)?
        var dataChunk: (offset: Int, size: Int)?
        while offset + 8 <= data.count, dataChunk == nil {
            let id = String(decoding: data[offset..<offset + 4], as: UTF8.self)
            let size = Int(Self.uint32(data, offset + 4))
            let body = offset + 8
            switch id {
            case "fmt ":
                guard size >= 16, body + size <= data.count else { throw fail("has a truncated format chunk") }
                let tag = Int(Self.uint16(data, body))
                let subTag = tag == 0xFFFE && size >= 40 ? Int(Self.uint16(data, body + 24)) : tag
                formatChunk = (
                    tag, Int(Self.uint16(data, body + 2)), Int(Self.uint32(data, body + 4)),
                    Int(Self.uint16(data, body + 14)), subTag
                )
            case "data":
                // Streams written on the fly may leave the size 0 or 0xFFFFFFFF: take the rest of the file.
                let available = data.count - body
                dataChunk = (body, size == 0 || size > available ? available : size)
            default:
                break
            }
            offset = body + size + (size & 1)
        }
        guard let formatChunk else { throw fail("has no format chunk") }
        guard let dataChunk else { throw fail("has no data chunk") }
        let encoding: Encoding
        switch (formatChunk.subTag, formatChunk.bits) {
        case (1, 16): encoding = .int16
        case (1, 24): encoding = .int24
        case (1, 32): encoding = .int32
        case (3, 32): encoding = .float32
        case (let tag, let bits):
            let kind = tag == 1 ? "PCM" : tag == 3 ? "float" : "format tag \(tag) (compressed)"
            throw fail(
                "holds \(bits)-bit \(kind) audio; supported are 16, 24 and 32-bit PCM and 32-bit float"
                    + " (convert with: ffmpeg -i IN -c:a pcm_s16le OUT.wav)")
        }
        guard formatChunk.channels > 0 else { throw fail("declares 0 channels") }
        guard (1000...768_000).contains(formatChunk.rate) else {
            throw fail("declares a sample rate of \(formatChunk.rate) Hz; supported is 1000…768000 Hz")
        }
        self.name = name
        self.data = data
        self.encoding = encoding
        self.format = AudioFormat(sampleRate: Double(formatChunk.rate), channels: formatChunk.channels)
        self.dataOffset = dataChunk.offset
        self.frameCount = dataChunk.size / (encoding.bytesPerSample * formatChunk.channels)
    }

    /// Duration of the file, seconds.
    public var duration: Double { Double(frameCount) / format.sampleRate }

    public mutating func read(frames: Int) -> [Float] {
        let count = max(0, min(frames, frameCount - position))
        let sampleCount = count * format.channels
        let width = encoding.bytesPerSample
        let start = dataOffset + position * format.channels * width
        position += count
        return data.withUnsafeBytes { raw in
            (0..<sampleCount).map { index in
                let at = start + index * width
                switch encoding {
                case .int16:
                    return Float(Int16(bitPattern: Self.uint16(raw, at))) / 32768
                case .int24:
                    let value = Int32(
                        bitPattern: UInt32(raw[at]) << 8 | UInt32(raw[at + 1]) << 16 | UInt32(raw[at + 2]) << 24)
                    return Float(value >> 8) / 8_388_608
                case .int32:
                    return Float(Int32(bitPattern: Self.uint32(raw, at))) / 2_147_483_648
                case .float32:
                    return Float(bitPattern: Self.uint32(raw, at))
                }
            }
        }
    }

    /// 16-bit samples go to the analyzer straight from the mapped file (on a little-endian machine,
    /// when the data is 2-byte aligned, as every WAV writer makes it); others are converted.
    public mutating func read(frames: Int, into analyzer: inout BandAnalyzer) throws -> Int {
        #if _endian(little)
        if encoding == .int16 {
            let count = max(0, min(frames, frameCount - position))
            let start = dataOffset + position * format.channels * 2
            let channels = format.channels
            let direct = data.withUnsafeBytes { raw -> Bool in
                guard let base = raw.baseAddress, Int(bitPattern: base + start) % 2 == 0 else { return false }
                let samples = UnsafeBufferPointer(
                    start: (base + start).assumingMemoryBound(to: Int16.self), count: count * channels)
                analyzer.process(int16Interleaved: samples, channels: channels)
                return true
            }
            if direct {
                position += count
                return count
            }
        }
        #endif
        return try readConverting(frames: frames, into: &analyzer)
    }

    private static func uint16(_ bytes: Data, _ offset: Int) -> UInt16 {
        bytes.withUnsafeBytes { uint16($0, offset) }
    }

    private static func uint16(_ raw: UnsafeRawBufferPointer, _ offset: Int) -> UInt16 {
        UInt16(raw[offset]) | UInt16(raw[offset + 1]) << 8
    }

    private static func uint32(_ bytes: Data, _ offset: Int) -> UInt32 {
        bytes.withUnsafeBytes { uint32($0, offset) }
    }

    private static func uint32(_ raw: UnsafeRawBufferPointer, _ offset: Int) -> UInt32 {
        UInt32(raw[offset]) | UInt32(raw[offset + 1]) << 8 | UInt32(raw[offset + 2]) << 16 | UInt32(raw[offset + 3])
            << 24
    }

}

/// A WAV file that cannot be used, with the reason.
public struct WAVFileError: Error, CustomStringConvertible, Equatable {
    /// The file's path as given.
    public var path: String
    /// What is wrong, as the end of a sentence that starts with the path.
    public var problem: String

    public init(path: String, problem: String) {
        self.path = path
        self.problem = problem
    }

    public var description: String { "\(path) \(problem)" }
}
