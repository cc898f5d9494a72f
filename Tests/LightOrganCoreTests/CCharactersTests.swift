import LightOrganCore
import Testing

@Suite("Text from C buffers")
struct CCharactersTests {
    @Test("stops at the first NUL, takes the whole buffer without one, and replaces invalid UTF-8")
    func decodes() {
        #expect(String(cCharacters: [0x67, 0x70, 0x69, 0x6F, 0, 0x78]) == "gpio")
        #expect(String(cCharacters: [0x6C, 0x6F]) == "lo")
        #expect(String(cCharacters: [0]) == "")
        #expect(String(cCharacters: [-1, 0x41, 0]) == "\u{FFFD}A")
    }
}
