import LightOrganCore
import Testing

@Suite("PipeWire's own word on a sink's latency (pw-dump)")
struct PipeWireGraphTests {
    /// A pw-dump of a graph trimmed to what matters: the settings metadata, a Bluetooth sink (its
    /// delay in nanoseconds on both input ports), a sound card sink (one quantum plus 256 samples
    /// of headroom), a null sink (no latency stated) and the Bluetooth sink's monitor port (an
    /// output port: not the sink's playback latency).
    func dump(rate: Int = 48_000, forceQuantum: Int = 0) -> String {
        """
        [
          { "id": 31, "type": "PipeWire:Interface:Metadata", "props": { "metadata.name": "settings" },
            "metadata": [ { "subject": 0, "key": "clock.rate", "type": "", "value": \(rate) },
                          { "subject": 0, "key": "clock.min-quantum", "type": "", "value": 32 },
                          { "subject": 0, "key": "clock.max-quantum", "type": "", "value": 2048 },
                          { "subject": 0, "key": "clock.force-quantum", "type": "", "value": \(forceQuantum) } ] },
          { "id": 50, "type": "PipeWire:Interface:Node",
            "info": { "props": { "node.name": "bluez_output.00_1B_66_AA_BB_CC.1", "media.class": "Audio/Sink" }, "params": {} } },
          \(port(id: 51, node: 50, direction: "input", ns: 182_000_000)),
          \(port(id: 52, node: 50, direction: "input", ns: 180_000_000)),
          \(port(id: 53, node: 50, direction: "output", ns: 999_000_000)),
          { "id": 60, "type": "PipeWire:Interface:Node",
            "info": { "props": { "node.name": "alsa_output.pci-0000_00_1f.3.analog-stereo", "media.class": "Audio/Sink" } } },
          \(port(id: 61, node: 60, direction: "input", quanta: 1, samples: 256)),
          { "id": 70, "type": "PipeWire:Interface:Node",
            "info": { "props": { "node.name": "speakers", "media.class": "Audio/Sink" } } },
          { "id": 80, "type": "PipeWire:Interface:Node",
            "info": { "props": { "node.name": "firefox", "media.class": "Stream/Output/Audio" } } },
          \(port(id: 81, node: 80, direction: "input", ns: 5_000_000))
        ]
        """
    }

    func port(id: Int, node: Int, direction: String, quanta: Double = 0, samples: Int = 0, ns: Int = 0) -> String {
        """
        { "id": \(id), "type": "PipeWire:Interface:Port",
          "info": { "direction": "\(direction)", "props": { "node.id": \(node) },
                    "params": { "Latency": [
                      { "direction": "Input", "minQuantum": \(quanta), "maxQuantum": \(quanta), "minRate": \(samples), "maxRate": \(samples), "minNs": \(ns), "maxNs": \(ns) },
                      { "direction": "Output", "minQuantum": 9.0, "maxQuantum": 9.0, "minRate": 0, "maxRate": 0, "minNs": 777000000, "maxNs": 777000000 } ] } } }
        """
    }

    @Test("a Bluetooth sink: the largest of its input ports' delays, whatever the quantum")
    func bluetooth() throws {
        let graph = try #require(PipeWireGraph(dump: dump()))
        for blocks in [10, 40] {
            #expect(
                graph.playbackLatencyMicroseconds(
                    ofSink: "bluez_output.00_1B_66_AA_BB_CC.1", recorderBlockMilliseconds: blocks) == 182_000)
        }
    }

    @Test("a sound card sink: one quantum (set by the recorder's blocks) plus its headroom")
    func soundCard() throws {
        let graph = try #require(PipeWireGraph(dump: dump()))
        let card = "alsa_output.pci-0000_00_1f.3.analog-stereo"
        // 10 ms at 48 kHz asks for 480 samples: quantum 256; 40 ms: 1920 → 1024.
        #expect(graph.quantum(recorderBlockMilliseconds: 10) == 256)
        #expect(graph.playbackLatencyMicroseconds(ofSink: card, recorderBlockMilliseconds: 10) == 10_667, "512 samples")
        #expect(
            graph.playbackLatencyMicroseconds(ofSink: card, recorderBlockMilliseconds: 40) == 26_667, "1 280 samples")
        let forced = try #require(PipeWireGraph(dump: dump(rate: 44_100, forceQuantum: 64)))
        #expect(forced.rate == 44_100)
        #expect(
            forced.playbackLatencyMicroseconds(ofSink: card, recorderBlockMilliseconds: 40)
                == Int((320.0 * 1e6 / 44_100).rounded()))
    }

    @Test("no answer for a sink that states no latency, a stream, an unknown name, or text that is not pw-dump's")
    func unknown() throws {
        let graph = try #require(PipeWireGraph(dump: dump()))
        #expect(graph.playbackLatencyMicroseconds(ofSink: "speakers", recorderBlockMilliseconds: 10) == nil)
        #expect(graph.playbackLatencyMicroseconds(ofSink: "firefox", recorderBlockMilliseconds: 10) == nil)
        #expect(graph.playbackLatencyMicroseconds(ofSink: "nowhere", recorderBlockMilliseconds: 10) == nil)
        #expect(PipeWireGraph(dump: "Connection failure: Connection refused") == nil)
        #expect(PipeWireGraph(dump: "{\"not\": \"an array\"}") == nil)
    }
}
