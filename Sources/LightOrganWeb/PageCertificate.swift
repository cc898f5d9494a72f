import Crypto
import Foundation
import SwiftASN1
import LightOrganCore
public import NIOSSL
import X509

/// The page's TLS identity: a certificate and its private key, as PEM files.
///
/// Browsers give a page the microphone only in a secure context, so the page is served over HTTPS
/// even on a LAN. Unless the settings name a certificate (`receiver.page.certificate` and
/// `receiver.page.key`), the receiver makes its own on first start: an ECDSA P-256 key and a
/// self-signed certificate for the host's names, valid ten years, kept in the state directory
/// (`page-certificate.pem`, `page-key.pem`, mode 0600) and reused after, so a browser that
/// accepted it once keeps accepting it.
public struct PageCertificate: Sendable {
    /// The certificate chain to present, leaf first.
    public let chain: [NIOSSLCertificate]
    /// The leaf's private key.
    public let privateKey: NIOSSLPrivateKey
    /// Where it was read from (or written to).
    public let certificatePath: String
    /// Whether it was made now (a first start), not read.
    public let isNew: Bool
    /// The SHA-256 fingerprint of the leaf, as the browser shows it (`AB:CD:…`).
    public let fingerprint: String

    /// Reads the certificate and key at the given paths.
    ///
    /// - Throws: ``PageError`` naming the file and what is wrong with it.
    public static func load(certificate: String, key: String) throws(PageError) -> PageCertificate {
        let chain: [NIOSSLCertificate]
        let privateKey: NIOSSLPrivateKey
        do {
            chain = try NIOSSLCertificate.fromPEMFile(certificate)
        } catch {
            throw PageError("\(certificate): cannot be read as a PEM certificate (\(error)); name another with receiver.page.certificate, or leave it empty for a self-signed one")
        }
        do {
            privateKey = try NIOSSLPrivateKey(file: key, format: .pem)
        } catch {
            throw PageError("\(key): cannot be read as a PEM private key (\(error)); name another with receiver.page.key")
        }
        guard let leaf = chain.first else {
            throw PageError("\(certificate): holds no certificate")
        }
        return PageCertificate(
            chain: chain, privateKey: privateKey, certificatePath: certificate, isNew: false,
            fingerprint: Self.fingerprint(of: leaf))
    }

    /// The certificate kept in `directory`, made there first when there is none.
    ///
    /// - Parameter hostNames: the names the certificate is for (the host name, `name.local`).
    /// - Throws: ``PageError`` when the directory cannot be written or the files are damaged.
    public static func selfSigned(in directory: String, hostNames: [String]) throws(PageError) -> PageCertificate {
        let certificatePath = directory + "/page-certificate.pem"
        let keyPath = directory + "/page-key.pem"
        let files = FileManager.default
        if files.fileExists(atPath: certificatePath), files.fileExists(atPath: keyPath) {
            return try load(certificate: certificatePath, key: keyPath)
        }
        let (certificatePEM, keyPEM): (String, String)
        do {
            (certificatePEM, keyPEM) = try makeSelfSigned(hostNames: hostNames)
        } catch {
            throw PageError("cannot make the page's certificate: \(error)")
        }
        do {
            try StateDirectory.writePrivate(keyPEM, to: keyPath)
            try StateDirectory.writePrivate(certificatePEM, to: certificatePath)
        } catch {
            throw PageError(error.description)
        }
        let loaded = try load(certificate: certificatePath, key: keyPath)
        return PageCertificate(
            chain: loaded.chain, privateKey: loaded.privateKey, certificatePath: certificatePath, isNew: true,
            fingerprint: loaded.fingerprint)
    }

    /// A new ECDSA P-256 key and a self-signed certificate for `hostNames`, both as PEM text.
    static func makeSelfSigned(hostNames: [String], now: Date = Date()) throws -> (certificate: String, key: String) {
        let key = P256.Signing.PrivateKey()
        let commonName = hostNames.first ?? "lightorgan"
        let name = try DistinguishedName {
            CommonName(commonName)
            OrganizationName("lightorgan receiver (self-signed)")
        }
        let extensions = try Certificate.Extensions {
            Critical(BasicConstraints.notCertificateAuthority)
            Critical(KeyUsage(digitalSignature: true))
            try ExtendedKeyUsage([.serverAuth])
            SubjectAlternativeNames(hostNames.map { GeneralName.dnsName($0) })
        }
        let certificate = try Certificate(
            version: .v3,
            serialNumber: Certificate.SerialNumber(),
            publicKey: Certificate.PublicKey(key.publicKey),
            notValidBefore: now.addingTimeInterval(-3600),
            notValidAfter: now.addingTimeInterval(10 * 365 * 86400),
            issuer: name,
            subject: name,
            signatureAlgorithm: .ecdsaWithSHA256,
            extensions: extensions,
            issuerPrivateKey: Certificate.PrivateKey(key))
        return (try certificate.serializeAsPEM().pemString, key.pemRepresentation)
    }

    private static func fingerprint(of certificate: NIOSSLCertificate) -> String {
        guard let der = try? certificate.toDERBytes() else { return "?" }
        return SHA256.hash(data: der).map { String(format: "%02X", $0) }.joined(separator: ":")
    }
}
