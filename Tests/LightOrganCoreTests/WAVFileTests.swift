import Foundation
import LightOrganCore
import Testing

/// Writes WAV files in memory.
struct WAVTestFile {
    var data: Data

    init(
        seconds: Double, rate: Int = 44_100, channels: Int = 1, formatTag: Int = 1, bits: Int = 16,
        samples: [Double]? = nil
    ) {
        let count = samples?.count ?? Int(seconds * Double(rate)) * channels
        let values = samples ?? (0..<count).map { sin(Double($0) * 0.1) * 0.5 }
        var body = Data()
        for value in values {
            switch (formatTag, bits) {
            case (1, 16): body.append(le: UInt16(bitPattern: Int16((value * 32767).rounded())), bytes: 2)
            case (1, 24): body.append(le: UInt32(bitPattern: Int32((value * 8_388_607).rounded())), bytes: 3)
            case (1, 32): body.append(le: UInt32(bitPattern: Int32((value * 2_147_483_647).rounded())), bytes: 4)
            default: body.append(le: Float(value).bitPattern, bytes: 4)
            }
        }
        var file = Data("RIFF".utf8)
        file.append(le: UInt32(36 + body.count), bytes: 4)
        file.append(contentsOf: Array("WAVEfmt ".utf8))
        file.append(le: UInt32(16), bytes: 4)
        file.append(le: UInt32(formatTag), bytes: 2)
        file.append(le: UInt32(channels), bytes: 2)
        file.append(le: UInt32(rate), bytes: 4)
        file.append(le: UInt32(rate * channels * bits / 8), bytes: 4)
        file.append(le: UInt32(channels * bits / 8), bytes: 2)
        file.append(le: UInt32(bits), bytes: 2)
        file.append(contentsOf: Array("data".utf8))
        file.append(le: UInt32(body.count), bytes: 4)
        file.append(body)
        data = file
    }
}

extension Data {
    mutating func append(le value: some FixedWidthInteger, bytes: Int) {
        for index in 0..<bytes { append(UInt8(truncatingIfNeeded: UInt64(value) >> (8 * index))) }
    }
}

@Suite("WAV files")
struct WAVFileTests {
    @Test(
        "decodes every supported encoding to the samples that were written",
        arguments: [(1, 16), (1, 24), (1, 32), (3, 32)])
    func decodesEncodings(formatTag: Int, bits: Int) throws {
        let samples = [0.0, 0.5, -0.5, 0.25, -1.0, 0.999]
        let bytes = WAVTestFile(seconds: 0, channels: 2, formatTag: formatTag, bits: bits, samples: samples).data
        var file = try WAVFile(data: bytes, name: "t.wav")
        #expect(file.format == AudioFormat(sampleRate: 44_100, channels: 2))
        #expect(file.frameCount == 3)
        let decoded = file.read(frames: 10)
        #expect(decoded.count == 6)
        for (got, want) in zip(decoded, samples) { #expect(abs(Double(got) - want) < 1e-4) }
        #expect(file.read(frames: 10).isEmpty)
    }

    @Test("refuses what it cannot play, naming what it found")
    func refusesOtherFormats() {
        #expect(
            throws: WAVFileError(
                path: "song.mp3", problem: "is not a WAV file (it starts with \"ID3.\", a WAV file with \"RIFF…WAVE\")")
        ) {
            try WAVFile(data: Data("ID3\u{4}xxxxxxxxxxxx".utf8), name: "song.mp3")
        }
        let adpcm = WAVTestFile(seconds: 0.01, formatTag: 2, bits: 4).data
        #expect(throws: WAVFileError.self) { try WAVFile(data: adpcm, name: "a.wav") }
        do {
            _ = try WAVFile(data: adpcm, name: "a.wav")
        } catch {
            #expect(error.description.contains("4-bit format tag 2 (compressed)"))
        }
    }

    @Test("says when a file does not exist")
    func missingFile() {
        #expect(throws: WAVFileError(path: "/no/such.wav", problem: "does not exist")) {
            try WAVFile(path: "/no/such.wav")
        }
    }
}
