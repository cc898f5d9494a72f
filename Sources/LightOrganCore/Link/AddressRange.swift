/// An IP address range written as in `receiver.allow`: `192.168.1.0/24`, `10.0.0.7`, `fd00::/8`, `::1`.
///
/// IPv4 is kept as an IPv4-mapped IPv6 address (`::ffff:a.b.c.d`), so one comparison covers both
/// families and an IPv4 peer that reaches an IPv6 socket (`::ffff:…`) still matches its IPv4 range.
public struct AddressRange: Sendable, Hashable, CustomStringConvertible {
    /// The network address, 16 bytes, host bits cleared.
    private let network: [UInt8]
    /// Leading bits that must match, 0…128 (IPv4 ranges: 96 + their prefix).
    private let prefixLength: Int
    /// As the user wrote it, for messages.
    public let description: String

    /// Every address, IPv4 and IPv6.
    public static let everything = AddressRange(
        network: Array(repeating: 0, count: 16), prefixLength: 0, description: "all")

    private init(network: [UInt8], prefixLength: Int, description: String) {
        self.network = network
        self.prefixLength = prefixLength
        self.description = description
    }

    /// Parses `text` (an address, or an address and `/prefix`); nil when it is neither.
    public init?(_ text: String) {
        let parts = text.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 1 || parts.count == 2, let address = Self.parseAddress(String(parts[0])) else {
            return nil
        }
        let maximum = address.isIPv4 ? 32 : 128
        var prefix = maximum
        if parts.count == 2 {
            guard let value = Int(parts[1]), (0...maximum).contains(value) else { return nil }
            prefix = value
        }
        let length = address.isIPv4 ? 96 + prefix : prefix
        self.init(network: Self.masked(address.bytes, prefixLength: length), prefixLength: length, description: text)
    }

    /// True when `address` (text as a socket reports it: `192.168.1.20`, `::1`, `::ffff:10.0.0.2`)
    /// lies in this range. An address that does not parse is never contained (unless the range is everything).
    public func contains(_ address: String) -> Bool {
        if prefixLength == 0 { return true }
        guard let parsed = Self.parseAddress(address) else { return false }
        return Self.masked(parsed.bytes, prefixLength: prefixLength) == network
    }

    private static func masked(_ bytes: [UInt8], prefixLength: Int) -> [UInt8] {
        bytes.enumerated().map { index, byte in
            let bits = min(8, max(0, prefixLength - index * 8))
            return bits == 8 ? byte : byte & ~(0xFF >> bits)
        }
    }

    /// 16 bytes of `text`, IPv4 mapped into IPv6; nil when it is not an address.
    static func parseAddress(_ text: String) -> (bytes: [UInt8], isIPv4: Bool)? {
        if let v4 = parseIPv4(Substring(text)) { return ([0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF] + v4, true) }
        guard let v6 = parseIPv6(Substring(text.split(separator: "%", maxSplits: 1).first ?? "")) else { return nil }
        return (v6, false)
    }

    private static func parseIPv4(_ text: Substring) -> [UInt8]? {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 4 else { return nil }
        var bytes: [UInt8] = []
        for part in parts {
            guard (1...3).contains(part.count), part.allSatisfy(\.isASCIIDigit), let value = UInt8(part) else {
                return nil
            }
            bytes.append(value)
        }
        return bytes
    }

    private static func parseIPv6(_ text: Substring) -> [UInt8]? {
        guard !text.isEmpty, text.count <= 45 else { return nil }
        let halves = text.components(separatedBy: "::")
        guard halves.count <= 2 else { return nil }
        func groups(_ part: Substring, allowIPv4Tail: Bool) -> [UInt8]? {
            if part.isEmpty { return [] }
            var bytes: [UInt8] = []
            let pieces = part.split(separator: ":", omittingEmptySubsequences: false)
            for (index, piece) in pieces.enumerated() {
                if allowIPv4Tail, index == pieces.count - 1, piece.contains(".") {
                    guard let v4 = parseIPv4(piece) else { return nil }
                    bytes += v4
                } else {
                    guard (1...4).contains(piece.count), piece.allSatisfy(\.isHexDigit),
                        let value = UInt16(piece, radix: 16)
                    else { return nil }
                    bytes += [UInt8(value >> 8), UInt8(value & 0xFF)]
                }
            }
            return bytes
        }
        if halves.count == 1 {
            guard let bytes = groups(halves[0], allowIPv4Tail: true), bytes.count == 16 else { return nil }
            return bytes
        }
        guard let head = groups(halves[0], allowIPv4Tail: false), let tail = groups(halves[1], allowIPv4Tail: true),
            head.count + tail.count <= 14
        else { return nil }
        return head + Array(repeating: 0, count: 16 - head.count - tail.count) + tail
    }
}

extension Character {
    fileprivate var isASCIIDigit: Bool { ("0"..."9").contains(self) }
}

extension Substring {
    /// Splits at every occurrence of `separator` (a string), keeping empty pieces.
    fileprivate func components(separatedBy separator: String) -> [Substring] {
        var pieces: [Substring] = []
        var rest = self[...]
        while let range = rest.firstRange(of: separator) {
            pieces.append(rest[..<range.lowerBound])
            rest = rest[range.upperBound...]
        }
        pieces.append(rest)
        return pieces
    }
}
