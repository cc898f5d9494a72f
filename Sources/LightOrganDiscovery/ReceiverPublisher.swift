import CAvahi
import LightOrganCore
public import Logging

/// Publishes a receiver on the local network as a DNS-SD service `_lightorgan._tcp` in `local.`,
/// through the Avahi daemon, so that senders find it without an address; and its page, when it
/// serves one, as `_https._tcp` under the same name (`path=/`), so browsers and apps that list
/// web services find it by name.
///
/// - A name taken on the network is replaced by the next one, the Bonjour way (`stage` →
///   `stage (2)`), and logged.
/// - With no daemon it logs once that the receiver is not discoverable and publishes when the
///   daemon appears; a restarted daemon gets the service again.
/// - ``close()`` (or the last reference going away) withdraws it.
public final class ReceiverPublisher: @unchecked Sendable {
    // @unchecked: `group`, `name` and `lastProblem` are used only on the Avahi poll thread (in
    // callbacks); ``AvahiConnection`` stops that thread before freeing anything.

    /// The TCP port published, 1…65535.
    public let port: Int
    /// The page's HTTPS port, nil when it serves none.
    public let pagePort: Int?
    private let logger: Logger
    private let connection: AvahiConnection
    private var group: OpaquePointer?
    private var name: String
    private var lastProblem: String?

    /// Starts publishing `name` for `port` (the listener's real port, never 0).
    ///
    /// - Throws: ``DiscoveryError`` when Avahi cannot be used at all (no D-Bus system bus).
    public init(name: String, port: Int, pagePort: Int? = nil, logger: Logger) throws(DiscoveryError) {
        self.name = name
        self.port = port
        self.pagePort = pagePort
        self.logger = logger
        connection = try AvahiConnection()
        try connection.start { [unowned self] state in stateChanged(state) }
    }

    deinit { close() }

    /// Withdraws the service and disconnects from the daemon. Safe to call more than once, from
    /// any thread but the Avahi thread.
    public func close() {
        guard connection.close() else { return }
        group = nil
    }

    private func stateChanged(_ state: AvahiConnection.State) {
        switch state {
        case .running(let client):
            publish(with: client)
        case .waitingForDaemon:
            report(
                "not discoverable: no Avahi daemon answers; senders need this receiver's address in sender.host "
                    + "(start the daemon: sudo systemctl start avahi-daemon; it is published as soon as it runs)")
        case .registering:
            if let group { avahi_entry_group_reset(group) }
        case .lost:
            group = nil
            report("the Avahi daemon went away; not discoverable until it is back")
        case .failed(let why):
            report("not discoverable: Avahi failed (\(why)); senders need the receiver's address in sender.host")
        }
    }

    private func publish(with client: OpaquePointer) {
        if group == nil {
            group = avahi_entry_group_new(client, Self.groupCallback, Unmanaged.passUnretained(self).toOpaque())
        }
        guard let group else {
            report("cannot publish on the network: \(AvahiConnection.describe(avahi_client_errno(client)))")
            return
        }
        guard avahi_entry_group_is_empty(group) != 0 else { return }
        while true {
            let result = avahi_entry_group_add_service_strlst(
                group, AvahiIfIndex(AVAHI_IF_UNSPEC), AvahiProtocol(AVAHI_PROTO_UNSPEC), AvahiPublishFlags(0), name,
                ServiceName.serviceType, nil, nil, UInt16(port), nil)
            if result == Int32(AVAHI_ERR_COLLISION) {
                rename(because: "is used by another receiver on this machine")
                continue
            }
            guard result >= 0 else {
                report("cannot publish \"\(name)\": \(AvahiConnection.describe(result))")
                return
            }
            if let pagePort {
                let text = avahi_string_list_add(nil, "path=/")
                defer { avahi_string_list_free(text) }
                let page = avahi_entry_group_add_service_strlst(
                    group, AvahiIfIndex(AVAHI_IF_UNSPEC), AvahiProtocol(AVAHI_PROTO_UNSPEC), AvahiPublishFlags(0), name,
                    Self.pageServiceType, nil, nil, UInt16(pagePort), text)
                if page == Int32(AVAHI_ERR_COLLISION) {
                    avahi_entry_group_reset(group)
                    rename(because: "is used by another web service on this machine")
                    continue
                }
                if page < 0 { report("cannot publish the page of \"\(name)\": \(AvahiConnection.describe(page))") }
            }
            break
        }
        let committed = avahi_entry_group_commit(group)
        if committed < 0 { report("cannot publish \"\(name)\": \(AvahiConnection.describe(committed))") }
    }

    /// The DNS-SD type the page is published as.
    public static let pageServiceType = "_https._tcp"

    private func rename(because reason: String) {
        let next = ServiceName.alternative(to: name)
        logger.warning("the name \"\(name)\" \(reason); publishing as \"\(next)\" (receiver.name)")
        name = next
    }

    private static let groupCallback: AvahiEntryGroupCallback = { group, state, userdata in
        guard let group, let userdata else { return }
        Unmanaged<ReceiverPublisher>.fromOpaque(userdata).takeUnretainedValue().groupChanged(group, state)
    }

    private func groupChanged(_ group: OpaquePointer, _ state: AvahiEntryGroupState) {
        switch state {
        case AVAHI_ENTRY_GROUP_ESTABLISHED:
            lastProblem = nil
            let page = pagePort.map { ", its page as \(Self.pageServiceType) port \($0)" } ?? ""
            logger.info(
                "discoverable on the local network as \"\(name)\" (\(ServiceName.serviceType), port \(port)\(page))")
        case AVAHI_ENTRY_GROUP_COLLISION:
            rename(because: "is taken on the network")
            avahi_entry_group_reset(group)
            if let client = avahi_entry_group_get_client(group) { publish(with: client) }
        case AVAHI_ENTRY_GROUP_FAILURE:
            let why = avahi_entry_group_get_client(group).map { AvahiConnection.describe(avahi_client_errno($0)) }
            report("publishing \"\(name)\" failed: \(why ?? "unknown error")")
        default:
            break
        }
    }

    /// Logs a problem once until something is published again.
    private func report(_ problem: String) {
        guard problem != lastProblem else { return }
        lastProblem = problem
        logger.warning("\(problem)")
    }
}
