/// What the receiver publishes about itself, paced: the state of each entity when it changes, the levels at
/// most ``levelsInterval`` apart, the frames a second and the tempo at most ``rateInterval`` apart (a beat found
/// or lost at once), so that a dashboard can
/// show them all without flooding a shared broker (about three messages a second while music plays, none
/// while nothing changes).
///
/// Time is passed in (any monotonic clock): the pacing is tested without waiting.
public struct HomeReports: Sendable {
    /// What the receiver is doing now, as the entities show it.
    public struct Snapshot: Sendable, Equatable {
        /// Whether the light organ dances (`receiver.lights`).
        public var lightsOn: Bool
        /// `receiver.max_brightness`, percent.
        public var brightness: Int
        public var effect: StripEffect
        /// `receiver.sound` and `receiver.strip.palette` as their settings' text.
        public var sound: String
        public var palette: String
        /// What drives the lights (a sender's name, `AirPlay: playing`), or `nobody`.
        public var driver: String
        /// Frames shown a second.
        public var framesPerSecond: Double
        /// The lamps' levels now.
        public var levels: LevelFrame
        /// The tempo the lights follow, beats per minute; 0 while none is held.
        public var bpm: Int

        public init(
            lightsOn: Bool, brightness: Int, effect: StripEffect, sound: String, palette: String, driver: String,
            framesPerSecond: Double, levels: LevelFrame, bpm: Int = 0
        ) {
            (self.lightsOn, self.brightness, self.effect) = (lightsOn, brightness, effect)
            (self.sound, self.palette, self.driver) = (sound, palette, driver)
            (self.framesPerSecond, self.levels, self.bpm) = (framesPerSecond, levels, bpm)
        }
    }

    /// One message to publish.
    public struct Message: Sendable, Equatable {
        public var topic: String
        public var payload: String
        public var retain: Bool

        public init(topic: String, payload: String, retain: Bool) {
            (self.topic, self.payload, self.retain) = (topic, payload, retain)
        }
    }

    /// Shortest time between two level messages.
    public static let levelsInterval = Duration.milliseconds(500)
    /// Shortest time between two status messages for a change of the frame rate alone (a new driver goes at once).
    public static let rateInterval = Duration.seconds(5)

    public let topics: HomeTopics
    private var sent: [String: String] = [:]
    private var levelsSentAt: Duration?
    private var statusSentAt: Duration?
    private var sentDriver: String?
    private var sentBPM = 0

    public init(topics: HomeTopics) { self.topics = topics }

    /// Forgets what was sent: after a reconnect every state goes again (the broker may have lost them).
    public mutating func resend() {
        sent = [:]
        levelsSentAt = nil
        statusSentAt = nil
        sentDriver = nil
        sentBPM = 0
    }

    /// The messages `snapshot` calls for at `now`.
    public mutating func messages(for snapshot: Snapshot, now: Duration) -> [Message] {
        var messages: [Message] = []
        func send(_ topic: String, _ payload: String, retain: Bool = true) {
            guard sent[topic] != payload else { return }
            sent[topic] = payload
            messages.append(Message(topic: topic, payload: payload, retain: retain))
        }
        let light: JSONValue = [
            "state": snapshot.lightsOn ? "ON" : "OFF", "brightness": .integer(snapshot.brightness),
            "effect": .string(snapshot.effect.rawValue), "color_mode": "brightness",
        ]
        send(topics.lightState, light.text)
        send(topics.soundState, snapshot.sound)
        send(topics.paletteState, snapshot.palette)
        let fps = Int(snapshot.framesPerSecond.rounded())
        let status: JSONValue = [
            "driver": .string(snapshot.driver), "fps": .integer(fps), "bpm": .integer(snapshot.bpm),
        ]
        // A new driver, and a beat found or lost, go at once; a change of the rate or the tempo alone waits.
        let beatFoundOrLost = (snapshot.bpm == 0) != (sentBPM == 0)
        if snapshot.driver != sentDriver || beatFoundOrLost
            || statusSentAt.map({ now - $0 >= Self.rateInterval }) ?? true
        {
            let before = messages.count
            send(topics.status, status.text)
            if messages.count > before {
                statusSentAt = now
                sentDriver = snapshot.driver
                sentBPM = snapshot.bpm
            }
        }
        if levelsSentAt.map({ now - $0 >= Self.levelsInterval }) ?? true {
            func percent(_ level: UInt8) -> JSONValue { .integer((Int(level) * 100 + 127) / 255) }
            let levels: JSONValue = [
                "bass": percent(snapshot.levels.bass), "mid": percent(snapshot.levels.mid),
                "treble": percent(snapshot.levels.treble),
            ]
            let before = messages.count
            send(topics.levels, levels.text, retain: false)
            if messages.count > before { levelsSentAt = now }
        }
        return messages
    }
}
