import Foundation
import LightOrganCore
import LightOrganSettings
import LightOrganTestSupport

/// Random values for random keys through the real ``SettingsLoader`` (environment and options,
/// and whole YAML files): it either loads settings within every documented range, or throws a
/// ``SettingsError`` naming where the bad value came from. It never crashes and never substitutes
/// a default for a bad value.
enum SettingsFuzz {
    static let keys = SettingsCatalog.keys

    /// Values a user (or a cat on the keyboard) might write.
    static func value(_ generator: inout SplitMix64) -> String {
        let pool = [
            "0", "1", "-1", "8181", "65535", "65536", "99999999999999999999", "1e3", "1e309", "nan", "inf", "-0",
            "0.05",
            "0.049", "3600.1", "250", "251", "true", "no", "yes", "maybe", "", " ", "all", "none", "10.0.0.0/8",
            "::1/129",
            "5, 6", "5,,6", "512", "[5]", "pi.local", "pi.local:0", "[::1]:8181", "a b", "demo", "monitor", "-",
            "x.wav",
            "hw:1,0", "pwm", "onoff", "bar", "gpio", "stdout", "s16le", "ü", "🎛", "\u{0}", "\\", "\"", "'", "#", "%",
            "sacn://10.0.0.9", "sacn://multicast?universe=63999&layout=blend&pixels=10000",
            "artnet://broadcast?universe=0",
            "ddp://auto?name=x&pixels=0", "ddp://[::1]:4048?gamma=9", "sacn://h?address=512&layout=rgb", "dmx://x",
            "sacn://",
            "sacn://h?rate=0", "artnet://h?universe=32768", "sacn://h?=&&x",
            "ddp://h?layout=segments&pixels=10000&address=1",
        ]
        switch generator.next() % 4 {
        case 0: return pool.randomElement(using: &generator)!
        case 1: return String(Int64(bitPattern: generator.next()) >> Int64(generator.next() % 60))
        case 2: return String(Double(bitPattern: generator.next()))
        default:
            let scalars = (0..<Int.random(in: 0...8, using: &generator)).compactMap { _ in
                Unicode.Scalar(UInt32(generator.next() % (generator.next() % 4 == 0 ? 0x1_0000 : 128)))
            }
            return String(String.UnicodeScalarView(scalars))
        }
    }

    static func checkRanges(_ settings: Settings, _ context: @autoclosure () -> String) throws(FuzzFailure) {
        let sender = settings.sender, receiver = settings.receiver, analysis = settings.analysis
        try require(
            (1...65535).contains(sender.port) && (10...250).contains(sender.framesPerSecond),
            "sender out of range: \(context())")
        try require(
            (0...65535).contains(receiver.port) && (0.05...3600).contains(receiver.timeout),
            "receiver out of range: \(context())")
        try require(
            (1...1000).contains(receiver.maxConnections) && receiver.idleTimeout >= 0.1,
            "connections out of range: \(context())")
        try require(
            receiver.lines.values.allSatisfy { !$0.isEmpty && $0.allSatisfy((0...511).contains) }, "lines: \(context())"
        )
        try require(analysis.midTrebleCrossover >= 2 * analysis.bassMidCrossover, "crossovers: \(context())")
        try require(!sender.host.isEmpty && !sender.host.contains(where: \.isWhitespace), "host: \(context())")
        // Every placed lighting channel lies inside its universe (DDP: its byte space).
        for patch in sender.lighting + receiver.forward {
            let limit = patch.target.kind == .ddp ? LightingProtocol.ddpChannels : LightingProtocol.channelsPerUniverse
            try require(
                patch.spans.allSatisfy { $0.channel >= 0 && $0.channel + $0.count <= limit }, "lighting: \(context())")
            try require(
                patch.universes.allSatisfy { patch.target.kind.universes?.contains($0) ?? ($0 == 0) },
                "universes: \(context())")
        }
    }

    /// The catalog's parsing alone (every value of every source goes through it), at millions of inputs.
    static func runCatalog(_ generator: inout SplitMix64, count: Int) throws(FuzzFailure) {
        for input in 0..<count {
            var raw: [String: RawSetting] = [:]
            for _ in 0..<Int.random(in: 1...4, using: &generator) {
                let key = keys.randomElement(using: &generator)!
                raw[key.name] = RawSetting(value(&generator), from: .option("--" + key.name))
            }
            let resolved: Settings
            do throws(SettingsError) {
                resolved = try SettingsCatalog.resolve(raw)
            } catch {
                let named =
                    raw.contains { error.description.contains("--" + $0.key + ": " + $0.key + " =") }
                    || error.description.contains("crossover")
                try require(
                    named, "the message names no key and source: \(error.description); \(raw.mapValues(\.value))")
                continue
            }
            try checkRanges(resolved, "input \(input): \(raw.mapValues(\.value))")
        }
    }

    static func runEnvironment(_ generator: inout SplitMix64, count: Int) async throws(FuzzFailure) {
        let empty = FileManager.default.temporaryDirectory.appendingPathComponent("lightorgan-fuzz-\(getpid())").path
        _ = FileManager.default.createFile(atPath: empty, contents: Data())
        defer { try? FileManager.default.removeItem(atPath: empty) }
        for input in 0..<count {
            var environment: [String: String] = [:]
            var options: [String: (value: String, option: String)] = [:]
            for _ in 0..<Int.random(in: 1...3, using: &generator) {
                let key = keys.randomElement(using: &generator)!
                if generator.next() % 2 == 0 {
                    environment[key.environmentVariable] = value(&generator)
                } else {
                    options[key.name] = (value(&generator), "--" + key.name)
                }
            }
            if generator.next() % 50 == 0 { environment["LIGHTORGAN_" + value(&generator).uppercased()] = "1" }
            let context = "input \(input): environment \(environment), options \(options.mapValues(\.value))"
            do {
                let loaded = try await SettingsLoader(options: options, environment: environment).load(
                    configPath: empty)
                try checkRanges(loaded.settings, context)
            } catch let error as SettingsError {
                let named =
                    environment.keys.contains { error.description.contains($0) }
                    || options.values.contains { error.description.contains($0.option) }
                try require(named, "the message names no source: \(error.description); \(context)")
            } catch let failure as FuzzFailure {
                throw failure
            } catch {
                throw FuzzFailure("unexpected error \(error); \(context)")
            }
        }
    }

    /// Random YAML documents from known and misspelt keys, then byte-level damage.
    static func runFile(_ generator: inout SplitMix64, count: Int) async throws(FuzzFailure) {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("lightorgan-fuzz-\(getpid()).yaml")
            .path
        defer { try? FileManager.default.removeItem(atPath: path) }
        for input in 0..<count {
            var text = ""
            var sections: [String: [String]] = [:]
            for _ in 0..<Int.random(in: 0...5, using: &generator) {
                let key = keys.randomElement(using: &generator)!
                var parts = key.name.split(separator: ".").map(String.init)
                if generator.next() % 10 == 0 { parts[parts.count - 1] += "x" }
                let rendered: String
                switch generator.next() % 4 {
                case 0: rendered = "[\(value(&generator)), \(value(&generator))]"
                case 1: rendered = "\"\(value(&generator))\""
                default: rendered = value(&generator)
                }
                sections[parts[0], default: []].append(parts.dropFirst().joined(separator: ".") + ": " + rendered)
            }
            for (section, lines) in sections {
                text += "\(section):\n" + lines.map { "  " + $0 + "\n" }.joined()
            }
            // Fixtures on lighting targets, now and then with the target listed.
            if generator.next() % 3 == 0 {
                let targets = ["sacn://h", "artnet://h", "ddp://h", "sacn://multicast", value(&generator)]
                let target = targets.randomElement(using: &generator)!
                if sections["receiver"] == nil, generator.next() % 2 == 0 {
                    text += "receiver:\n  forward: [\(target)]\n"
                }
                text += "fixtures:\n"
                for name in ["a", "b", value(&generator)].prefix(Int(generator.next() % 3) + 1) {
                    text += "  \(name.isEmpty ? "c" : name):\n    target: \(target)\n"
                    for _ in 0..<Int(generator.next() % 4) {
                        let field = FixtureSettings.fields.randomElement(using: &generator)!.name
                        text += "    \(field)\(generator.next() % 10 == 0 ? "x" : ""): \(value(&generator))\n"
                    }
                }
            }
            var bytes = Array(text.utf8)
            for _ in 0..<Int(generator.next() % 3) where !bytes.isEmpty {
                let at = Int(generator.next() % UInt64(bytes.count))
                let damage: [UInt8] = [58, 45, 91, 93, 123, 125, 9, 32, 10, 35, 38, 42, 33, 124, 62, 0, 0xFF]
                if generator.next() % 2 == 0 {
                    bytes[at] = damage.randomElement(using: &generator)!
                } else {
                    bytes.remove(at: at)
                }
            }
            _ = FileManager.default.createFile(atPath: path, contents: Data(bytes))
            let context = "input \(input): file \(String(decoding: bytes, as: UTF8.self).debugDescription)"
            do {
                let loaded = try await SettingsLoader(environment: [:]).load(configPath: path)
                try checkRanges(loaded.settings, context)
            } catch let error as SettingsError {
                try require(
                    error.description.hasPrefix(path),
                    "the message does not start with the file: \(error.description); \(context)")
            } catch let failure as FuzzFailure {
                throw failure
            } catch {
                throw FuzzFailure("unexpected error \(error); \(context)")
            }
        }
    }
}
