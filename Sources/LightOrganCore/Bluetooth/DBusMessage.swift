/// One D-Bus message as it travels on the bus socket: a method call, its reply or error, or a signal
/// (the D-Bus specification's "Message Protocol"). Encoded little-endian; decoded in either byte order.
///
/// Every value is aligned to its natural boundary counted from the message's first byte (strings and arrays
/// 4, structures and 64-bit numbers 8); the header ends padded to 8, the body follows.
public struct DBusMessage: Sendable, Equatable {
    /// What the message is.
    public enum Kind: UInt8, Sendable {
        case methodCall = 1
        case methodReturn = 2
        case error = 3
        case signal = 4
    }

    public var kind: Kind
    /// `noReplyExpected` (1), `noAutoStart` (2).
    public var flags: UInt8 = 0
    /// Set by the connection as it sends; a reply names it in ``replySerial``.
    public var serial: UInt32 = 0
    public var path: String?
    public var interface: String?
    public var member: String?
    public var errorName: String?
    public var replySerial: UInt32?
    public var destination: String?
    public var sender: String?
    /// The body's values, in order; their types make its signature.
    public var body: [DBusValue] = []

    /// A method call of `member` on `interface` at `path` of `destination`.
    public static func call(
        _ destination: String, _ path: String, _ interface: String, _ member: String, _ body: [DBusValue] = []
    ) -> DBusMessage {
        var message = DBusMessage(kind: .methodCall)
        (message.destination, message.path, message.interface, message.member) = (destination, path, interface, member)
        message.body = body
        return message
    }

    /// The reply to `call` with `body`.
    public static func reply(to call: DBusMessage, _ body: [DBusValue] = []) -> DBusMessage {
        var message = DBusMessage(kind: .methodReturn)
        (message.replySerial, message.destination, message.body) = (call.serial, call.sender, body)
        return message
    }

    /// The error `name` (`org.bluez.Error.Rejected`) in answer to `call`, with `text`.
    public static func error(to call: DBusMessage, _ name: String, _ text: String) -> DBusMessage {
        var message = DBusMessage(kind: .error)
        (message.replySerial, message.destination, message.errorName) = (call.serial, call.sender, name)
        message.body = [.string(text)]
        return message
    }

    public init(kind: Kind) {
        self.kind = kind
    }

    /// The body's signature (`sv`), empty for no body.
    public var signature: String { body.map(\.signature).joined() }

    /// The message's bytes, little-endian.
    public func encoded() -> [UInt8] {
        var fields: [DBusValue] = []
        func field(_ code: UInt8, _ value: DBusValue?) {
            if let value { fields.append(.structure([.byte(code), .variant(value)])) }
        }
        field(1, path.map(DBusValue.objectPath))
        field(2, interface.map(DBusValue.string))
        field(3, member.map(DBusValue.string))
        field(4, errorName.map(DBusValue.string))
        field(5, replySerial.map(DBusValue.uint32))
        field(6, destination.map(DBusValue.string))
        field(7, sender.map(DBusValue.string))
        if !body.isEmpty { field(8, .signature(signature)) }
        var bodyWriter = DBusWriter()
        for value in body { bodyWriter.write(value) }
        var writer = DBusWriter()
        writer.write(.byte(UInt8(ascii: "l")))
        writer.write(.byte(kind.rawValue))
        writer.write(.byte(flags))
        writer.write(.byte(1))
        writer.write(.uint32(UInt32(bodyWriter.bytes.count)))
        writer.write(.uint32(serial))
        writer.write(.array(elementSignature: "(yv)", fields))
        writer.pad(to: 8)
        return writer.bytes + bodyWriter.bytes
    }

    /// How many bytes the message that begins with `start` (its first 16 bytes at least) takes in all; nil
    /// when fewer than 16 bytes are there.
    ///
    /// - Throws: ``DBusWireError`` when the start is no message's.
    public static func length(of start: ArraySlice<UInt8>) throws -> Int? {
        guard start.count >= 16 else { return nil }
        let first = start.startIndex
        let little: Bool
        switch start[first] {
        case UInt8(ascii: "l"): little = true
        case UInt8(ascii: "B"): little = false
        default: throw DBusWireError("not a D-Bus message (byte order \(start[first]))")
        }
        func number(at offset: Int) -> Int {
            let bytes = (0..<4).map { UInt32(start[first + offset + $0]) }
            let ordered = little ? bytes.reversed() : bytes
            return Int(ordered.reduce(0) { $0 << 8 | $1 })
        }
        let bodyLength = number(at: 4)
        let fieldsLength = number(at: 12)
        guard bodyLength < 1 << 27, fieldsLength < 1 << 26 else {
            throw DBusWireError("a D-Bus message too long (\(bodyLength) bytes of body)")
        }
        return (16 + fieldsLength + 7) / 8 * 8 + bodyLength
    }

    /// The message in `bytes` (exactly one, as ``length(of:)`` measured it).
    ///
    /// - Throws: ``DBusWireError`` when it is malformed.
    public init(decoding bytes: [UInt8]) throws {
        guard bytes.count >= 16 else { throw DBusWireError("a D-Bus message of \(bytes.count) bytes") }
        var reader = DBusReader(bytes: bytes, littleEndian: bytes[0] == UInt8(ascii: "l"))
        _ = try reader.read("y")
        guard let kindValue = try reader.read("y").integer, let kind = Kind(rawValue: UInt8(kindValue)) else {
            throw DBusWireError("a D-Bus message of an unknown type")
        }
        self.kind = kind
        flags = UInt8(try reader.read("y").integer ?? 0)
        _ = try reader.read("y")
        let bodyLength = Int(try reader.read("u").integer ?? 0)
        serial = UInt32(try reader.read("u").integer ?? 0)
        var signature = ""
        for field in try reader.read("a(yv)").elements ?? [] {
            guard case .structure(let members) = field, members.count == 2, let code = members[0].integer else {
                continue
            }
            let value = members[1]
            switch code {
            case 1: path = value.text
            case 2: interface = value.text
            case 3: member = value.text
            case 4: errorName = value.text
            case 5: replySerial = value.integer.map { UInt32(truncatingIfNeeded: $0) }
            case 6: destination = value.text
            case 7: sender = value.text
            case 8: signature = value.text ?? ""
            default: break
            }
        }
        try reader.align(8)
        guard reader.position + bodyLength == bytes.count else {
            throw DBusWireError(
                "a D-Bus message whose body is \(bytes.count - reader.position) bytes, not \(bodyLength)")
        }
        for type in try DBusSignature.types(in: signature) {
            body.append(try reader.read(type))
        }
    }
}

/// A D-Bus message or signature that cannot be read, and why.
public struct DBusWireError: Error, CustomStringConvertible, Equatable {
    public let description: String

    public init(_ description: String) {
        self.description = description
    }
}

/// Splitting signatures into single complete types.
public enum DBusSignature {
    /// The single complete types of `signature` (`a{sv}s` → `a{sv}`, `s`).
    ///
    /// - Throws: ``DBusWireError`` for a signature that is not well formed.
    public static func types(in signature: String) throws -> [String] {
        let characters = Array(signature)
        var types: [String] = []
        var index = 0
        while index < characters.count {
            let end = try endOfType(characters, from: index, depth: 0)
            types.append(String(characters[index..<end]))
            index = end
        }
        return types
    }

    /// Where the single complete type that begins at `start` ends (the index after it).
    static func endOfType(_ characters: [Character], from start: Int, depth: Int) throws -> Int {
        guard start < characters.count, depth < 32 else {
            throw DBusWireError("the D-Bus signature \(String(characters)) ends within a type")
        }
        switch characters[start] {
        case "y", "b", "n", "q", "i", "u", "x", "t", "d", "s", "o", "g", "h", "v":
            return start + 1
        case "a":
            return try endOfType(characters, from: start + 1, depth: depth + 1)
        case "(", "{":
            let close: Character = characters[start] == "(" ? ")" : "}"
            var index = start + 1
            while index < characters.count, characters[index] != close {
                index = try endOfType(characters, from: index, depth: depth + 1)
            }
            guard index < characters.count, index > start + 1 else {
                throw DBusWireError(
                    "the D-Bus signature \(String(characters)) has an empty or open \(characters[start])")
            }
            return index + 1
        default:
            throw DBusWireError("the D-Bus signature \(String(characters)) holds an unknown type \(characters[start])")
        }
    }
}

/// Writes values in the wire format, little-endian, aligned from the first byte written.
struct DBusWriter {
    private(set) var bytes: [UInt8] = []

    mutating func pad(to alignment: Int) {
        while bytes.count % alignment != 0 { bytes.append(0) }
    }

    private mutating func number<Value: FixedWidthInteger>(_ value: Value) {
        pad(to: MemoryLayout<Value>.size)
        withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) }
    }

    mutating func write(_ value: DBusValue) {
        switch value {
        case .byte(let value): bytes.append(value)
        case .boolean(let value): number(UInt32(value ? 1 : 0))
        case .int16(let value): number(value)
        case .uint16(let value): number(value)
        case .int32(let value): number(value)
        case .uint32(let value), .unixFD(let value): number(value)
        case .int64(let value): number(value)
        case .uint64(let value): number(value)
        case .double(let value): number(value.bitPattern)
        case .string(let text), .objectPath(let text):
            let utf8 = Array(text.utf8)
            number(UInt32(utf8.count))
            bytes += utf8 + [0]
        case .signature(let text):
            let utf8 = Array(text.utf8)
            bytes.append(UInt8(utf8.count))
            bytes += utf8 + [0]
        case .variant(let inner):
            write(.signature(inner.signature))
            write(inner)
        case .array(let element, let elements):
            number(UInt32(0))
            let lengthAt = bytes.count - 4
            pad(to: Self.alignment(of: element))
            let start = bytes.count
            for element in elements { write(element) }
            let length = UInt32(bytes.count - start)
            withUnsafeBytes(of: length.littleEndian) { bytes.replaceSubrange(lengthAt..<lengthAt + 4, with: $0) }
        case .structure(let members):
            pad(to: 8)
            for member in members { write(member) }
        case .dictEntry(let key, let value):
            pad(to: 8)
            write(key)
            write(value)
        }
    }

    /// The alignment of the type whose signature begins with the first character of `signature`.
    static func alignment(of signature: String) -> Int {
        switch signature.first {
        case "y", "g", "v": 1
        case "n", "q": 2
        case "x", "t", "d", "(", "{": 8
        default: 4
        }
    }
}

/// Reads values of the wire format from a whole message, aligned from its first byte.
struct DBusReader {
    let bytes: [UInt8]
    let littleEndian: Bool
    private(set) var position = 0

    init(bytes: [UInt8], littleEndian: Bool) {
        (self.bytes, self.littleEndian) = (bytes, littleEndian)
    }

    mutating func align(_ alignment: Int) throws {
        let aligned = (position + alignment - 1) / alignment * alignment
        guard aligned <= bytes.count else { throw DBusWireError("a D-Bus message ends within its padding") }
        position = aligned
    }

    private mutating func take(_ count: Int) throws -> ArraySlice<UInt8> {
        guard count >= 0, position + count <= bytes.count else {
            throw DBusWireError("a D-Bus message ends within a value")
        }
        defer { position += count }
        return bytes[position..<position + count]
    }

    private mutating func number<Value: FixedWidthInteger>(_ type: Value.Type) throws -> Value {
        try align(MemoryLayout<Value>.size)
        let slice = try take(MemoryLayout<Value>.size)
        var value: Value = 0
        for byte in littleEndian ? Array(slice.reversed()) : Array(slice) { value = value << 8 | Value(byte) }
        return value
    }

    private mutating func text(length: Int) throws -> String {
        let utf8 = try take(length)
        guard try take(1).first == 0 else { throw DBusWireError("a D-Bus string without its closing zero") }
        return String(decoding: utf8, as: UTF8.self)
    }

    /// The value of the single complete type `type`.
    mutating func read(_ type: String, depth: Int = 0) throws -> DBusValue {
        guard depth < 64 else { throw DBusWireError("a D-Bus value nested too deeply") }
        switch type.first {
        case "y": return .byte(try take(1).first!)
        case "b": return .boolean(try number(UInt32.self) != 0)
        case "n": return .int16(try number(Int16.self))
        case "q": return .uint16(try number(UInt16.self))
        case "i": return .int32(try number(Int32.self))
        case "u": return .uint32(try number(UInt32.self))
        case "h": return .unixFD(try number(UInt32.self))
        case "x": return .int64(try number(Int64.self))
        case "t": return .uint64(try number(UInt64.self))
        case "d": return .double(Double(bitPattern: try number(UInt64.self)))
        case "s": return .string(try text(length: Int(try number(UInt32.self))))
        case "o": return .objectPath(try text(length: Int(try number(UInt32.self))))
        case "g": return .signature(try text(length: Int(try take(1).first!)))
        case "v":
            let inner = try text(length: Int(try take(1).first!))
            let types = try DBusSignature.types(in: inner)
            guard types.count == 1 else { throw DBusWireError("a D-Bus variant of signature \(inner)") }
            return .variant(try read(types[0], depth: depth + 1))
        case "a":
            let element = String(type.dropFirst())
            let length = Int(try number(UInt32.self))
            guard length <= 1 << 26 else { throw DBusWireError("a D-Bus array of \(length) bytes") }
            try align(DBusWriter.alignment(of: element))
            let end = position + length
            guard end <= bytes.count else { throw DBusWireError("a D-Bus message ends within an array") }
            var elements: [DBusValue] = []
            while position < end { elements.append(try read(element, depth: depth + 1)) }
            guard position == end else { throw DBusWireError("a D-Bus array longer than its length") }
            return .array(elementSignature: element, elements)
        case "(", "{":
            try align(8)
            let members = try DBusSignature.types(in: String(type.dropFirst().dropLast()))
            var values: [DBusValue] = []
            for member in members { values.append(try read(member, depth: depth + 1)) }
            if type.first == "{" {
                guard values.count == 2 else { throw DBusWireError("a D-Bus dictionary entry of \(type)") }
                return .dictEntry(values[0], values[1])
            }
            return .structure(values)
        default:
            throw DBusWireError("a D-Bus value of unknown type \(type)")
        }
    }
}
