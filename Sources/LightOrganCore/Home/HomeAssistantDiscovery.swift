/// The receiver's entities in Home Assistant, as MQTT discovery messages: one retained config per entity on
/// `<discovery prefix>/<component>/lightorgan_<id>/<object>/config` (the one-message-per-entity form, which
/// Home Assistant 2024.3 and newer all read).
///
/// Every entity carries the same `device` and `origin` blocks, a `unique_id` made of the receiver's kept id
/// (``HomeIdentity/id``) and the entity's object, and the availability topic that the last will feeds. The
/// light uses the JSON schema with `brightness_scale: 100`, so Home Assistant's brightness is
/// `receiver.max_brightness` in percent.
public struct HomeAssistantDiscovery: Sendable, Equatable {
    public var identity: HomeIdentity
    public var topics: HomeTopics
    /// `mqtt.discovery_prefix`.
    public var prefix: String
    /// The sound select's options (``HomeOptions/sounds(captureDevices:current:)``).
    public var soundOptions: [String]
    /// The palette select's options (``HomeOptions/palettes(current:)``).
    public var paletteOptions: [String]

    public init(
        identity: HomeIdentity, topics: HomeTopics, prefix: String, soundOptions: [String], paletteOptions: [String]
    ) {
        (self.identity, self.topics, self.prefix) = (identity, topics, prefix)
        (self.soundOptions, self.paletteOptions) = (soundOptions, paletteOptions)
    }

    /// One discovery message: its topic and JSON text, published retained.
    public struct Config: Sendable, Equatable {
        public var topic: String
        public var payload: String
        /// The entity's component (`light`, `select`, `sensor`, `button`) and object (`lights`, `sound`…).
        public var component: String
        public var object: String
    }

    /// The configs of every entity: the light, the two selects, six sensors (the tempo among them) and the button.
    public var configs: [Config] {
        let node = "lightorgan_\(identity.id)"
        var configs: [Config] = []
        func add(_ component: String, _ object: String, _ fields: [String: JSONValue]) {
            var payload = fields
            payload["unique_id"] = .string("\(node)_\(object)")
            payload["device"] = identity.device
            payload["origin"] = identity.origin
            payload["availability_topic"] = .string(topics.availability)
            configs.append(
                Config(
                    topic: "\(prefix)/\(component)/\(node)/\(object)/config", payload: JSONValue.object(payload).text,
                    component: component, object: object))
        }
        add(
            "light", "lights",
            [
                // No name of its own: the light is the device (Home Assistant names it after the receiver).
                "name": .null, "schema": "json", "command_topic": .string(topics.lightCommand),
                "state_topic": .string(topics.lightState), "brightness": true, "brightness_scale": 100,
                "effect": true, "effect_list": .array(StripEffect.allCases.map { .string($0.rawValue) }),
                "supported_color_modes": ["brightness"],
                // Home Assistant 2024.3 refuses supported_color_modes without it; later releases ignore it.
                "color_mode": true, "icon": "mdi:lightbulb-group",
            ])
        add(
            "select", "sound",
            [
                "name": "Sound source", "command_topic": .string(topics.soundCommand),
                "state_topic": .string(topics.soundState), "options": .array(soundOptions.map { .string($0) }),
                "icon": "mdi:music-box-multiple",
            ])
        add(
            "select", "palette",
            [
                "name": "Strip palette", "command_topic": .string(topics.paletteCommand),
                "state_topic": .string(topics.paletteState), "options": .array(paletteOptions.map { .string($0) }),
                "icon": "mdi:palette",
            ])
        add(
            "sensor", "driver",
            [
                "name": "Driving the lights", "state_topic": .string(topics.status),
                "value_template": "{{ value_json.driver }}", "icon": "mdi:music",
            ])
        add(
            "sensor", "fps",
            [
                "name": "Frames per second", "state_topic": .string(topics.status),
                "value_template": "{{ value_json.fps }}", "unit_of_measurement": "fps", "state_class": "measurement",
                "entity_category": "diagnostic", "icon": "mdi:speedometer",
            ])
        add(
            "sensor", "bpm",
            [
                "name": "Tempo", "state_topic": .string(topics.status), "value_template": "{{ value_json.bpm }}",
                "unit_of_measurement": "BPM", "state_class": "measurement", "icon": "mdi:metronome",
            ])
        for band in Band.allCases {
            add(
                "sensor", "\(band)",
                [
                    "name": .string("\(band.description.prefix(1).uppercased())\(band.description.dropFirst()) level"),
                    "state_topic": .string(topics.levels), "value_template": .string("{{ value_json.\(band) }}"),
                    "unit_of_measurement": "%", "state_class": "measurement", "icon": "mdi:equalizer",
                ])
        }
        add(
            "button", "check",
            [
                "name": "Wiring check", "command_topic": .string(topics.check), "payload_press": "PRESS",
                "entity_category": "diagnostic", "icon": "mdi:led-on",
            ])
        return configs
    }
}
