#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

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
        /// Graph quanta (a fraction allowed), ≥ 0.
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
        guard let objects = try? JSONDecoder().decode([DumpObject].self, from: Data(dump.utf8)) else { return nil }
        var sinkNames: [Int: String] = [:]
        var latencies: [Int: [PortLatency]] = [:]
        var settings: [String: Int] = [:]
        for object in objects {
            let props = object.info?.props
            if object.type.hasSuffix(":Node"), let id = object.id, props?.mediaClass?.hasSuffix("/Sink") == true,
                let name = props?.nodeName
            {
                sinkNames[id] = name
            } else if object.type.hasSuffix(":Port"), object.info?.direction == "input", let node = props?.nodeID {
                latencies[node, default: []] += object.info?.latencies ?? []
            } else if object.type.hasSuffix(":Metadata"), object.props?.metadataName == "settings" {
                for entry in object.metadata ?? [] {
                    if let value = entry.value { settings[entry.key] = value }
                }
            }
        }
        sinks = sinkNames.sorted { $0.key < $1.key }.map {
            Sink(name: $0.value, portLatencies: latencies[$0.key] ?? [])
        }
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
    public func playbackLatencyMicroseconds(ofSink name: String, recorderBlockMilliseconds blockMilliseconds: Int)
        -> Int?
    {
        guard let sink = sinks.first(where: { $0.name == name }), !sink.portLatencies.isEmpty else { return nil }
        let quantum = Double(quantum(recorderBlockMilliseconds: blockMilliseconds))
        return sink.portLatencies.map { latency in
            let samples = latency.quanta * quantum + Double(latency.samples)
            return Int((samples * 1e6 / Double(rate) + Double(latency.nanoseconds) / 1e3).rounded())
        }.max()
    }

}

/// The parts of a `pw-dump` object read here; everything else in it is skipped.
private struct DumpObject: Decodable {
    var id: Int?
    var type: String
    var info: Info?
    /// A metadata object's own properties (its `metadata.name`).
    var props: Properties?
    /// A metadata object's entries.
    var metadata: [MetadataEntry]?

    struct Info: Decodable {
        /// A port's direction, `input` or `output`.
        var direction: String?
        var props: Properties?
        /// The `Latency` parameters of direction `Input`.
        var latencies: [PipeWireGraph.PortLatency]

        private enum CodingKeys: String, CodingKey { case direction, props, params }
        private struct Params: Decodable {
            var latency: [Latency]?
            private enum CodingKeys: String, CodingKey { case latency = "Latency" }
        }
        private struct Latency: Decodable {
            var direction: String
            var minQuantum: Double?
            var minRate: Int?
            var minNs: Int?
        }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            direction = try? container.decode(String.self, forKey: .direction)
            props = try? container.decode(Properties.self, forKey: .props)
            let params = try? container.decode(Params.self, forKey: .params)
            latencies = (params?.latency ?? []).filter { $0.direction == "Input" }.map {
                PipeWireGraph.PortLatency(
                    quanta: max(0, $0.minQuantum ?? 0), samples: max(0, $0.minRate ?? 0),
                    nanoseconds: max(0, $0.minNs ?? 0))
            }
        }
    }

    /// The few properties read; values of other types under these names count as absent.
    struct Properties: Decodable {
        var nodeName: String?
        var mediaClass: String?
        var nodeID: Int?
        var metadataName: String?

        private enum CodingKeys: String, CodingKey {
            case nodeName = "node.name", mediaClass = "media.class", nodeID = "node.id", metadataName = "metadata.name"
        }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            nodeName = try? container.decode(String.self, forKey: .nodeName)
            mediaClass = try? container.decode(String.self, forKey: .mediaClass)
            nodeID = try? container.decode(Int.self, forKey: .nodeID)
            metadataName = try? container.decode(String.self, forKey: .metadataName)
        }
    }

    struct MetadataEntry: Decodable {
        var key: String
        /// The value when it is a whole number (pw-dump writes settings as numbers).
        var value: Int?

        private enum CodingKeys: String, CodingKey { case key, value }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            key = try container.decode(String.self, forKey: .key)
            value = try? container.decode(Int.self, forKey: .value)
        }
    }

    private enum CodingKeys: String, CodingKey { case id, type, info, props, metadata }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        id = try? container.decode(Int.self, forKey: .id)
        type = (try? container.decode(String.self, forKey: .type)) ?? ""
        info = try? container.decode(Info.self, forKey: .info)
        props = try? container.decode(Properties.self, forKey: .props)
        metadata = try? container.decode([MetadataEntry].self, forKey: .metadata)
    }
}
