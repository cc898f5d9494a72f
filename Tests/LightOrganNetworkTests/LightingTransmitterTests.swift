import Foundation
import Glibc
import LightOrganCore
import LightOrganNetwork
import Logging
import Testing

/// A UDP socket on 127.0.0.1 that collects what a transmitter sends.
final class DatagramCatcher {
    let descriptor: CInt
    let port: Int

    init() throws {
        let descriptor = socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
        self.descriptor = descriptor
        port = bindToLoopback(descriptor) ?? 0
        try #require(port > 0)
    }

    deinit { close(descriptor) }

    /// Every datagram that arrives until none has for `quiet` seconds, for `atMost` seconds in all.
    func collect(quiet: Double = 0.3, atMost: Double = 3) -> [[UInt8]] {
        var packets: [[UInt8]] = []
        var poller = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
        let end = Date().addingTimeInterval(atMost)
        while Date() < end, poll(&poller, 1, Int32(quiet * 1000)) > 0 {
            var buffer = [UInt8](repeating: 0, count: 2048)
            let count = recv(descriptor, &buffer, buffer.count, 0)
            guard count > 0 else { break }
            packets.append(Array(buffer[..<count]))
        }
        return packets
    }
}

@Suite("Lighting transmitter over a real UDP socket")
struct LightingTransmitterTests {
    func transmitter(_ catcher: DatagramCatcher, rate: Int = 100, releaseAfter: Duration = .seconds(5)) throws
        -> LightingTransmitter
    {
        let target = try LightingTarget(parsing: "sacn://127.0.0.1:\(catcher.port)?rate=\(rate)&gamma=1")
        let patch = try LightingPatch(
            target: target,
            fixtures: [Fixture(name: "f", target: target.address)].map {
                var fixture = $0
                fixture.gamma = 1
                return fixture
            })
        return LightingTransmitter(
            patch: patch, source: LightingSource(cid: Array(repeating: 7, count: 16), name: "test"),
            releaseAfter: releaseAfter,
            logger: Logger(label: "test"))
    }

    /// (channels 1…3, terminated) of an E1.31 data packet.
    func read(_ packet: [UInt8]) -> ([UInt8], Bool) { (Array(packet[126..<129]), packet[112] & 0x40 != 0) }

    @Test("stop sends the frame, then a dark frame and three stream-terminated packets, and nothing after")
    func stopTerminates() throws {
        let catcher = try DatagramCatcher()
        let lights = try transmitter(catcher)
        Thread.sleep(forTimeInterval: 0.2)  // resolved on its thread
        lights.show(LevelFrame(bass: 10, mid: 20, treble: 30))
        lights.stop()
        lights.show(LevelFrame(bass: 1, mid: 1, treble: 1))  // after stop: ignored
        let packets = catcher.collect().map(read)
        #expect(packets.count == 5, "\(packets)")
        #expect(packets.first?.0 == [10, 20, 30] && packets.first?.1 == false)
        #expect(packets.dropFirst().allSatisfy { $0.0 == [0, 0, 0] })
        #expect(packets.suffix(3).allSatisfy(\.1) && packets[1].1 == false)
    }

    @Test("dark for release_after: let go (terminated) and silent until a lamp lights again")
    func releaseAfterDarkness() throws {
        let catcher = try DatagramCatcher()
        let lights = try transmitter(catcher, releaseAfter: .milliseconds(300))
        Thread.sleep(forTimeInterval: 0.2)
        lights.show(LevelFrame(bass: 50, mid: 0, treble: 0))
        Thread.sleep(forTimeInterval: 0.05)
        lights.show(.off)
        let released = catcher.collect(quiet: 0.6).map(read)
        #expect(released.first?.0 == [50, 0, 0])
        #expect(released.suffix(3).allSatisfy { $0.1 && $0.0 == [0, 0, 0] }, "\(released)")
        lights.show(.off)
        #expect(catcher.collect(quiet: 0.3).isEmpty)  // released: dark frames send nothing
        lights.show(LevelFrame(bass: 0, mid: 9, treble: 0))
        let again = catcher.collect(quiet: 0.1).map(read)
        #expect(again.first?.0 == [0, 9, 0] && again.first?.1 == false)
        lights.stop()
    }

    @Test("frames faster than the rate: at most the rate goes out, and the newest frame is the last one sent")
    func rateLimitNewestWins() throws {
        let catcher = try DatagramCatcher()
        let lights = try transmitter(catcher, rate: 20)
        Thread.sleep(forTimeInterval: 0.2)
        // 100 frames 4 ms apart: 0.4 s, longer on a busy machine (the bound follows the time they took: 20/s, and
        // up to 8 more for the first slot, the last frame's slot and the keep-alives while collecting).
        let began = ContinuousClock.now
        for step in 1...100 {
            lights.show(LevelFrame(bass: UInt8(step), mid: 1, treble: 1))
            Thread.sleep(forTimeInterval: 0.004)
        }
        let shown = (ContinuousClock.now - began) / .seconds(1)
        // The last frame waits for its slot, then goes out (at the latest with the keep-alive, 1 s).
        let packets = catcher.collect(quiet: 1.3, atMost: 1.3).map(read)
        lights.stop()
        let lit = packets.filter { $0.0[1] == 1 }
        #expect(lit.count >= 4 && lit.count <= Int(20 * shown) + 8, "\(lit.count) packets for \(shown) s at 20/s")
        #expect(lit.last?.0[0] == 100)
        #expect(lit.map { $0.0[0] } == lit.map { $0.0[0] }.sorted())
    }
}
