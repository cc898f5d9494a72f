import Foundation
import LightOrganCore
import LightOrganServices
import LightOrganTestSupport
import LightOrganWeb
import NIOCore
import NIOEmbedded
import Testing

@Suite("SoundSocketHandler: a browser's sound on /audio drives the lamps through the switchboard")
struct SoundSocketHandlerTests {
    func soundSocket(rules: ReceiverRules = ReceiverRules()) throws -> PageSocket {
        try PageSocket(rules: rules) { SoundSocketHandler(socket: $0, peer: "192.168.1.30:40000") }
    }

    func start(key: String = PageSocket.key) -> String {
        #"{"type":"start","key":"\#(key)","sampleRate":48000,"source":"microphone"}"#
    }

    /// `count` samples of a loud 100 Hz tone at 48 kHz, as little-endian Float32 bytes.
    func tone(_ count: Int) -> [UInt8] {
        (0..<count).flatMap { index -> [UInt8] in
            let sample = Float(0.8 * sin(2 * Double.pi * 100 * Double(index) / 48_000))
            let bits = sample.bitPattern
            return [UInt8(bits & 0xff), UInt8(bits >> 8 & 0xff), UInt8(bits >> 16 & 0xff), UInt8(bits >> 24)]
        }
    }

    @Test("start with the key is answered started; the samples reach the lamps; closing turns them off")
    func soundDrivesLamps() throws {
        let page = try soundSocket()
        defer { page.finish() }
        try page.send(start())
        #expect(try page.written() == [.text(PageReply.started.json())])
        try page.send(binary: tone(4800))
        #expect(page.output.frames.count == 1, "ten frames completed, the newest shown")
        let sender = try #require(page.control.status().sender)
        #expect(sender.kind == .browser && sender.address == "192.168.1.30" && sender.port == nil)
        try page.channel.close().wait()
        #expect(page.output.frames.last?.isOff == true)
        #expect(page.control.status().sender == nil && page.control.status().connections == 0)
    }

    @Test("a wrong key closes the socket with 4001 and opens no sender")
    func wrongKey() throws {
        let page = try soundSocket()
        defer { page.finish() }
        try page.send(start(key: "not-the-secret-at-all"))
        #expect(try page.written() == [.close(code: 4001, reason: "wrong key")])
        #expect(page.control.status().connections == 0)
    }

    @Test("a browser the switchboard refuses is closed with 1008 and the reason")
    func refused() throws {
        var rules = ReceiverRules()
        rules.allow = [try #require(AddressRange("10.0.0.0/8"))]
        let page = try soundSocket(rules: rules)
        defer { page.finish() }
        try page.send(start())
        #expect(
            try page.written() == [
                .close(
                    code: 1008, reason: "the receiver refused this sender (receiver.allow or receiver.max_connections)")
            ])
    }

    @Test("samples before start close with 1003; text after start closes with 1003; too few samples with 1003")
    func outOfOrder() throws {
        let early = try soundSocket()
        defer { early.finish() }
        try early.send(binary: tone(480))
        #expect(try early.written() == [.close(code: 1003, reason: "send the start message first")])
        let chatty = try soundSocket()
        defer { chatty.finish() }
        try chatty.send(start())
        try chatty.send(start())
        #expect(
            try chatty.written().last == .close(code: 1003, reason: "after start, send binary Float32 samples only"))
        let short = try soundSocket()
        defer { short.finish() }
        try short.send(start())
        try short.send(binary: tone(100))
        #expect(
            try short.written().last == .close(code: 1003, reason: "400 bytes is not 128…8192 Float32 samples"))
        #expect(short.output.frames.isEmpty)
    }
}
