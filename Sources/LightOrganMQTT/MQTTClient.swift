import CMosquitto
import Glibc
import LightOrganCore
import Synchronization

/// A connection to an MQTT broker through Eclipse Mosquitto's own client library (libmosquitto): its network
/// thread keeps the connection, sends the keepalives, reconnects with back-off when the broker goes away, and
/// leaves the last will with the broker, which publishes it when the connection is lost.
///
/// Everything the broker says arrives as ``Event``s on ``events``, from libmosquitto's thread; ``publish(_:_:retain:)``
/// may be called from any thread and never waits for the network (the message is queued, QoS 1). Nothing here
/// blocks the caller on the broker.
public final class MQTTClient: @unchecked Sendable {
    // @unchecked: `handle` is set once in init and freed in `close()` after libmosquitto's thread has stopped;
    // libmosquitto serialises its own state (mosquitto_threaded_set).

    /// Where and how to connect.
    public struct Options: Sendable {
        public var host: String
        public var port: Int
        public var tls: Bool
        /// PEM certificates to trust with `tls`; nil: the system's (`/etc/ssl/certs`).
        public var caFile: String?
        public var username: String?
        public var password: String?
        /// The client id the broker knows the connection by (unique per broker).
        public var clientID: String
        /// Published by the broker, retained, when the connection is lost.
        public var will: (topic: String, payload: String)
        /// Seconds between keepalives.
        public var keepalive: Int = 30
        /// First and longest wait between two connection attempts, seconds: the first, twice the first, three
        /// times… up to the longest (1 s, 2 s, 3 s… 30 s: a broker back within seconds is found within seconds,
        /// one away for long is asked twice a minute).
        public var retryDelays: (first: Int, longest: Int) = (1, 30)

        public init(
            host: String, port: Int, tls: Bool, caFile: String?, username: String?, password: String?,
            clientID: String, will: (topic: String, payload: String)
        ) {
            (self.host, self.port, self.tls, self.caFile) = (host, port, tls, caFile)
            (self.username, self.password, self.clientID, self.will) = (username, password, clientID, will)
        }
    }

    /// What happens on the connection.
    public enum Event: Sendable, Equatable {
        /// Connected (again): subscribe and publish the retained state now.
        case connected
        /// The broker refused the connection (CONNACK): bad credentials, a client id it refuses…; the text is
        /// libmosquitto's. It is retried.
        case refused(String)
        /// The connection is lost or could not be made; the text says why. It is retried.
        case disconnected(String)
        /// A message on a subscribed topic.
        case message(topic: String, payload: [UInt8])
    }

    /// The events, in order; ends with ``close()``.
    public let events: AsyncStream<Event>
    private let continuation: AsyncStream<Event>.Continuation
    private let handle: OpaquePointer
    private let options: Options
    private let closed = Atomic<Bool>(false)
    /// Between the broker's CONNACK and the connection's loss.
    private let isConnected = Atomic<Bool>(false)
    /// The library's last error line since a connection was last made (OpenSSL's reason for a TLS failure:
    /// "certificate verify failed"), told with a TLS failure.
    private let libraryError = Mutex<String?>(nil)
    /// Whether libmosquitto's thread runs, and the first connection's retries until it does.
    private let start = Mutex<(looping: Bool, retrying: Task<Void, Never>?)>((false, nil))

    /// Makes the client and starts connecting in the background.
    ///
    /// - Throws: ``MQTTError`` when libmosquitto refuses the options (a CA file it cannot read, no memory).
    public init(_ options: Options) throws(MQTTError) {
        Self.initialiseLibrary
        self.options = options
        (events, continuation) = AsyncStream.makeStream(of: Event.self, bufferingPolicy: .bufferingNewest(256))
        guard let handle = mosquitto_new(options.clientID, true, nil) else {
            throw MQTTError("cannot make an MQTT client: \(String(cString: strerror(errno)).lowercased())")
        }
        self.handle = handle
        do {
            try configure()
        } catch {
            mosquitto_destroy(handle)
            continuation.finish()
            throw error
        }
        // The callbacks find this object through libmosquitto's user data.
        mosquitto_user_data_set(handle, Unmanaged.passUnretained(self).toOpaque())
        mosquitto_connect_callback_set(handle) { _, object, code in
            MQTTClient.from(object)?.connected(code)
        }
        mosquitto_disconnect_callback_set(handle) { _, object, code in
            MQTTClient.from(object)?.disconnected(code)
        }
        mosquitto_log_callback_set(handle) { _, object, level, line in
            guard level & MOSQ_LOG_ERR != 0, let line, let client = MQTTClient.from(object) else { return }
            client.libraryLogged(String(cString: line))
        }
        mosquitto_message_callback_set(handle) { _, object, message in
            guard let client = MQTTClient.from(object), let message else { return }
            let topic = String(cString: message.pointee.topic)
            let count = Int(message.pointee.payloadlen)
            var payload: [UInt8] = []
            if count > 0, let bytes = message.pointee.payload {
                payload = Array(UnsafeRawBufferPointer(start: bytes, count: count))
            }
            client.continuation.yield(.message(topic: topic, payload: payload))
        }
        do {
            try connectFirst(retry: 0)
        } catch {
            closed.store(true, ordering: .releasing)
            mosquitto_destroy(handle)
            continuation.finish()
            throw error
        }
    }

    /// The first connection. libmosquitto's thread reconnects a connection once made (or under way), but it
    /// ends when the first attempt fails at once (a refused connection on this host, a name that does not
    /// resolve): those attempts are retried here, with the same back-off, and the thread starts with the first
    /// that gets under way.
    private func connectFirst(retry: Int) throws(MQTTError) {
        let success = MOSQ_ERR_SUCCESS.rawValue
        // Under the lock that close() takes: no attempt starts on a client being destroyed.
        let (code, started) = start.withLock { state -> (CInt, CInt?) in
            guard !closed.load(ordering: .acquiring) else { return (success, nil) }
            let code = mosquitto_connect_async(handle, options.host, CInt(options.port), CInt(options.keepalive))
            guard code == success else { return (code, nil) }
            state.looping = true
            return (code, mosquitto_loop_start(handle))
        }
        if code != success {
            continuation.yield(.disconnected(Self.describe(code)))
            let delay = min(options.retryDelays.first * (retry + 1), options.retryDelays.longest)
            let task = Task { [weak self] in
                guard (try? await Task.sleep(for: .seconds(delay))) != nil, let self else { return }
                try? connectFirst(retry: retry + 1)
            }
            start.withLock { $0.retrying = task }
        } else if let started, started != success {
            throw MQTTError("cannot start the MQTT client's thread: \(Self.describe(started))")
        }
    }

    private static let initialiseLibrary: Void = { mosquitto_lib_init() }()

    private static func from(_ object: UnsafeMutableRawPointer?) -> MQTTClient? {
        object.map { Unmanaged<MQTTClient>.fromOpaque($0).takeUnretainedValue() }
    }

    private func configure() throws(MQTTError) {
        func check(_ code: CInt, _ doing: String) throws(MQTTError) {
            guard code == MOSQ_ERR_SUCCESS.rawValue else { throw MQTTError("\(doing): \(Self.describe(code))") }
        }
        try check(mosquitto_int_option(handle, MOSQ_OPT_PROTOCOL_VERSION, MQTT_PROTOCOL_V311), "MQTT 3.1.1")
        try check(mosquitto_int_option(handle, MOSQ_OPT_TCP_NODELAY, 1), "TCP_NODELAY")
        if options.username != nil || options.password != nil {
            try check(mosquitto_username_pw_set(handle, options.username, options.password), "the user name")
        }
        let will = Array(options.will.payload.utf8)
        try check(
            mosquitto_will_set(handle, options.will.topic, CInt(will.count), will, 1, true), "the last will")
        try check(
            mosquitto_reconnect_delay_set(
                handle, UInt32(options.retryDelays.first), UInt32(options.retryDelays.longest), false),
            "the retry delays")
        if options.tls {
            let authority = options.caFile
            let folder: String? = authority == nil ? "/etc/ssl/certs" : nil
            try check(mosquitto_tls_set(handle, authority, folder, nil, nil, nil), "TLS (mqtt.ca_file)")
        }
    }

    /// An error line of the library's. A TLS handshake that fails (a certificate not trusted) ends no
    /// connection, since none was made, so libmosquitto calls no callback and retries: the line is the only
    /// word of it, and is told as the connection lost (the link tells each reason once).
    private func libraryLogged(_ text: String) {
        // "OpenSSL Error[0]: error:0A000086:SSL routines::certificate verify failed" → its last part.
        let detail = String(text.split(separator: ":").last ?? "").trimmingWhitespace()
        libraryError.withLock { $0 = detail }
        if text.hasPrefix("OpenSSL Error"), !isConnected.load(ordering: .relaxed) {
            continuation.yield(.disconnected("\(Self.describe(MOSQ_ERR_TLS.rawValue)) (\(detail))"))
        }
    }

    private func connected(_ code: CInt) {
        isConnected.store(code == 0, ordering: .relaxed)
        if code == 0 { libraryError.withLock { $0 = nil } }
        if code == 0 {
            continuation.yield(.connected)
        } else {
            // "Connection Refused: not authorised." → "not authorised"
            let text = String(cString: mosquitto_connack_string(code))
            continuation.yield(.refused(Self.clause(String(text.split(separator: ":").last ?? ""))))
        }
    }

    private func disconnected(_ code: CInt) {
        isConnected.store(false, ordering: .relaxed)
        // 0: asked for by close(); a refusal was told by the connect callback.
        guard code != 0, code != MOSQ_ERR_CONN_REFUSED.rawValue else { return }
        var why = Self.describe(code)
        // A TLS failure's reason is in the library's last error line (kept until a connection is made).
        if code == MOSQ_ERR_TLS.rawValue, let detail = libraryError.withLock({ $0 }), !detail.isEmpty {
            why += " (\(detail))"
        }
        continuation.yield(.disconnected(why))
    }

    /// Subscribes to `topics` (QoS 1). Call it on each ``Event/connected``: the session is not kept.
    public func subscribe(_ topics: [String]) {
        for topic in topics { mosquitto_subscribe(handle, nil, topic, 1) }
    }

    /// Queues `payload` on `topic` (QoS 1); dropped when not connected (the state is sent again on connecting).
    public func publish(_ topic: String, _ payload: String, retain: Bool) {
        guard !closed.load(ordering: .relaxed) else { return }
        queue(topic, payload, retain: retain)
    }

    private func queue(_ topic: String, _ payload: String, retain: Bool) {
        let bytes = Array(payload.utf8)
        mosquitto_publish(handle, nil, topic, CInt(bytes.count), bytes, 1, retain)
    }

    /// Publishes `goodbye` (retained) if connected, disconnects, stops the network thread and ends ``events``.
    public func close(goodbye: (topic: String, payload: String)? = nil) {
        guard !closed.exchange(true, ordering: .acquiringAndReleasing) else { return }
        if let goodbye { queue(goodbye.topic, goodbye.payload, retain: true) }
        let looping = start.withLock { state -> Bool in
            state.retrying?.cancel()
            return state.looping
        }
        mosquitto_disconnect(handle)
        if looping { mosquitto_loop_stop(handle, false) }
        mosquitto_destroy(handle)
        continuation.finish()
    }

    deinit { close() }

    /// libmosquitto's words for `code`; for a system error, the system's.
    static func describe(_ code: CInt) -> String {
        if code == MOSQ_ERR_ERRNO.rawValue { return String(cString: strerror(errno)).lowercased() }
        return clause(String(cString: mosquitto_strerror(code)))
    }

    /// A library's sentence as a clause of ours: "Connection refused." → "connection refused".
    static func clause(_ sentence: String) -> String {
        var text = sentence.trimmingWhitespace()
        if text.hasSuffix(".") { text.removeLast() }
        return text.prefix(1).lowercased() + text.dropFirst()
    }
}

/// What went wrong making the MQTT client.
public struct MQTTError: Error, Sendable, CustomStringConvertible {
    public let description: String
    init(_ description: String) { self.description = description }
}
