import Foundation
import LightOrganCore
import LightOrganWeb
import Testing

/// The page's messages: what is accepted, and that everything else is refused with a reason.
@Suite struct PageProtocolTests {
    private func decode(_ text: String) throws(PageProtocolError) -> PageRequest {
        try PageRequest.decode(Array(text.utf8))
    }

    @Test func requestsDecode() throws {
        #expect(try decode(#"{"type":"hello","key":"abc"}"#) == .hello(key: "abc"))
        #expect(
            try decode(#"{"type":"set","id":3,"key":"receiver.mode","value":"onoff"}"#)
                == .set(id: 3, key: "receiver.mode", value: "onoff"))
        #expect(
            try decode(#"{"type":"set","id":4,"key":"receiver.delay","value":120}"#)
                == .set(id: 4, key: "receiver.delay", value: "120"))
        #expect(
            try decode(#"{"type":"set","id":5,"key":"receiver.timeout","value":0.25}"#)
                == .set(id: 5, key: "receiver.timeout", value: "0.25"))
        #expect(try decode(#"{"type":"check","id":6,"line":5}"#) == .check(id: 6, line: 5))
        #expect(try decode(#"{"type":"check","id":7,"line":null}"#) == .check(id: 7, line: nil))
        #expect(
            try decode(#"{"type":"useFile","id":8,"key":"receiver.delay"}"#)
                == .useFileValue(id: 8, key: "receiver.delay"))
    }

    @Test(arguments: [
        ("", PageProtocolError.Code.invalidData),
        ("[1,2]", .invalidData),
        (#"{"type":"hello"}"#, .invalidData),
        (#"{"type":"hello","key":5}"#, .invalidData),
        (#"{"type":"reboot"}"#, .invalidData),
        (#"{"type":"set","id":1.5,"key":"receiver.mode","value":"pwm"}"#, .invalidData),
        (#"{"type":"set","id":1,"key":"receiver.mode"}"#, .invalidData),
        (#"{"type":"check","id":1}"#, .invalidData),
        (#"{"type":"useFile","key":"receiver.delay"}"#, .invalidData),
        (#"{"type":"check","id":1,"line":99999}"#, .invalidData),
        (#"{"type":"hello","key":""# + String(repeating: "k", count: 5000) + #""}"#, .tooBig),
    ])
    func badRequestsAreRefused(text: String, code: PageProtocolError.Code) {
        #expect(throws: PageProtocolError.self) { try decode(text) }
        do {
            _ = try decode(text)
        } catch {
            #expect(error.code == code)
            #expect(!error.reason.isEmpty && error.reason.utf8.count <= 120)
        }
    }

    @Test func audioStartChecksRateAndChannels() throws {
        let stream = try BrowserAudioStream.begin(
            Array(#"{"type":"start","key":"k","sampleRate":44100,"channels":1,"source":"tab"}"#.utf8))
        #expect(stream.start == .init(key: "k", sampleRate: 44100, source: "tab"))
        for bad in [
            #"{"type":"start","key":"k","sampleRate":7999}"#, #"{"type":"start","key":"k","sampleRate":192001}"#,
            #"{"type":"start","key":"k","sampleRate":44100.5}"#,
            #"{"type":"start","key":"k","sampleRate":48000,"channels":2}"#,
        ] {
            #expect(throws: PageProtocolError.self) { try BrowserAudioStream.begin(Array(bad.utf8)) }
        }
        #expect(throws: PageProtocolError.self) {
            try BrowserAudioStream.begin(Array(#"{"type":"hello","key":"k"}"#.utf8))
        }
    }

    @Test func audioBlocksDecodeAndPaceIsEnforced() throws {
        var stream = try BrowserAudioStream.begin(Array(#"{"type":"start","key":"k","sampleRate":8000}"#.utf8))
        let values: [Float] = (0..<800).map { Float($0 % 3) - 1 }
        let bytes = values.flatMap { value in withUnsafeBytes(of: value.bitPattern.littleEndian) { Array($0) } }
        var samples: [Float] = []
        try stream.decode(bytes, at: 0, into: &samples)
        #expect(samples == values)
        // 0.1 s of audio per message: up to one second ahead of the clock passes …
        for index in 1...10 { try stream.decode(bytes, at: Double(index) * 0.01, into: &samples) }
        // … more does not (1.2 s of audio 0.15 s after the first).
        #expect(throws: PageProtocolError.self) { try stream.decode(bytes, at: 0.15, into: &samples) }
        // In real time it goes on.
        try stream.decode(bytes, at: 5, into: &samples)
        #expect(throws: PageProtocolError.self) { try stream.decode([0, 0, 0], at: 6, into: &samples) }
        #expect(throws: PageProtocolError.self) {
            try stream.decode([UInt8](repeating: 0, count: 4 * 9000), at: 6, into: &samples)
        }
        let nan = [UInt8](repeating: 0xff, count: 4 * 128)
        #expect(throws: PageProtocolError.self) { try stream.decode(nan, at: 6, into: &samples) }
    }

    @Test func originMustBeThePageItself() {
        #expect(OriginPolicy.allows(origin: "https://pi.local:8443", host: "pi.local:8443"))
        #expect(OriginPolicy.allows(origin: "https://PI.local:8443", host: "pi.local:8443"))
        #expect(OriginPolicy.allows(origin: "https://pi.local", host: "pi.local:443"))
        #expect(!OriginPolicy.allows(origin: "http://pi.local:8443", host: "pi.local:8443"))
        #expect(!OriginPolicy.allows(origin: "https://evil.example", host: "pi.local:8443"))
        #expect(!OriginPolicy.allows(origin: "null", host: "pi.local:8443"))
        #expect(!OriginPolicy.allows(origin: nil, host: "pi.local:8443"))
        #expect(!OriginPolicy.allows(origin: "https://pi.local:8443.evil.example", host: "pi.local:8443"))
    }

    @Test func plainHTTPIsSentToTheSameAddressOverHTTPS() {
        #expect(HTTPSRedirect.location(host: "pi.local:8443", uri: "/?a=b") == "https://pi.local:8443/?a=b")
        #expect(HTTPSRedirect.location(host: "[fd00::5]:8443", uri: "/") == "https://[fd00::5]:8443/")
        #expect(HTTPSRedirect.location(host: "pi.local:8443", uri: "//evil.example/x") == "https://pi.local:8443/")
        #expect(HTTPSRedirect.location(host: "pi.local:8443", uri: "http://evil.example/") == "https://pi.local:8443/")
        #expect(HTTPSRedirect.location(host: "pi.local:8443", uri: "/a b") == "https://pi.local:8443/")
        #expect(HTTPSRedirect.location(host: "evil.example/x?", uri: "/") == nil)
        #expect(HTTPSRedirect.location(host: "pi.local\r\nSet-Cookie: x", uri: "/") == nil)
        #expect(HTTPSRedirect.location(host: "", uri: "/") == nil)
        #expect(HTTPSRedirect.location(host: nil, uri: "/") == nil)
    }

    @Test func secretsCompareWholly() {
        let secret = PageSecret.make()
        #expect(secret.text.count == 22)
        #expect(secret.matches(secret.text))
        #expect(!secret.matches(String(secret.text.dropLast())))
        #expect(!secret.matches(secret.text + "x"))
        #expect(!secret.matches(""))
        #expect(PageSecret.make() != secret)
        #expect(PageSecret(reading: secret.text + "\n") == secret)
        #expect(PageSecret(reading: "short") == nil)
        #expect("\(secret)" == "(secret)")
    }

    @Test func statusWritesAbsentFactsAsNull() throws {
        var status = ReceiverStatus(
            receiver: .init(
                name: "pi", port: 8181, output: "gpio", chip: nil, mode: "pwm", lines: [.init(band: .bass, line: 5)]))
        status.settings = [
            .init(
                key: "receiver.mode", value: "pwm", allowed: "pwm, onoff, bar", summary: "s", source: "default",
                locked: nil, fileValue: "pwm", fileSource: "default")
        ]
        let object = try #require(JSONSerialization.jsonObject(with: Data(status.json().utf8)) as? [String: Any])
        #expect(object["type"] as? String == "status")
        #expect(object["sender"] is NSNull)
        #expect(object["sound"] is NSNull)
        #expect(object["frameAge"] is NSNull)
        status.sound = "AirPlay: playing"
        let playing = try #require(JSONSerialization.jsonObject(with: Data(status.json().utf8)) as? [String: Any])
        #expect(playing["sound"] as? String == "AirPlay: playing")
        let receiver = try #require(object["receiver"] as? [String: Any])
        #expect(receiver["chip"] is NSNull)
        let lines = try #require(receiver["lines"] as? [[String: Any]])
        #expect(lines.first?["pin"] as? Int == 29)
    }

    @Test func repliesCarryTheirFieldsOnly() {
        #expect(PageReply.hello(control: true).json() == #"{"control":true,"type":"hello"}"#)
        #expect(
            PageReply.set(id: 2, key: "receiver.delay", value: "120").json()
                == #"{"id":2,"key":"receiver.delay","ok":true,"type":"set","value":"120"}"#)
        #expect(
            PageReply.set(id: 3, key: "receiver.mode", refused: "receiver.mode = x is not allowed").json()
                == #"{"error":"receiver.mode = x is not allowed","id":3,"key":"receiver.mode","ok":false,"type":"set"}"#
        )
        #expect(PageReply.check(id: 4, line: nil).json() == #"{"id":4,"line":null,"ok":true,"type":"check"}"#)
        #expect(PageReply.check(id: 5, line: 13).json() == #"{"id":5,"line":13,"ok":true,"type":"check"}"#)
        #expect(PageReply.started.json() == #"{"type":"started"}"#)
    }
}
