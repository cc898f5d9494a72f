import CTLSShim
import LightOrganCore

/// The page's TLS identity loaded into Debian's OpenSSL (libssl3): TLS 1.2 and 1.3, a server
/// context that every connection's ``TLSServerHandler`` makes its session from.
///
/// OpenSSL's contexts may be shared by threads once made; this one is never changed after `init`.
/// Security updates of the TLS come with the Pi's `apt upgrade` of libssl3, not with lightorgan.
package final class TLSServerContext: @unchecked Sendable {
    /// Why a context could not be made, naming the file at fault.
    package enum Problem: Error, Sendable {
        /// The certificate file: unreadable, not PEM, or holds no certificate (OpenSSL's reason).
        case certificate(String)
        /// The private key file: unreadable or not a PEM key (OpenSSL's reason).
        case key(String)
        /// The key does not belong to the certificate.
        case mismatch(String)
        /// OpenSSL made no context (out of memory).
        case library(String)
    }

    let pointer: OpaquePointer

    /// Loads the PEM certificate chain (leaf first) at `certificate` and its PEM private key at `key`.
    package init(certificate: String, key: String) throws(Problem) {
        var problem: Int32 = 0
        var reason = [CChar](repeating: 0, count: 256)
        guard let made = lightorgan_tls_context_new(certificate, key, &problem, &reason, reason.count) else {
            let text = String(cCharacters: reason)
            switch Int(problem) {
            case Int(LIGHTORGAN_TLS_CONTEXT_CERTIFICATE.rawValue): throw .certificate(text)
            case Int(LIGHTORGAN_TLS_CONTEXT_KEY.rawValue): throw .key(text)
            case Int(LIGHTORGAN_TLS_CONTEXT_MISMATCH.rawValue): throw .mismatch(text)
            default: throw .library(text)
            }
        }
        pointer = made
    }

    deinit {
        lightorgan_tls_context_free(pointer)
    }
}
