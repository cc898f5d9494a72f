#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The system's own words for why a file operation failed ("no such file or directory",
/// "permission denied"), for messages that already name the file.
///
/// FoundationEssentials throws a `CocoaError` holding the `POSIXError` underneath; its text is
/// the C library's `strerror`. (Foundation's `localizedDescription` would pull the whole of
/// Foundation and ICU's data into the binary.)
public enum SystemErrorText {
    /// The reason `error` gives, lower case; the error's own description when no system error lies under it.
    public static func reason(of error: any Error) -> String {
        let posix = (error as? POSIXError) ?? ((error as? CocoaError)?.underlying as? POSIXError)
        guard let posix, let message = strerror(posix.code.rawValue) else { return "\(error)" }
        return String(cString: message).lowercased()
    }
}
