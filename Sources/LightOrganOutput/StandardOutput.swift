#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Thin access to file descriptor 1, unbuffered: each write reaches the reader at once.
public enum StandardOutput {
    /// True when stdout is a terminal (not a pipe or file).
    public static var isTerminal: Bool { isatty(1) == 1 }

    /// Writes all of `text` to stdout; gives up silently if the reader went away (a closed pipe
    /// must not crash the receiver, and SIGPIPE is ignored by the executable).
    public static func write(_ text: String) { writeAll(text, to: 1) }

    /// Writes all of `text` to descriptor `descriptor`, retrying after signals; gives up silently
    /// on any other failure.
    static func writeAll(_ text: String, to descriptor: Int32) {
        var text = text
        text.withUTF8 { bytes in
            var offset = 0
            while offset < bytes.count {
                let written = Glibc.write(descriptor, bytes.baseAddress! + offset, bytes.count - offset)
                if written > 0 {
                    offset += written
                } else if written < 0, errno == EINTR {
                    continue
                } else {
                    return
                }
            }
        }
    }
}

/// Thin access to file descriptor 2 (messages, progress), unbuffered like ``StandardOutput``.
public enum StandardError {
    /// Writes all of `text` to stderr; gives up silently if it cannot.
    public static func write(_ text: String) { StandardOutput.writeAll(text, to: 2) }
}
