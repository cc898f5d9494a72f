import LightOrganCore
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A message the page sends on its `/live` WebSocket, decoded and checked.
///
/// The wire is JSON text, one object per message, at most ``maximumBytes`` bytes; anything else
/// is a ``PageProtocolError`` and the socket closes with its reason (nothing is changed).
public enum PageRequest: Sendable, Equatable {
    /// The first message: the page's secret, empty to only look.
    case hello(key: String)
    /// Change a setting: `key` is a settings key (`receiver.mode`), `value` its text as in the file.
    case set(id: Int, key: String, value: String)
    /// Light one GPIO line alone (wiring check); nil ends the check.
    case check(id: Int, line: Int?)
    /// Run the strip's wiring check (``StripCheck``): `{"type": "check", "id": 1, "strip": true}`.
    case checkStrip(id: Int)
    /// Drop the page's value of `key`: the settings file's value (or the default) applies again.
    case useFileValue(id: Int, key: String)

    /// The largest text message accepted, in bytes.
    public static let maximumBytes = 4096

    /// Decodes one text message.
    ///
    /// - Throws: ``PageProtocolError`` (code 1007 for JSON that is not a request, 1009 when too long).
    public static func decode(_ text: some Collection<UInt8>) throws(PageProtocolError) -> PageRequest {
        guard text.count <= maximumBytes else {
            throw PageProtocolError(.tooBig, "a message of \(text.count) bytes; at most \(maximumBytes)")
        }
        let message = try PageJSON.decode(PageRequestWire.self, text)
        switch message.type {
        case "hello":
            return .hello(key: try PageJSON.required(message.key, "key"))
        case "set":
            let id = try PageJSON.required(message.id, "id")
            let key = try PageJSON.required(message.key, "key")
            guard key.count <= 64 else { throw PageProtocolError(.invalidData, "a key of \(key.count) characters") }
            return .set(id: id, key: key, value: try PageJSON.required(message.value, "value").text)
        case "useFile":
            let id = try PageJSON.required(message.id, "id")
            let key = try PageJSON.required(message.key, "key")
            guard key.count <= 64 else { throw PageProtocolError(.invalidData, "a key of \(key.count) characters") }
            return .useFileValue(id: id, key: key)
        case "check":
            let id = try PageJSON.required(message.id, "id")
            if message.strip == true { return .checkStrip(id: id) }
            switch message.line {
            case .absent: throw PageProtocolError(.invalidData, "`check` needs a line (or null)")
            case .null: return .check(id: id, line: nil)
            case .line(let line):
                guard (0...1023).contains(line) else {
                    throw PageProtocolError(.invalidData, "line \(line) is not a GPIO line")
                }
                return .check(id: id, line: line)
            }
        case let other:
            throw PageProtocolError(.invalidData, "unknown message type `\(other.prefix(32))`")
        }
    }
}

/// Why a page's WebSocket was closed: a WebSocket close code and a short reason (≤ 120 bytes, as
/// a close frame allows).
public struct PageProtocolError: Error, Equatable, CustomStringConvertible {
    /// The WebSocket close codes the page server uses.
    public enum Code: UInt16, Sendable {
        /// 1003: a kind of message this socket does not take (binary on `/live`, text mid-stream).
        case unsupportedData = 1003
        /// 1007: not JSON, or not a message we know; PCM that is not finite Float32.
        case invalidData = 1007
        /// 1008: not allowed (sample rate, Origin, flooding).
        case policyViolation = 1008
        /// 1009: longer than allowed.
        case tooBig = 1009
        /// 4001: the secret does not match.
        case wrongKey = 4001
    }

    public let code: Code
    public let reason: String

    public init(_ code: Code, _ reason: String) {
        self.code = code
        self.reason = String(reason.utf8.prefix(120)) ?? String(reason.prefix(40))
    }

    public var description: String { "\(code.rawValue) \(reason)" }
}

/// The fields any page message may carry, as JSON has them.
struct PageRequestWire: Decodable {
    /// A setting's value: JSON text, number or true/false, kept as the text a settings file would hold.
    struct Value: Decodable {
        var text: String
        init(from decoder: any Decoder) throws {
            let single = try decoder.singleValueContainer()
            if let text = try? single.decode(String.self) {
                self.text = text
            } else if let flag = try? single.decode(Bool.self) {
                self.text = flag ? "true" : "false"
            } else {
                let number = try single.decode(Double.self)
                self.text = number == number.rounded() && abs(number) < 1e15 ? String(Int(number)) : String(number)
            }
        }
    }
    /// `line` of a check: missing, null (stop) or a number.
    enum Line { case absent, null, line(Int) }

    var type: String
    var key: String?
    var id: Int?
    var value: Value?
    var line: Line = .absent
    var strip: Bool?
    var sampleRate: Double?
    var channels: Int?
    var source: String?

    enum CodingKeys: String, CodingKey { case type, key, id, value, line, strip, sampleRate, channels, source }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        type = try container.decode(String.self, forKey: .type)
        key = try container.decodeIfPresent(String.self, forKey: .key)
        id = try container.decodeIfPresent(Int.self, forKey: .id)
        value = try container.decodeIfPresent(Value.self, forKey: .value)
        if container.contains(.line) {
            line = try container.decodeNil(forKey: .line) ? .null : .line(try container.decode(Int.self, forKey: .line))
        }
        strip = try container.decodeIfPresent(Bool.self, forKey: .strip)
        sampleRate = try container.decodeIfPresent(Double.self, forKey: .sampleRate)
        channels = try container.decodeIfPresent(Int.self, forKey: .channels)
        source = try container.decodeIfPresent(String.self, forKey: .source)
    }
}

/// Reading the small JSON objects of the page's protocol.
enum PageJSON {
    static func decode<T: Decodable>(_ type: T.Type, _ bytes: some Collection<UInt8>) throws(PageProtocolError) -> T {
        do {
            return try JSONDecoder().decode(T.self, from: Data(bytes))
        } catch {
            throw PageProtocolError(.invalidData, "not a message of the page's protocol (JSON with a known `type`)")
        }
    }

    static func required<T>(_ value: T?, _ field: String) throws(PageProtocolError) -> T {
        guard let value else { throw PageProtocolError(.invalidData, "`\(field)` is missing or of the wrong kind") }
        return value
    }
}
