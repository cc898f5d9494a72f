import FoundationEssentials

/// A command from the broker, checked: what Home Assistant (or anyone on the broker: it is a shared bus) asks
/// the receiver to do. Each becomes changes of the live settings by the page's own path, or the wiring check;
/// nothing from the broker runs a program or names a path (a select's value must be one of its options).
public enum HomeCommand: Sendable, Equatable {
    /// The light: on (the lamps dance) or off (dark while senders and sound go on), the brightness limit in
    /// percent (1…100), the strip effect; each nil when the command leaves it.
    case light(on: Bool?, brightness: Int?, effect: StripEffect?)
    /// A select: the settings key and the chosen option.
    case select(key: String, value: String)
    /// The wiring check's button.
    case check

    /// Longest payload taken, bytes: Home Assistant's light commands are under 100.
    public static let longestPayload = 512

    /// The command that `payload` on `topic` makes, nil when `topic` is not one of `topics.commands`.
    ///
    /// - Parameters:
    ///   - soundOptions, paletteOptions: the selects' options as last published; a value must be one of them.
    /// - Throws: ``HomeCommandError`` saying what is wrong, in one line that names the topic.
    public static func parse(
        topic: String, payload: [UInt8], topics: HomeTopics, soundOptions: [String], paletteOptions: [String]
    ) throws(HomeCommandError) -> HomeCommand? {
        guard topics.commands.contains(topic) else { return nil }
        guard payload.count <= longestPayload else {
            throw HomeCommandError(
                topic: topic, "a payload of \(payload.count) bytes is too long (at most \(longestPayload))")
        }
        guard let text = String(validating: payload, as: UTF8.self) else {
            throw HomeCommandError(topic: topic, "the payload is not UTF-8 text")
        }
        switch topic {
        case topics.lightCommand: return try light(text, topic: topic)
        case topics.soundCommand: return try select("receiver.sound", text, options: soundOptions, topic: topic)
        case topics.paletteCommand:
            return try select("receiver.strip.palette", text, options: paletteOptions, topic: topic)
        default:
            guard text == "PRESS" else {
                throw HomeCommandError(topic: topic, "\(quoted(text)) is not allowed; allowed: PRESS")
            }
            return .check
        }
    }

    /// Home Assistant's JSON light command: `{"state":"ON","brightness":80,"effect":"scroll"}`.
    private struct LightPayload: Decodable {
        var state: String?
        var brightness: Double?
        var effect: String?
    }

    private static func light(_ text: String, topic: String) throws(HomeCommandError) -> HomeCommand {
        let payload: LightPayload
        do {
            payload = try JSONDecoder().decode(LightPayload.self, from: Data(text.utf8))
        } catch {
            throw HomeCommandError(
                topic: topic, "\(quoted(text)) is not a JSON light command like {\"state\":\"ON\",\"brightness\":80}")
        }
        var on: Bool?
        switch payload.state?.uppercased() {
        case nil: break
        case "ON": on = true
        case "OFF": on = false
        case let other?: throw HomeCommandError(topic: topic, "state \(quoted(other)) is not allowed; allowed: ON, OFF")
        }
        var brightness: Int?
        if let value = payload.brightness {
            guard value.isFinite, (0...100).contains(value) else {
                throw HomeCommandError(topic: topic, "brightness \(value) is out of range 0…100")
            }
            // 0 is dark: off, the limit left as it was.
            if value.rounded() == 0 { on = false } else { brightness = Int(value.rounded()) }
        }
        var effect: StripEffect?
        if let name = payload.effect {
            guard let known = StripEffect(rawValue: name) else {
                let allowed = StripEffect.allCases.map(\.rawValue).joined(separator: ", ")
                throw HomeCommandError(topic: topic, "effect \(quoted(name)) is not allowed; allowed: \(allowed)")
            }
            effect = known
        }
        guard on != nil || brightness != nil || effect != nil else {
            throw HomeCommandError(topic: topic, "\(quoted(text)) asks for nothing (no state, brightness or effect)")
        }
        return .light(on: on, brightness: brightness, effect: effect)
    }

    private static func select(_ key: String, _ text: String, options: [String], topic: String) throws(HomeCommandError)
        -> HomeCommand
    {
        guard options.contains(text) else {
            throw HomeCommandError(
                topic: topic, "\(quoted(text)) is not one of the options; allowed: \(options.joined(separator: " | "))")
        }
        return .select(key: key, value: text)
    }

    /// `text` in quotes, cut to 60 characters, control characters shown as `?`: a log line stays one line.
    static func quoted(_ text: String) -> String {
        var shown = String(
            text.unicodeScalars.prefix(60).map { $0.properties.generalCategory == .control ? "?" : Character($0) })
        if text.unicodeScalars.count > 60 { shown += "…" }
        return "\"\(shown)\""
    }
}

/// Why a command from the broker changed nothing, in the log's words.
public struct HomeCommandError: Error, Sendable, Equatable, CustomStringConvertible {
    public let topic: String
    public let reason: String

    init(topic: String, _ reason: String) { (self.topic, self.reason) = (topic, reason) }

    public var description: String { "mqtt: \(topic): \(reason); nothing changed" }
}
