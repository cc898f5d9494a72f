public import LightOrganCore
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// What the receiver answers a page, as one JSON object: `hello`, the result of a `set` or a
/// `check` (`ok`, and the applied value or the error in the settings file's words), `started`.
/// Fields a reply does not have are left out; a check's `line` is `null` when it ended the check.
public struct PageReply: Sendable, Equatable, Encodable {
    public var type: String
    public var id: Int?
    public var ok: Bool?
    public var control: Bool?
    public var key: String?
    public var value: String?
    public var error: String?
    public var line: NullWhenAbsent<Int>?

    /// The answer to `hello`: whether this page may change things.
    public static func hello(control: Bool) -> PageReply { PageReply(type: "hello", control: control) }

    /// A setting applied (`value` as applied).
    public static func set(id: Int, key: String, value: String) -> PageReply {
        PageReply(type: "set", id: id, ok: true, key: key, value: value)
    }

    /// A setting refused, and why.
    public static func set(id: Int, key: String, refused error: String) -> PageReply {
        PageReply(type: "set", id: id, ok: false, key: key, error: error)
    }

    /// A wiring check begun on `line`, or ended (nil).
    public static func check(id: Int, line: Int?) -> PageReply {
        PageReply(type: "check", id: id, ok: true, line: NullWhenAbsent(wrappedValue: line))
    }

    /// A wiring check refused, and why.
    public static func check(id: Int, refused error: String) -> PageReply {
        PageReply(type: "check", id: id, ok: false, error: error)
    }

    /// The answer to `/audio`'s `start`: the receiver takes the sound.
    public static let started = PageReply(type: "started")

    /// The JSON text sent to the page (keys sorted).
    public func json() -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return (try? String(decoding: encoder.encode(self), as: UTF8.self)) ?? #"{"type":"\#(type)"}"#
    }
}
