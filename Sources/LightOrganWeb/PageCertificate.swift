import FoundationEssentials
import Glibc
import LightOrganCore
import LightOrganPOSIX

/// The page's TLS identity: a certificate and its private key, as PEM files.
///
/// Browsers give a page the microphone only in a secure context, so the page is served over HTTPS
/// even on a LAN. Unless the settings name a certificate (`page.certificate` and `page.key`), the
/// receiver makes its own on first start — an ECDSA P-256 key and a self-signed certificate for the
/// host's names, valid ten years, made by `openssl` (the package depends on it) — keeps it in the
/// state directory (`page-certificate.pem`, `page-key.pem`, mode 0600) and reuses it after, so a
/// browser that accepted it once keeps accepting it.
public struct PageCertificate: Sendable {
    /// The chain (leaf first) and its key, loaded into OpenSSL for the page's connections.
    package let context: TLSServerContext
    /// Where it was read from (or written to).
    public let certificatePath: String
    /// The SHA-256 fingerprint (`AB:CD:…`, as browsers show it) when the certificate was made now;
    /// nil when it was read.
    public let madeWithFingerprint: String?

    /// Reads the certificate and key at the given paths.
    ///
    /// - Throws: ``PageError`` naming the file and what is wrong with it.
    public static func load(certificate: String, key: String) throws(PageError) -> PageCertificate {
        let context: TLSServerContext
        do {
            context = try TLSServerContext(certificate: certificate, key: key)
        } catch {
            switch error {
            case .certificate(let reason):
                throw PageError(
                    "\(certificate): cannot be read as a PEM certificate (\(reason)); name another with page.certificate, or leave it empty for a self-signed one"
                )
            case .key(let reason):
                throw PageError("\(key): cannot be read as a PEM private key (\(reason)); name another with page.key")
            case .mismatch(let reason):
                throw PageError(
                    "\(certificate): the certificate and the key \(key) do not make a TLS identity (\(reason)); name the key that belongs to it with page.key"
                )
            case .library(let reason):
                throw PageError("the page's TLS could not start (\(reason))")
            }
        }
        return PageCertificate(
            context: context, certificatePath: certificate, madeWithFingerprint: nil)
    }

    /// The certificate kept in `directory`, made there first when there is none.
    ///
    /// - Parameter hostNames: the names the certificate is for (the host name, `name.local`).
    /// - Throws: ``PageError`` when `openssl` is missing or fails, or the files are damaged.
    public static func selfSigned(in directory: String, hostNames: [String]) throws(PageError) -> PageCertificate {
        let certificatePath = directory + "/page-certificate.pem"
        let keyPath = directory + "/page-key.pem"
        let files = FileManager.default
        if files.fileExists(atPath: certificatePath), files.fileExists(atPath: keyPath) {
            return try load(certificate: certificatePath, key: keyPath)
        }
        do {
            try StateDirectory.writePrivate("", to: keyPath)  // the directory (0700) and an empty 0600 file first
        } catch {
            throw PageError(error.description)
        }
        let names = hostNames.isEmpty ? ["lightorgan"] : hostNames
        _ = try openssl([
            "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-sha256",
            "-days", "3650", "-subj", "/O=lightorgan receiver (self-signed)/CN=\(names[0])",
            "-addext", "subjectAltName=" + names.map { "DNS:\($0)" }.joined(separator: ","),
            "-addext", "basicConstraints=critical,CA:FALSE", "-addext", "extendedKeyUsage=serverAuth",
            "-keyout", keyPath, "-out", certificatePath,
        ])
        chmod(certificatePath, 0o600)
        chmod(keyPath, 0o600)
        let fingerprint = (try? openssl(["x509", "-in", certificatePath, "-noout", "-fingerprint", "-sha256"]))
            .flatMap { $0.split(separator: "=", maxSplits: 1).last.map { $0.trimmingWhitespace() } }
        let loaded = try load(certificate: certificatePath, key: keyPath)
        return PageCertificate(
            context: loaded.context, certificatePath: certificatePath, madeWithFingerprint: fingerprint ?? "?")
    }

    /// Runs `openssl` with `arguments`; its standard output.
    private static func openssl(_ arguments: [String]) throws(PageError) -> String {
        let candidates = ["/usr/bin/openssl", "/bin/openssl", "/usr/local/bin/openssl"]
        guard let path = candidates.first(where: { access($0, X_OK) == 0 }) else {
            throw PageError(
                "the page needs a certificate and openssl makes it: sudo apt install openssl (or name your own with page.certificate and page.key, or page.enabled: false)"
            )
        }
        let answer: (termination: ChildProcess.Termination, output: [UInt8], errors: [UInt8])
        do {
            answer = try ChildProcess.run(path: path, arguments: arguments, errors: .separate)
        } catch {
            throw PageError("\(error)")
        }
        guard answer.termination == .exited(0) else {
            let problem = String(decoding: answer.errors, as: UTF8.self)
            let last = problem.split(separator: "\n").last.map(String.init) ?? "\(answer.termination)"
            throw PageError("openssl \(arguments.first ?? "") failed making the page's certificate: \(last)")
        }
        return String(decoding: answer.output, as: UTF8.self)
    }
}
