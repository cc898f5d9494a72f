import Foundation
import Glibc
import LightOrganAudio
import LightOrganCore
import Testing

@Suite("Raw PCM from a pipe, as a sound server's recorder hands it over")
struct RawPCMInputTests {
    /// A pipe: (read end, write end).
    static func pipe() throws -> (CInt, CInt) {
        var ends: [CInt] = [0, 0]
        try #require(Glibc.pipe(&ends) == 0)
        return (ends[0], ends[1])
    }

    /// Writes `bytes` whole to `descriptor`.
    static func write(_ bytes: [UInt8], to descriptor: CInt) throws {
        let written = bytes.withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress, $0.count) }
        try #require(written == bytes.count)
    }

    /// Stereo s16le sample frames `range`, both channels holding the frame's number.
    static func frames(_ range: Range<Int>) -> [UInt8] {
        range.flatMap { n -> [UInt8] in
            let low = UInt8(n & 0xff), high = UInt8(n >> 8)
            return [low, high, low, high]
        }
    }

    static func monotonicNanoseconds() -> Int64 {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return Int64(now.tv_sec) * 1_000_000_000 + Int64(now.tv_nsec)
    }

    /// Writes `bytes` to `descriptor` from a thread of its own after `milliseconds`, while the
    /// reader waits (a thread, not a task: the reader blocks its own); `wait()` returns the
    /// monotonic time just before the write.
    final class LateWriter: @unchecked Sendable {
        private let done = DispatchSemaphore(value: 0)
        private var before: Int64 = 0

        init(_ bytes: [UInt8], to descriptor: CInt, after milliseconds: Int) {
            Thread.detachNewThread { [self] in
                Thread.sleep(forTimeInterval: Double(milliseconds) / 1_000)
                before = RawPCMInputTests.monotonicNanoseconds()
                _ = bytes.withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress, $0.count) }
                done.signal()
            }
        }

        func wait() -> Int64 {
            done.wait()
            return before
        }
    }

    @Test(
        "a 40 ms block the reader waited for is taken in one read and stamped with its arrival; its 5 ms pieces keep that stamp, in order"
    )
    func blockArrival() throws {
        let (reader, writer) = try Self.pipe()
        defer { close(reader) }
        let input = RawPCMInput(descriptor: reader, sampleRate: 48_000, channels: 2, sampleFormat: .s16le)
        #expect(input.readAhead == nil)
        // A 40 ms block (1920 frames) and half of the next frame, written while the reader waits.
        let writing = LateWriter(
            Self.frames(0..<1_920) + Array(Self.frames(1_920..<1_921).prefix(2)), to: writer, after: 50)
        var returned = 0
        var stamp: Int64?
        for _ in 0..<8 {
            let samples = try input.read(frames: 240)
            #expect(samples.count == 480)
            #expect(samples.first == Float(returned) / 32_768, "frames come in order")
            returned += samples.count / 2
            let ahead = try #require(input.readAhead)
            #expect(returned + ahead.frames == 1_920, "all of the block had arrived")
            #expect(stamp == nil || ahead.madeAt == stamp, "no read after the first")
            stamp = ahead.madeAt
        }
        let written = writing.wait()
        #expect(stamp! >= written && stamp! < written + 1_000_000_000)
        // The half frame waits for its other half, then the next block is stamped anew.
        let next = LateWriter(
            Array(Self.frames(1_920..<1_921).suffix(2)) + Self.frames(1_921..<1_930), to: writer, after: 20)
        let samples = try input.read(frames: 240)
        #expect(samples.count == 20)
        #expect(samples.first == Float(1_920) / 32_768)
        #expect(try #require(input.readAhead).madeAt >= next.wait())
        close(writer)
        #expect(try input.read(frames: 240).isEmpty, "the end of the pipe ends the audio")
    }

    @Test(
        "audio already waiting (a file piped in, ahead of its pace) has no arrival time; 16-bit samples go to the analyzer a piece at a time"
    )
    func audioAhead() throws {
        let (reader, writer) = try Self.pipe()
        defer { close(reader) }
        let input = RawPCMInput(descriptor: reader, sampleRate: 48_000, channels: 2, sampleFormat: .s16le)
        try Self.write(Self.frames(0..<1_000), to: writer)
        close(writer)
        var analyzer = BandAnalyzer(sampleRate: 48_000)
        var counts: [Int] = []
        while true {
            let count = try input.read(frames: 240, into: &analyzer)
            if count == 0 { break }
            counts.append(count)
            #expect(input.readAhead == nil)
        }
        #expect(counts == [240, 240, 240, 240, 40])
    }
}
