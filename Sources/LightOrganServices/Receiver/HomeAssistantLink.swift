import FoundationEssentials
public import LightOrganCore
import LightOrganDiscovery
import LightOrganMQTT
import LightOrganWeb
import Logging
import Synchronization

/// The receiver in the home's hub: its entities in Home Assistant by MQTT discovery, their state as it changes,
/// and the commands Home Assistant sends, applied by the page's own path (``ReceiverControl``).
///
/// Off unless `mqtt.broker` is set. The lamps never wait for it: the broker's connection lives on
/// libmosquitto's thread, state goes out from a timer of its own four times a second, and a broker that is
/// down, refuses the credentials or goes away gets one line in the log and is retried with back-off while the
/// light organ goes on as if there were no MQTT at all. Everything from the broker is checked
/// (``HomeCommand``); a bad message changes nothing and gets one line (at most one every 10 s per topic).
public final class HomeAssistantLink: Sendable {
    /// What the link needs besides the receiver.
    public struct Setup: Sendable {
        public var settings: MQTTSettings
        public var identity: HomeIdentity
        /// ALSA capture devices offered as sound sources.
        public var captureDevices: [String]
        /// The settings as loaded, with their sources, for a receiver without its page (with one, the page's).
        public var live: LiveSettings

        public init(settings: MQTTSettings, identity: HomeIdentity, captureDevices: [String], live: LiveSettings) {
            (self.settings, self.identity, self.captureDevices, self.live) = (settings, identity, captureDevices, live)
        }
    }

    /// How often the state is looked at.
    static let tick = Duration.milliseconds(250)

    private struct State {
        var client: MQTTClient?
        var connected = false
        /// What the connection's troubles were since it was last made, so that a retry loop logs one line per
        /// reason, not one per attempt (libmosquitto may tell one failure twice, from two callbacks).
        var troublesTold: Set<String> = []
        var everConnected = false
        var reports: HomeReports
        var discovery: HomeAssistantDiscovery
        var configsSent = false
        var refusals = RateLimitedLog()
        /// Messages published, for the statistics line.
        var published = 0
    }

    private let setup: Setup
    private let topics: HomeTopics
    private let control: ReceiverControl
    private let logger: Logger
    private let state: Mutex<State>

    init(setup: Setup, control: ReceiverControl, logger: Logger) {
        self.setup = setup
        let name = setup.identity.name
        topics = HomeTopics(
            base: setup.settings.topic.isEmpty ? MQTTTopic.defaultBase(name: name) : setup.settings.topic)
        self.control = control
        self.logger = logger
        let discovery = HomeAssistantDiscovery(
            identity: setup.identity, topics: topics, prefix: setup.settings.discoveryPrefix, soundOptions: [],
            paletteOptions: [])
        state = Mutex(State(reports: HomeReports(topics: topics), discovery: discovery))
    }

    /// Connects, keeps the entities' state and takes commands until the task is cancelled; then says `offline`.
    func run() async {
        guard let (host, port, tls) = await brokerAddress() else { return }
        var password: String?
        if !setup.settings.passwordFile.isEmpty {
            do {
                let text = try String(contentsOfFile: setup.settings.passwordFile, encoding: .utf8)
                password = String(text.split(separator: "\n", omittingEmptySubsequences: false).first ?? "")
            } catch {
                logger.error(
                    "mqtt: cannot read mqtt.password_file \(setup.settings.passwordFile): \(SystemErrorText.reason(of: error)); the receiver runs without MQTT"
                )
                return
            }
        }
        let address = MQTTBroker.address(host: host, port: port, tls: tls).description
        let client: MQTTClient
        do {
            let options = MQTTClient.Options(
                host: host, port: port, tls: tls, caFile: setup.settings.caFile.isEmpty ? nil : setup.settings.caFile,
                username: setup.settings.username.isEmpty ? nil : setup.settings.username, password: password,
                clientID: "lightorgan-\(setup.identity.id)", will: (topics.availability, "offline"))
            client = try MQTTClient(options)
        } catch {
            logger.error("mqtt: \(error); the receiver runs without MQTT")
            return
        }
        state.withLock { $0.client = client }
        logger.info(
            "mqtt: connecting to \(address) as \(topics.base), Home Assistant discovery under \(setup.settings.discoveryPrefix)/"
        )
        await withDiscardingTaskGroup { group in
            group.addTask { [self] in
                for await event in client.events { handle(event, address: address) }
            }
            group.addTask { [self] in
                while (try? await Task.sleep(for: Self.tick)) != nil { report() }
            }
            // Until cancelled: the receiver stops.
            while (try? await Task.sleep(for: .seconds(3600))) != nil {}
            state.withLock { $0.client = nil }
            client.close(goodbye: (topics.availability, "offline"))
            group.cancelAll()
        }
        logger.info("mqtt: said offline and disconnected from \(address)")
    }

    /// The broker's host, port and whether TLS, from `mqtt.broker` (found by DNS-SD for `auto`); nil when the
    /// task is cancelled first.
    private func brokerAddress() async -> (String, Int, Bool)? {
        switch setup.settings.broker {
        case .none: return nil
        case .address(let host, let port, let tls): return (host, port, tls)
        case .auto:
            let browser: ReceiverBrowser
            do {
                browser = try ReceiverBrowser(logger: logger, serviceType: "_mqtt._tcp")
            } catch {
                logger.error(
                    "mqtt: mqtt.broker is auto, but DNS-SD cannot look for one: \(error); set mqtt.broker to mqtt://host[:port]"
                )
                return nil
            }
            defer { browser.close() }
            logger.info("mqtt: looking for a broker on the local network (DNS-SD _mqtt._tcp)")
            var said = false
            for await update in browser.updates {
                switch update {
                case .receivers(let found, let settled):
                    if let broker = found.sorted(by: { $0.isIPv6 == $1.isIPv6 ? $0.name < $1.name : !$0.isIPv6 }).first
                    {
                        logger.info("mqtt: found the broker \(broker)")
                        return (broker.address, broker.port, false)
                    }
                    if settled, !said {
                        said = true
                        logger.warning(
                            "mqtt: no broker announces itself on the local network (DNS-SD _mqtt._tcp) yet; still looking (or set mqtt.broker to mqtt://host[:port])"
                        )
                    }
                case .unavailable(let why):
                    if !said {
                        said = true
                        logger.warning("mqtt: cannot look for a broker: \(why)")
                    }
                }
            }
            return nil
        }
    }

    private func handle(_ event: MQTTClient.Event, address: String) {
        switch event {
        case .connected:
            let again = state.withLock { state -> Bool in
                defer {
                    state.connected = true
                    state.everConnected = true
                    state.troublesTold = []
                    state.configsSent = false
                    state.reports.resend()
                }
                return state.everConnected
            }
            logger.info("mqtt: connected\(again ? " again" : "") to \(address)")
            state.withLock { $0.client }?.subscribe(topics.commands + ["\(setup.settings.discoveryPrefix)/status"])
            report()
        case .refused(let why), .disconnected(let why):
            let refused = if case .refused = event { true } else { false }
            let line = state.withLock { state -> String? in
                state.connected = false
                guard state.troublesTold.insert(why).inserted else { return nil }
                return refused
                    ? "mqtt: the broker at \(address) refused the connection: \(why)\(why.lowercased().contains("author") ? " (mqtt.username, mqtt.password_file)" : ""); retrying with back-off; the lights go on without it"
                    : "mqtt: \(state.everConnected ? "lost" : "cannot reach") the broker at \(address): \(why)\(why.contains("TLS") || why.contains("certificate") ? " (mqtt.ca_file: the certificate of the authority that signed the broker's)" : ""); retrying with back-off; the lights go on without it"
            }
            if let line { logger.warning("\(line)") }
        case .message(let topic, let payload):
            if topic == "\(setup.settings.discoveryPrefix)/status" {
                if payload == Array("online".utf8) {
                    logger.info("mqtt: Home Assistant is online: its entities' configs go again")
                    state.withLock {
                        $0.configsSent = false
                        $0.reports.resend()
                    }
                    report()
                }
                return
            }
            command(topic, payload)
        }
    }

    private func command(_ topic: String, _ payload: [UInt8]) {
        let (sounds, palettes) = state.withLock { ($0.discovery.soundOptions, $0.discovery.paletteOptions) }
        let parsed: HomeCommand?
        do {
            parsed = try HomeCommand.parse(
                topic: topic, payload: payload, topics: topics, soundOptions: sounds, paletteOptions: palettes)
        } catch {
            refuse("\(error)", topic: topic)
            return
        }
        switch parsed {
        case nil: return
        case .light(let on, let brightness, let effect)?:
            var changes: [(String, String)] = []
            if let on { changes.append(("receiver.lights", on ? "on" : "off")) }
            if let brightness { changes.append(("receiver.max_brightness", String(brightness))) }
            if let effect { changes.append(("receiver.strip.effect", effect.rawValue)) }
            for (key, value) in changes { apply(key, value, topic: topic) }
        case .select(let key, let value)?:
            apply(key, value, topic: topic)
        case .check?:
            control.checkEveryPart()
            logger.info("mqtt: wiring check: each line lit alone in turn, then the strip")
        }
        report()
    }

    private func apply(_ key: String, _ value: String, topic: String) {
        switch control.set(key, to: value) {
        case .success(let applied): logger.info("mqtt: \(key) = \(applied)")
        case .failure(let refusal): refuse("mqtt: \(topic): \(refusal.message); nothing changed", topic: topic)
        }
    }

    private func refuse(_ line: String, topic: String) {
        let shown = state.withLock { $0.refusals.line(line, kind: topic, at: .now) }
        if let shown { logger.warning("\(shown)") }
    }

    /// Publishes what changed: the configs when they are not sent yet or their options changed, then the state.
    private func report() {
        guard state.withLock({ $0.connected }) else { return }
        let snapshot = control.homeSnapshot()
        let (client, messages) = state.withLock { state -> (MQTTClient?, [HomeReports.Message]) in
            guard state.connected, let client = state.client else { return (nil, []) }
            var messages: [HomeReports.Message] = []
            let sounds = HomeOptions.sounds(captureDevices: setup.captureDevices, current: snapshot.sound)
            let palettes = HomeOptions.palettes(current: snapshot.palette)
            if !state.configsSent || sounds != state.discovery.soundOptions
                || palettes != state.discovery.paletteOptions
            {
                state.discovery.soundOptions = sounds
                state.discovery.paletteOptions = palettes
                state.configsSent = true
                messages += state.discovery.configs.map { .init(topic: $0.topic, payload: $0.payload, retain: true) }
                messages.append(.init(topic: topics.availability, payload: "online", retain: true))
            }
            messages += state.reports.messages(for: snapshot, now: ContinuousClock.now - Self.epoch)
            state.published += messages.count
            return (client, messages)
        }
        guard let client else { return }
        for message in messages { client.publish(message.topic, message.payload, retain: message.retain) }
    }

    private static let epoch = ContinuousClock.now

    /// Messages published since the last call, for the statistics line.
    func takePublished() -> Int {
        state.withLock { state in
            defer { state.published = 0 }
            return state.published
        }
    }
}
