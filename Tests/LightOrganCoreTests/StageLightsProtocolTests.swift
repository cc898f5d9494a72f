import LightOrganCore
import Testing

@Suite("Stage lights: E1.31 synchronization, DDP pixel types, ArtPollReply, the patch check")
struct StageLightsProtocolTests {
    @Test(
        "?sync=N: data packets carry the sync universe and each frame ends with a 49-byte E1.31 synchronization packet")
    func e131Synchronization() throws {
        let target = "sacn://multicast?sync=9"
        var renderer = FixtureRenderer(
            patch: try patch(target, [fixture(.segments, universe: 1, pixels: 200, on: "sacn://multicast:5568")]))
        var packetizer = LightingPacketizer(for: renderer, source: testSource, priority: 100)
        renderer.render(LevelFrame(bass: 255, mid: 255, treble: 255))
        packetizer.encode(renderer)
        #expect(packetizer.packetCount == 3)  // universes 1 and 2, then the synchronization packet
        let packets = packetizer.packets.prefix(packetizer.packetCount)
        #expect(packets.map(\.universe) == [1, 2, 9])
        #expect(packets.prefix(2).allSatisfy { big16($0.bytes, 109) == 9 })
        let sync = packets.last!.bytes
        #expect(sync.count == 49)
        #expect(big16(sync, 0) == 0x0010 && Array(sync[4..<16]) == Array("ASC-E1.17".utf8) + [0, 0, 0])
        #expect(big16(sync, 16) == 0x7000 | 33)
        #expect(Array(sync[18..<22]) == [0, 0, 0, 8])  // VECTOR_ROOT_E131_EXTENDED
        #expect(Array(sync[22..<38]) == testSource.cid)
        #expect(big16(sync, 38) == 0x7000 | 11)
        #expect(Array(sync[40..<44]) == [0, 0, 0, 1])  // VECTOR_E131_EXTENDED_SYNCHRONIZATION
        #expect(sync[44] == 1 && big16(sync, 45) == 9 && sync[47] == 0 && sync[48] == 0)
        packetizer.encode(renderer)
        #expect(packetizer.packets[2].bytes[44] == 2)  // its own sequence
        packetizer.encode(renderer, terminated: true)
        #expect(packetizer.packetCount == 2)  // no synchronization after a terminated stream
    }

    @Test("without ?sync the data packets say 0 and no synchronization packet follows")
    func noSynchronization() throws {
        var renderer = FixtureRenderer(patch: try patch("sacn://10.0.0.9", [fixture()]))
        var packetizer = LightingPacketizer(for: renderer, source: testSource, priority: 100)
        renderer.render(.off)
        packetizer.encode(renderer)
        #expect(packetizer.packetCount == 1 && big16(packetizer.packets[0].bytes, 109) == 0)
    }

    @Test("DDP: RGB pixels typed 0x0B, a device of rgbw fixtures typed 0x1B (RGBW, 8 bits)")
    func ddpDataTypes() throws {
        let rgb = FixtureRenderer(patch: try patch("ddp://10.0.0.9", [fixture(.segments, on: "ddp://10.0.0.9:4048")]))
        let rgbw = FixtureRenderer(
            patch: try patch(
                "ddp://10.0.0.9",
                [
                    fixture(.rgbw, on: "ddp://10.0.0.9:4048", name: "a"),
                    fixture(.rgbw, address: 5, on: "ddp://10.0.0.9:4048", name: "b"),
                ]))
        #expect(LightingPacketizer(for: rgb, source: testSource, priority: 100).packets[0].bytes[2] == 0x0b)
        let packets = LightingPacketizer(for: rgbw, source: testSource, priority: 100).packets
        #expect(packets[0].bytes[2] == 0x1b && packets[0].bytes.count == 10 + 8)
    }

    @Test("DDP refuses an address inside a pixel and rgbw beside 3-byte pixels, naming the field")
    func ddpPixelChecks() throws {
        #expect(throws: LightingPatch.Problem.self) {
            try patch("ddp://10.0.0.9", [fixture(.segments, address: 2, on: "ddp://10.0.0.9:4048")])
        }
        do {
            _ = try patch(
                "ddp://10.0.0.9",
                [
                    fixture(.rgbw, on: "ddp://10.0.0.9:4048", name: "a"),
                    fixture(.segments, address: 7, on: "ddp://10.0.0.9:4048", name: "b"),
                ])
            Issue.record("rgbw beside segments on one DDP device was accepted")
        } catch let error as LightingPatch.Problem {
            #expect(error.fixture == "b" && error.field == "layout")
        }
        _ = try patch("ddp://10.0.0.9", [fixture(.rgbw, address: 5, on: "ddp://10.0.0.9:4048")])
    }

    @Test("an ArtPollReply gives the node's address, names and output port-addresses; ArtPoll is Art-Net 4's 14 bytes")
    func artPollReply() throws {
        #expect(ArtNetNode.poll == Array("Art-Net".utf8) + [0, 0x00, 0x20, 0, 14, 0, 0])
        var reply = [UInt8](repeating: 0, count: 239)
        reply.replaceSubrange(0..<8, with: Array("Art-Net".utf8) + [0])
        reply[8] = 0x00
        reply[9] = 0x21
        reply.replaceSubrange(10..<14, with: [10, 0, 0, 60])
        reply[18] = 1  // net 1
        reply[19] = 2  // sub-net 2
        reply.replaceSubrange(26..<30, with: Array("node".utf8))
        reply.replaceSubrange(44..<53, with: Array("long name".utf8))
        reply[173] = 3  // three ports
        reply[174] = 0x80  // outputs
        reply[175] = 0x40  // input only
        reply[176] = 0xc0  // both
        reply[190] = 5
        reply[191] = 6
        reply[192] = 7
        let node = try #require(ArtNetNode(reply: reply, sender: "10.0.0.99"))
        #expect(node.address == "10.0.0.60" && node.shortName == "node" && node.longName == "long name")
        #expect(node.outputUniverses == [1 << 8 | 2 << 4 | 5, 1 << 8 | 2 << 4 | 7])
        #expect(node.outputs(anyOf: [295]) && !node.outputs(anyOf: [1]))
        reply.replaceSubrange(10..<14, with: [0, 0, 0, 0])
        #expect(ArtNetNode(reply: reply, sender: "10.0.0.99")?.address == "10.0.0.99")
        reply[9] = 0x50  // ArtDmx, not a reply
        #expect(ArtNetNode(reply: reply, sender: "10.0.0.99") == nil)
        #expect(ArtNetNode(reply: Array(reply.prefix(100)), sender: "x") == nil)
    }

    @Test(
        "the patch check lights dimmers and segments band by band, a colour fixture whole, and names where each lands")
    func patchCheckSteps() throws {
        let target = "sacn://10.0.0.60:5568"
        var wash = fixture(.dimmers, address: 10, on: target, name: "wash")
        wash.gamma = 2.2
        let strip = fixture(.segments, universe: 2, address: 500, pixels: 9, on: target, name: "strip")
        let spot = fixture(.rgbw, address: 20, on: target, name: "spot")
        let check = PatchCheck(try patch("sacn://10.0.0.60", [wash, strip, spot]))
        #expect(
            check.steps.map(\.label) == [
                "wash bass: sACN universe 1, channel 10 at 10.0.0.60",
                "wash mid: sACN universe 1, channel 11 at 10.0.0.60",
                "wash treble: sACN universe 1, channel 12 at 10.0.0.60",
                "strip bass segment: sACN universe 2, channels 500–508 at 10.0.0.60",
                "strip mid segment: sACN universe 2, channels 509–511; universe 3, channels 1–6 at 10.0.0.60",
                "strip treble segment: sACN universe 3, channels 7–15 at 10.0.0.60",
                "spot: sACN universe 1, channels 20–23 at 10.0.0.60",
            ])
        var renderer = FixtureRenderer(patch: try patch("sacn://10.0.0.60", [wash, strip, spot]))
        renderer.render(LevelFrame(bass: 255, mid: 255, treble: 255))
        renderer.render(check.steps[1])
        #expect(renderer.buffers[0][9..<12] == [0, 255, 0])
        #expect(renderer.buffers[0][19..<23].allSatisfy { $0 == 0 })
        renderer.render(check.steps[4])
        #expect(
            renderer.buffers[1][508..<511].allSatisfy { $0 == 255 }
                && renderer.buffers[1][499..<508].allSatisfy { $0 == 0 })
        #expect(renderer.buffers[2][0..<6].allSatisfy { $0 == 255 } && renderer.buffers[2][6] == 0)
    }

    @Test("a bare target's fixture is named by the place alone; DDP says bytes and pixels from 0")
    func patchCheckOfBareTargets() throws {
        #expect(PatchCheck(try patch("sacn://10.0.0.9")).steps.count == 3)
        let ddp = try LightingTarget(parsing: "ddp://wled.local")
        var strip = Fixture(name: ddp.address, target: ddp.address)
        strip.layout = .blend
        strip.pixels = 30
        let check = PatchCheck(try LightingPatch(target: ddp, fixtures: [strip]))
        #expect(check.steps.map(\.label) == ["all: DDP bytes 1–90 (pixels 0–29) at wled.local"])
    }
}
