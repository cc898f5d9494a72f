import LightOrganCore
import LightOrganTestSupport

/// Random payloads on random topics through ``HomeCommand/parse(topic:payload:topics:soundOptions:paletteOptions:)``,
/// as anyone on a shared MQTT broker may send them: each is either refused with one line naming the topic, or
/// becomes a command whose every value is one Home Assistant may set (a select's value one of its options, a
/// brightness 1…100). It never crashes and never lets through a value that names something else.
enum HomeCommandFuzz {
    static let topics = HomeTopics(base: "lightorgan/pi")
    static let sounds = HomeOptions.sounds(captureDevices: ["plughw:CARD=Mic,DEV=0"], current: "pipe:/run/spotify")
    static let palettes = HomeOptions.palettes(current: "red, green, blue")

    /// Pieces of what a light command, a select or a button might carry.
    static let pieces = [
        "{", "}", "\"state\"", "\"brightness\"", "\"effect\"", ":", ",", "\"ON\"", "\"OFF\"", "\"on\"", "0", "1", "100",
        "101", "-1", "1e309", "77.5", "null", "true", "\"flash\"", "\"scroll\"", "\"rainbow\"", "[", "]", "\"", "\\",
        "\\u0000", "PRESS", "airplay", "network", "pipe:/etc/shadow", "red, amber, white", "plughw:CARD=Mic,DEV=0", " ",
        "\n", "ü", "🎛",
    ]

    static func run(_ generator: inout SplitMix64, _ count: Int) throws(FuzzFailure) {
        let suffixes = ["light/set", "sound/set", "palette/set", "check/press", "light/state", "levels"]
        for _ in 0..<count {
            let topic = "lightorgan/pi/" + suffixes[Int(generator.next() % UInt64(suffixes.count))]
            let payload = payloadBytes(&generator)
            let command: HomeCommand?
            do {
                command = try HomeCommand.parse(
                    topic: topic, payload: payload, topics: topics, soundOptions: sounds, paletteOptions: palettes)
            } catch {
                try require(
                    error.description.hasPrefix("mqtt: \(topic): ") && !error.description.contains("\n"),
                    "a refusal that is not one line naming the topic: \(error.description.debugDescription)")
                continue
            }
            try require(
                (command == nil) == !topics.commands.contains(topic),
                "\(topic) \(payload): \(String(describing: command))")
            switch command {
            case .light(let on, let brightness, let effect)?:
                try require(on != nil || brightness != nil || effect != nil, "an empty light command")
                try require(
                    brightness.map { (1...100).contains($0) } ?? true, "brightness \(String(describing: brightness))")
            case .select(let key, let value)?:
                let options = key == "receiver.sound" ? sounds : palettes
                try require(options.contains(value), "\(key) = \(value.debugDescription) is not an option")
                try require(payload.count <= HomeCommand.longestPayload, "a payload over the limit was taken")
            case .check?, nil:
                break
            }
        }
    }

    static func payloadBytes(_ generator: inout SplitMix64) -> [UInt8] {
        switch generator.next() % 4 {
        case 0:
            return (0..<Int(generator.next() % 700)).map { _ in UInt8(truncatingIfNeeded: generator.next()) }
        default:
            var text = ""
            for _ in 0..<Int(generator.next() % 16) { text += pieces[Int(generator.next() % UInt64(pieces.count))] }
            return Array(text.utf8)
        }
    }
}
