import FoundationEssentials
import Glibc
import LightOrganCore
import LightOrganNetwork
import LightOrganServices
import LightOrganSettings
import LightOrganWeb
import Logging

/// What `receive` does for its page before and after binding: the secret, the certificate, the
/// settings the page may change, and the log line with the page's address and secret.
enum PageStartup {
    /// The secret (made on first start), the certificate (the settings' or a self-signed one)
    /// and the live settings, from the state directory.
    static func prepare(
        loaded: SettingsLoader.Loaded, pageFile: String, chip: String?, environment: [String: String], logger: Logger
    ) throws -> ReceiverService.PageSetup {
        let settings = loaded.settings
        let directory = StateDirectory.path(environment: environment)
        let secretPath = directory + "/page-secret"
        let secret: PageSecret
        if let text = try? String(contentsOfFile: secretPath, encoding: .utf8), let kept = PageSecret(reading: text) {
            secret = kept
        } else {
            secret = PageSecret.make()
            do {
                try StateDirectory.writePrivate(secret.text + "\n", to: secretPath)
            } catch {
                throw Failure.runtime("page: \(error) (or page.enabled: false to serve no page)")
            }
            logger.info("page: made a new secret in \(secretPath)")
        }
        let certificate: PageCertificate
        switch (settings.page.certificate.isEmpty, settings.page.key.isEmpty) {
        case (true, true):
            let host = PublisherService.hostName()
            let names = host.isEmpty ? ["lightorgan.local"] : [host, host + ".local"]
            do {
                certificate = try PageCertificate.selfSigned(in: directory, hostNames: names)
            } catch {
                throw Failure.runtime("\(error)")
            }
            if let fingerprint = certificate.madeWithFingerprint {
                logger.info(
                    "page: made a self-signed certificate for \(names.joined(separator: ", ")) in \(certificate.certificatePath), SHA-256 \(fingerprint)"
                )
            }
        case (false, false):
            do {
                certificate = try PageCertificate.load(certificate: settings.page.certificate, key: settings.page.key)
            } catch {
                throw Failure.badSetting(
                    "\(loaded.sources["page.certificate"].map { "\($0)" } ?? "page.certificate"): \(error)")
            }
        case (false, true), (true, false):
            let given = settings.page.certificate.isEmpty ? "page.key" : "page.certificate"
            let missing = settings.page.certificate.isEmpty ? "page.certificate" : "page.key"
            throw Failure.badSetting(
                "\(loaded.sources[given].map { "\($0)" } ?? given): \(given) is set but \(missing) is not; allowed: both (your own certificate) or neither (a self-signed one)"
            )
        }
        let live = loaded.live(pageFile: pageFile)
        if !loaded.superseded.isEmpty {
            // The dropped values leave the page's file, so the file's value stays whatever it becomes.
            do {
                try StateDirectory.writePrivate(live.pageFileText, to: pageFile)
            } catch {
                logger.warning("page: cannot rewrite \(pageFile) without the superseded values: \(error)")
            }
        }
        let name = PublisherService.receiverName(configured: settings.receiver.name)
        return ReceiverService.PageSetup(live: live, secret: secret, certificate: certificate, chip: chip, name: name)
    }

    /// Logs the page's address with its secret, the way Jupyter prints its token URL: opening it
    /// signs the browser in. The secret follows `#`, so browsers never send it to a server.
    static func announce(port: Int, bind: String, page: ReceiverService.PageSetup, logger: Logger) {
        let wildcard = ["0.0.0.0", "::", "", "[::]"].contains(bind)
        let host = PublisherService.hostName()
        var hosts: [String] = []
        if !wildcard {
            hosts.append(bind.contains(Character(":")) ? "[\(bind)]" : bind)
        } else {
            if !host.isEmpty { hosts.append(host + ".local") }
            hosts += localAddresses().prefix(2)
            if hosts.isEmpty { hosts = ["localhost"] }  // no name and no LAN address: this machine's own browser only
        }
        let suffix = port == 443 ? "" : ":\(port)"
        for (index, shown) in hosts.enumerated() {
            logger.info("\(index == 0 ? "page" : "  or"): https://\(shown)\(suffix)/#key=\(page.secret.text)")
        }
        logger.info("page: the browser warns once about the receiver's own certificate; accept it to continue")
    }

    /// This machine's IPv4 addresses but loopback, for the log line (DNS names may not resolve on every phone).
    private static func localAddresses() -> [String] {
        var list: UnsafeMutablePointer<ifaddrs>?
        guard getifaddrs(&list) == 0, let first = list else { return [] }
        defer { freeifaddrs(list) }
        var addresses: [String] = []
        var entry: UnsafeMutablePointer<ifaddrs>? = first
        while let current = entry {
            defer { entry = current.pointee.ifa_next }
            guard let address = current.pointee.ifa_addr, address.pointee.sa_family == sa_family_t(AF_INET),
                current.pointee.ifa_flags & UInt32(IFF_LOOPBACK) == 0
            else { continue }
            if let text = NumericAddress.text(of: address, length: socklen_t(MemoryLayout<sockaddr_in>.size)) {
                addresses.append(text)
            }
        }
        return addresses
    }
}
