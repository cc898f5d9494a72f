import Foundation
import LightOrganCore
import LightOrganSettings
import LightOrganTestSupport
import LightOrganWeb

/// The page's decoders on hostile input: what a WebSocket client may send, as random bytes and as
/// mutations of real messages. Every input is either a well-formed request whose fields keep their
/// invariants, or a refusal with a WebSocket close code and a reason a close frame can carry.
enum PageFuzz {
    /// Real messages, mutated: a byte changed, dropped, doubled, or a field's value swapped.
    static let seeds = [
        #"{"type":"hello","key":"i4h9vVzRmfk06_FTvYoTcs"}"#,
        #"{"type":"set","id":1,"key":"receiver.mode","value":"onoff"}"#,
        #"{"type":"set","id":2,"key":"receiver.delay","value":120}"#,
        #"{"type":"check","id":3,"line":5}"#,
        #"{"type":"useFile","id":5,"key":"receiver.delay"}"#,
        #"{"type":"check","id":4,"line":null}"#,
        #"{"type":"start","key":"k","sampleRate":48000,"channels":1,"source":"microphone"}"#,
    ].map { Array($0.utf8) }
    static let swaps = [
        "null", "true", "-1", "1e400", "1.5", "\"\"", "[]", "{}", "\"\\u0000\"", "99999999999999999999", "\"\\ud800\"",
    ]
    .map { Array($0.utf8) }

    static func message(_ generator: inout SplitMix64) -> [UInt8] {
        switch generator.next() % 4 {
        case 0: return generator.bytes(Int.random(in: 0...64, using: &generator))
        default:
            var bytes = seeds[Int(generator.next() % UInt64(seeds.count))]
            for _ in 0..<Int.random(in: 1...3, using: &generator) where !bytes.isEmpty {
                let at = Int.random(in: 0..<bytes.count, using: &generator)
                switch generator.next() % 5 {
                case 0: bytes[at] = UInt8.random(in: 0...255, using: &generator)
                case 1: bytes.remove(at: at)
                case 2: bytes.insert(bytes[at], at: at)
                case 3:
                    if let colon = bytes[at...].firstIndex(of: UInt8(ascii: ":")) {
                        let end =
                            bytes[colon...].firstIndex { $0 == UInt8(ascii: ",") || $0 == UInt8(ascii: "}") }
                            ?? bytes.count
                        bytes.replaceSubrange(
                            (colon + 1)..<end, with: swaps[Int(generator.next() % UInt64(swaps.count))])
                    }
                default: bytes = Array(bytes.prefix(at))
                }
            }
            return bytes
        }
    }

    static func checkRefusal(_ error: PageProtocolError, _ input: [UInt8]) throws(FuzzFailure) {
        try require(!error.reason.isEmpty && error.reason.utf8.count <= 120, "reason `\(error.reason)` for \(input)")
    }

    /// `PageRequest.decode` and `BrowserAudioStream.begin` on random and mutated text, and
    /// `HTTPSRedirect.location` with it as the host and the target: always this host, a path, no
    /// byte a header could be split on.
    static func runRequests(_ generator: inout SplitMix64, count: Int) throws(FuzzFailure) {
        for _ in 0..<count {
            let input = message(&generator)
            switch Result(catching: { () throws(PageProtocolError) in try PageRequest.decode(input) }) {
            case .success(.hello), .success(.checkStrip): break
            case .success(.set(_, let key, _)), .success(.useFileValue(_, let key)):
                try require(key.count <= 64, "a key of \(key.count) characters from \(input)")
            case .success(.check(_, let line)):
                try require(line.map { (0...1023).contains($0) } ?? true, "line \(line!) from \(input)")
            case .failure(let error): try checkRefusal(error, input)
            }
            switch Result(catching: { () throws(PageProtocolError) in try BrowserAudioStream.begin(input) }) {
            case .success(let stream):
                try require(
                    BrowserAudioStream.sampleRates.contains(stream.start.sampleRate),
                    "rate \(stream.start.sampleRate) from \(input)")
            case .failure(let error): try checkRefusal(error, input)
            }
            // The same bytes as a Host header and as a request target of plain HTTP.
            let text = String(decoding: input, as: UTF8.self)
            for (host, uri) in [(text, "/"), ("pi.local:8443", text), (text, text)] {
                guard let location = HTTPSRedirect.location(host: host, uri: uri) else { continue }
                let path = location.utf8.dropFirst(8 + host.utf8.count)
                try require(
                    location.hasPrefix("https://\(host)") && path.first == UInt8(ascii: "/")
                        && path.dropFirst().first != UInt8(ascii: "/")
                        && location.utf8.allSatisfy { (0x21...0x7e).contains($0) },
                    "redirect \(location) for host \(host) and target \(uri)")
            }
        }
    }

    /// `BrowserAudioStream.decode` on binary messages of every length: accepted exactly when they
    /// are 128…8192 finite Float32 samples at no more than real time; samples come out within ±1.
    static func runAudio(_ generator: inout SplitMix64, count: Int) throws(FuzzFailure) {
        var stream = try! BrowserAudioStream.begin(Array(#"{"type":"start","key":"k","sampleRate":48000}"#.utf8))
        var samples: [Float] = []
        var clock = 0.0
        for _ in 0..<count {
            let length: Int
            switch generator.next() % 4 {
            case 0: length = Int.random(in: 0...40_000, using: &generator)
            default: length = 4 * Int.random(in: 120...1100, using: &generator)
            }
            var bytes: [UInt8]
            if generator.next() % 3 == 0 {
                bytes = generator.bytes(length)
            } else {
                bytes =
                    (0..<length / 4).flatMap { _ in
                        withUnsafeBytes(of: Float.random(in: -3...3, using: &generator).bitPattern.littleEndian) {
                            Array($0)
                        }
                    } + generator.bytes(length % 4)
            }
            clock += Double.random(in: 0...0.03, using: &generator)
            let before = stream
            let now = clock
            let decoded = Result { () throws(PageProtocolError) in
                try stream.decode(bytes, at: now, into: &samples)
            }
            switch decoded {
            case .success:
                let expected = length / 4
                try require(length % 4 == 0 && (128...8192).contains(expected), "\(length) bytes accepted")
                try require(
                    samples.count == expected && samples.allSatisfy { $0.isFinite && abs($0) <= 1 },
                    "samples out of range")
            case .failure(let error):
                try checkRefusal(error, Array(bytes.prefix(16)))
                try require(
                    length % 4 != 0 || !(128...8192).contains(length / 4) || error.code != .unsupportedData,
                    "\(length) bytes refused as malformed")
                stream = before
                if error.code == .policyViolation { clock += 1 }  // let it catch up, as a real page would be cut off
            }
        }
    }

    /// Settings from the page: a refused value changes nothing; an accepted one is written to the
    /// page's file and reads back (through the real loader) as the same settings.
    static func runSettings(_ generator: inout SplitMix64, count: Int) async throws(FuzzFailure) {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("lightorgan-fuzz-\(UUID())").path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let pageFile = directory + "/page-settings.yaml"
        var raw: [String: RawSetting] = [:]
        for key in SettingsCatalog.keys { raw[key.name] = RawSetting(key.defaultValue, from: .builtInDefault) }
        var live = LiveSettings(raw: raw, settings: try! SettingsCatalog.resolve(raw), pageFile: pageFile)
        let keys = PageSettings.tunableKeys + ["receiver.port", "page.enabled", "receiver.lines.bass", "x"]
        let values = [
            "pwm", "onoff", "bar", "0", "1", "50", "100", "101", "-5", "0.05", "0.5", "2000", "2001", "auto", "", " 7 ",
            "1e3", "nan", "#", "a: b", "\"", "ünï", "100 %",
        ]
        for input in 0..<count {
            let key = keys[Int(generator.next() % UInt64(keys.count))]
            let value =
                generator.next() % 5 == 0
                ? String(decoding: generator.bytes(Int.random(in: 0...8, using: &generator)), as: UTF8.self)
                : values[Int(generator.next() % UInt64(values.count))]
            let before = live.settings
            do {
                try live.set(key, to: value)
            } catch {
                try require(live.settings == before, "refused \(key) = \(value) changed the settings")
                continue
            }
            guard input % 10 == 0 else { continue }
            do {
                try StateDirectory.writePrivate(live.pageFileText, to: pageFile)
                let loaded = try await SettingsLoader(environment: [:]).load(pageFile: pageFile)
                try require(
                    loaded.settings == live.settings,
                    "\(key) = \(value) read back as other settings:\n\(live.pageFileText)")
            } catch let failure as FuzzFailure {
                throw failure
            } catch {
                throw FuzzFailure(
                    "\(key) = \(value): the page's file does not read back: \(error)\n\(live.pageFileText)")
            }
        }
    }
}
