/// The secret that lets a page change things: 128 random bits, written as 22 URL-safe characters.
///
/// Made on the receiver's first start and kept in the state directory (mode 0600); the receiver
/// logs the page's address with it (`https://pi.local:8443/#key=…`, after `#`, so it never reaches
/// a server log or a Referer). There is no default and no password to guess.
public struct PageSecret: Sendable, Equatable, CustomStringConvertible {
    /// The secret's text.
    public let text: String

    /// A new secret from the system's random source.
    public static func make() -> PageSecret {
        var generator = SystemRandomNumberGenerator()
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
        return PageSecret(text: String((0..<22).map { _ in alphabet[Int(generator.next() % 64)] }))
    }

    /// A secret read back from its file; nil when the text is not one (then a new one is made).
    public init?(reading text: String) {
        let trimmed = text.trimmingWhitespace()
        guard trimmed.count >= 16, trimmed.count <= 128,
            trimmed.unicodeScalars.allSatisfy({
                $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || $0 == "-" || $0 == "_")
            })
        else { return nil }
        self.text = trimmed
    }

    private init(text: String) { self.text = text }

    /// Whether `candidate` is this secret, compared in time that does not depend on where they differ.
    public func matches(_ candidate: String) -> Bool {
        let expected = Array(text.utf8), given = Array(candidate.utf8)
        var difference = UInt8(expected.count == given.count ? 0 : 1)
        for index in 0..<expected.count {
            difference |= expected[index] ^ (index < given.count ? given[index] : 0)
        }
        return difference == 0
    }

    /// Never printed by accident: the log line that shows it builds the address itself.
    public var description: String { "(secret)" }
}
