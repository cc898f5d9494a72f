/// The receiver's own MQTT topics, all under one prefix (`mqtt.topic`).
///
/// State topics are retained, so that Home Assistant, a dashboard or `mosquitto_sub` sees the state at once
/// when it subscribes; the levels are not (they are stale the moment they are sent).
public struct HomeTopics: Sendable, Equatable {
    /// The prefix, e.g. `lightorgan/living-room`.
    public let base: String

    public init(base: String) { self.base = base }

    /// `online` while the receiver is connected; `offline` from its last will (the broker publishes it when the
    /// connection is lost) or when it stops.
    public var availability: String { base + "/availability" }
    /// The light: `{"state":"ON","brightness":80,"effect":"scroll","color_mode":"brightness"}`.
    public var lightState: String { base + "/light/state" }
    public var lightCommand: String { base + "/light/set" }
    /// The sound source select: the value of `receiver.sound`.
    public var soundState: String { base + "/sound/state" }
    public var soundCommand: String { base + "/sound/set" }
    /// The strip palette select: the value of `receiver.strip.palette`.
    public var paletteState: String { base + "/palette/state" }
    public var paletteCommand: String { base + "/palette/set" }
    /// What drives the lights and the frames a second: `{"driver":"laptop.local","fps":100}`.
    public var status: String { base + "/status" }
    /// The lamps' levels in percent: `{"bass":80,"mid":12,"treble":0}`.
    public var levels: String { base + "/levels" }
    /// The wiring check's button: `PRESS`.
    public var check: String { base + "/check/press" }

    /// Every topic the receiver takes commands on.
    public var commands: [String] { [lightCommand, soundCommand, paletteCommand, check] }
}
