import Foundation

/// What PipeWire itself says about its sinks, read from `pw-dump`'s JSON: the playback latency of
/// a sink, which pipewire-pulse does not pass on (its `pactl list sinks` shows `Latency: 0 usec`
/// for every sink, a Bluetooth headset's included).
///
/// PipeWire states a sink's latency as a `Latency` parameter of its input ports (direction
/// `Input`): whole quanta of the graph, samples at the graph's rate, and nanoseconds. A Bluetooth
/// sink puts its codec, packet and transport delay (and the user's latency offset) in the
/// nanoseconds; a sound card sink one quantum plus its headroom in samples; a network tunnel its
/// buffer in nanoseconds.
public struct PipeWireGraph: Sendable {
    /// One sink node: its name and the latencies its input ports report.
    struct Sink: Sendable {
        var name: String
        var portLatencies: [PortLatency]
    }

    /// A `Latency` parameter, direction `Input` (the lower bounds: PipeWire's streams take those too).
    struct PortLatency: Sendable, Equatable {
        /// Whole graph quanta, ≥ 0.
        var quanta: Double
        /// Samples at the graph's rate, ≥ 0.
        var samples: Int
        /// Nanoseconds, ≥ 0.
        var nanoseconds: Int
    }

    var sinks: [Sink] = []
    /// The graph's sample rate, Hz (`clock.force-rate`, else `clock.rate`; 48 000 when unstated).
    public private(set) var rate = 48_000
    /// Bounds on the graph's quantum, samples (`clock.min-quantum`, `clock.max-quantum`).
    var quantumBounds = 32...2_048
    /// A quantum forced by the user (`clock.force-quantum`), samples; nil when not forced.
    var forcedQuantum: Int?

    /// Reads `pw-dump`'s output (a JSON array of objects); nil when it is not that.
    public init?(dump: String) {
        guard let objects = (try? JSONSerialization.jsonObject(with: Data(dump.utf8))) as? [[String: Any]] else {
            return nil
        }
        var sinkNames: [Int: String] = [:]
        var latencies: [Int: [PortLatency]] = [:]
        var settings: [String: Int] = [:]
        for object in objects {
            let type = object["type"] as? String ?? ""
            let info = object["info"] as? [String: Any]
            let props = info?["props"] as? [String: Any] ?? [:]
            if type.hasSuffix(":Node"), let id = Self.integer(object["id"]),
                (props["media.class"] as? String)?.hasSuffix("/Sink") == true, let name = props["node.name"] as? String
            {
                sinkNames[id] = name
            } else if type.hasSuffix(":Port"), info?["direction"] as? String == "input",
                let node = Self.integer(props["node.id"])
            {
                let params = info?["params"] as? [String: Any]
                for latency in params?["Latency"] as? [[String: Any]] ?? [] where latency["direction"] as? String == "Input" {
                    latencies[node, default: []].append(
                        PortLatency(
                            quanta: max(0, (latency["minQuantum"] as? NSNumber)?.doubleValue ?? 0),
                            samples: max(0, Self.integer(latency["minRate"]) ?? 0),
                            nanoseconds: max(0, Self.integer(latency["minNs"]) ?? 0)))
                }
            } else if type.hasSuffix(":Metadata"), (object["props"] as? [String: Any])?["metadata.name"] as? String == "settings" {
                for entry in object["metadata"] as? [[String: Any]] ?? [] {
                    if let key = entry["key"] as? String, let value = Self.integer(entry["value"]) { settings[key] = value }
                }
            }
        }
        sinks = sinkNames.sorted { $0.key < $1.key }.map { Sink(name: $0.value, portLatencies: latencies[$0.key] ?? []) }
        if let forced = settings["clock.force-rate"], forced > 0 {
            rate = forced
        } else if let rate = settings["clock.rate"], rate > 0 {
            self.rate = rate
        }
        if let low = settings["clock.min-quantum"], let high = settings["clock.max-quantum"], 0 < low, low <= high {
            quantumBounds = low...high
        }
        if let forced = settings["clock.force-quantum"], forced > 0 { forcedQuantum = forced }
    }

    /// The graph's quantum, samples, while a recorder asks for blocks of `blockMilliseconds`: the
    /// graph runs at the smallest quantum any node asks for, rounded down to a power of two, and
    /// the monitor's recorder is usually the one that asks least. An estimate: a player asking for
    /// less makes it smaller.
    public func quantum(recorderBlockMilliseconds blockMilliseconds: Int) -> Int {
        if let forcedQuantum { return forcedQuantum }
        let asked = max(1, rate * blockMilliseconds / 1_000)
        var powerOfTwo = 1
        while powerOfTwo * 2 <= asked { powerOfTwo *= 2 }
        return min(max(powerOfTwo, quantumBounds.lowerBound), quantumBounds.upperBound)
    }

    /// The playback latency of sink `name`, microseconds: from a sample entering the sink (and its
    /// monitor) to it leaving the device, the largest over its input ports. Nil when no sink has
    /// that name or its ports state no latency.
    /// - Parameter blockMilliseconds: the blocks the monitor's recorder asks for (see ``quantum(recorderBlockMilliseconds:)``).
    public func playbackLatencyMicroseconds(ofSink name: String, recorderBlockMilliseconds blockMilliseconds: Int) -> Int? {
        guard let sink = sinks.first(where: { $0.name == name }), !sink.portLatencies.isEmpty else { return nil }
        let quantum = Double(quantum(recorderBlockMilliseconds: blockMilliseconds))
        return sink.portLatencies.map { latency in
            let samples = latency.quanta * quantum + Double(latency.samples)
            return Int((samples * 1e6 / Double(rate) + Double(latency.nanoseconds) / 1e3).rounded())
        }.max()
    }

    private static func integer(_ value: Any?) -> Int? {
        if let number = value as? NSNumber { return number.intValue }
        if let text = value as? String { return Int(text) }
        return nil
    }
}
