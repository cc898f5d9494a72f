#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension String {
    /// `format` filled in the way C's `printf` does (`"%.1f"`, `"%3d"`, `"%g"`), in the C locale:
    /// numbers only (strings go through interpolation). Foundation's `String(format:)` would pull
    /// Foundation and ICU's data into the binary for the same digits.
    public init(cFormat format: String, _ arguments: any CVarArg...) {
        var buffer = [CChar](repeating: 0, count: 128)
        let needed = withVaList(arguments) { vsnprintf(&buffer, buffer.count, format, $0) }
        if needed >= buffer.count {
            buffer = [CChar](repeating: 0, count: Int(needed) + 1)
            _ = withVaList(arguments) { vsnprintf(&buffer, buffer.count, format, $0) }
        }
        self.init(cCharacters: buffer)
    }
}
