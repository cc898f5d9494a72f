import Glibc
import LightOrganCore
import LightOrganDiscovery
public import Logging
public import ServiceLifecycle

/// Publishes the receiver on the local network (DNS-SD `_lightorgan._tcp`) while it runs, so
/// that senders with `sender.host: auto` find it; withdraws it on graceful shutdown.
///
/// Discovery is a convenience: when Avahi cannot be used the receiver serves on, and this says
/// once that it is not discoverable and why.
public struct PublisherService: Service {
    private let name: String
    private let port: Int
    private let pagePort: Int?
    private let logger: Logger

    /// Publishes `name` (empty: this machine's host name) for `port` (the listener's bound port)
    /// and, when given, the page on `pagePort` (`_https._tcp`).
    public init(name: String, port: Int, pagePort: Int? = nil, logger: Logger) {
        self.name = Self.receiverName(configured: name)
        self.port = port
        self.pagePort = pagePort
        self.logger = logger
    }

    public func run() async throws {
        let publisher: ReceiverPublisher
        do {
            publisher = try ReceiverPublisher(name: name, port: port, pagePort: pagePort, logger: logger)
        } catch {
            logger.warning("not discoverable on the local network: \(error)")
            try? await gracefulShutdown()
            return
        }
        try? await gracefulShutdown()
        publisher.close()
    }

    /// The receiver's name everywhere it shows (DNS-SD, AirPlay, Home Assistant, the page): `configured`
    /// (`receiver.name`), or when that is empty this machine's short host name, or `lightorgan`.
    public static func receiverName(configured: String) -> String {
        configured.isEmpty ? ServiceName.defaultName(hostName: hostName()) : configured
    }

    /// This machine's host name (`raspberrypi`), empty when unknown or unset ("(none)", "localhost").
    public static func hostName() -> String {
        var buffer = [CChar](repeating: 0, count: 256)
        guard gethostname(&buffer, buffer.count - 1) == 0 else { return "" }
        let name = String(cCharacters: buffer)
        // "(none)" is what the kernel holds until something sets a name; "localhost" names no machine on the LAN.
        return ["(none)", "localhost"].contains(name) ? "" : name
    }
}
