extension String {
    /// The text a C function wrote into `characters`: up to the first NUL (or the whole buffer),
    /// decoded as UTF-8 with invalid bytes replaced.
    public init(cCharacters characters: [CChar]) {
        self.init(decoding: characters.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
