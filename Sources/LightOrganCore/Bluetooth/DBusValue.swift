/// One value of the D-Bus wire format, with its type: what BlueZ's and BlueALSA's interfaces take and give.
///
/// The container cases carry what their signature needs to be written even when empty: an array its element
/// type. A dictionary (`a{sv}`) is an array of ``dictEntry(_:_:)`` elements.
public indirect enum DBusValue: Sendable, Equatable {
    case byte(UInt8)
    case boolean(Bool)
    case int16(Int16)
    case uint16(UInt16)
    case int32(Int32)
    case uint32(UInt32)
    case int64(Int64)
    case uint64(UInt64)
    case double(Double)
    case string(String)
    case objectPath(String)
    case signature(String)
    /// An index into the file descriptors that came with the message.
    case unixFD(UInt32)
    case variant(DBusValue)
    /// Elements all of the single complete type `elementSignature` (`s`, `{sv}`, `(ii)`).
    case array(elementSignature: String, [DBusValue])
    case structure([DBusValue])
    case dictEntry(DBusValue, DBusValue)

    /// The value's type as a D-Bus signature (`s`, `a{sv}`, `(ub)`).
    public var signature: String {
        switch self {
        case .byte: "y"
        case .boolean: "b"
        case .int16: "n"
        case .uint16: "q"
        case .int32: "i"
        case .uint32: "u"
        case .int64: "x"
        case .uint64: "t"
        case .double: "d"
        case .string: "s"
        case .objectPath: "o"
        case .signature: "g"
        case .unixFD: "h"
        case .variant: "v"
        case .array(let element, _): "a" + element
        case .structure(let members): "(" + members.map(\.signature).joined() + ")"
        case .dictEntry(let key, let value): "{" + key.signature + value.signature + "}"
        }
    }

    /// A dictionary of strings to variants (`a{sv}`), the type of every property set.
    public static func properties(_ entries: [(String, DBusValue)]) -> DBusValue {
        .array(elementSignature: "{sv}", entries.map { .dictEntry(.string($0.0), .variant($0.1)) })
    }

    /// The text of a string, object path or signature (through a variant); nil for other values.
    public var text: String? {
        switch self {
        case .string(let text), .objectPath(let text), .signature(let text): text
        case .variant(let inner): inner.text
        default: nil
        }
    }

    /// A boolean's value (through a variant); nil for other values.
    public var bool: Bool? {
        switch self {
        case .boolean(let value): value
        case .variant(let inner): inner.bool
        default: nil
        }
    }

    /// An integer's value (through a variant); nil for other values.
    public var integer: Int64? {
        switch self {
        case .byte(let value): Int64(value)
        case .int16(let value): Int64(value)
        case .uint16(let value): Int64(value)
        case .int32(let value): Int64(value)
        case .uint32(let value): Int64(value)
        case .int64(let value): value
        case .uint64(let value): Int64(truncatingIfNeeded: value)
        case .variant(let inner): inner.integer
        default: nil
        }
    }

    /// The elements of an array (through a variant); nil for other values.
    public var elements: [DBusValue]? {
        switch self {
        case .array(_, let elements): elements
        case .variant(let inner): inner.elements
        default: nil
        }
    }

    /// A dictionary's entries by their keys' text (`a{sv}`, `a{oa{sa{sv}}}`: the values as they are, variants
    /// unwrapped); nil when this is no array of dictionary entries with text keys.
    public var dictionary: [String: DBusValue]? {
        guard let elements else { return nil }
        var entries: [String: DBusValue] = [:]
        for element in elements {
            guard case .dictEntry(let key, let value) = element, let name = key.text else { return nil }
            if case .variant(let inner) = value { entries[name] = inner } else { entries[name] = value }
        }
        return entries
    }
}
