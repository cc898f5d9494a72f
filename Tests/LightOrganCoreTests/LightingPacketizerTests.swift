import LightOrganCore
import Testing

/// A patch of one target (`sacn://10.0.0.9`, …) with `fixtures`, which must place.
func patch(_ target: String, _ fixtures: [Fixture]? = nil) throws -> LightingPatch {
    let device = try LightingTarget(parsing: target)
    return try LightingPatch(target: device, fixtures: fixtures ?? [Fixture(name: "f", target: device.address)])
}

func fixture(
    _ layout: FixtureLayout = .dimmers, universe: Int = 1, address: Int = 1, pixels: Int = 30, gamma: Double = 1,
    on target: String = "sacn://10.0.0.9:5568", name: String = "f"
) -> Fixture {
    var fixture = Fixture(name: name, target: target)
    fixture.layout = layout
    fixture.universe = universe
    fixture.address = address
    fixture.pixels = pixels
    fixture.gamma = gamma
    return fixture
}

let testSource = LightingSource(cid: Array(1...16), name: "lightorgan test")

func big16(_ bytes: [UInt8], _ offset: Int) -> Int { Int(bytes[offset]) << 8 | Int(bytes[offset + 1]) }

@Suite("Lighting packets: E1.31, Art-Net, DDP byte layouts")
struct LightingPacketizerTests {
    @Test("an sACN data packet has the E1.31 layers at their offsets, with the channels after start code 0")
    func e131Layout() throws {
        var renderer = FixtureRenderer(patch: try patch("sacn://10.0.0.9?priority=150", [fixture(address: 1)]))
        var packetizer = LightingPacketizer(for: renderer, source: testSource, priority: 150)
        renderer.render(LevelFrame(bass: 10, mid: 20, treble: 30))
        packetizer.encode(renderer)
        #expect(packetizer.packetCount == 1)
        let bytes = packetizer.packets[0].bytes
        #expect(bytes.count == 126 + 4)  // 3 channels, rounded up to 4
        #expect(big16(bytes, 0) == 0x0010)
        #expect(Array(bytes[4..<16]) == Array("ASC-E1.17".utf8) + [0, 0, 0])
        #expect(big16(bytes, 16) == 0x7000 | (bytes.count - 16))
        #expect(Array(bytes[18..<22]) == [0, 0, 0, 4])
        #expect(Array(bytes[22..<38]) == testSource.cid)
        #expect(big16(bytes, 38) == 0x7000 | (bytes.count - 38))
        #expect(Array(bytes[40..<44]) == [0, 0, 0, 2])
        #expect(String(decoding: bytes[44..<108].prefix { $0 != 0 }, as: UTF8.self) == "lightorgan test")
        #expect(bytes[108] == 150)
        #expect(bytes[111] == 1)  // sequence
        #expect(bytes[112] == 0)  // options
        #expect(big16(bytes, 113) == 1)  // universe
        #expect(big16(bytes, 115) == 0x7000 | (bytes.count - 115))
        #expect(bytes[117] == 2 && bytes[118] == 0xa1)
        #expect(big16(bytes, 119) == 0 && big16(bytes, 121) == 1)
        #expect(big16(bytes, 123) == 4 + 1)
        #expect(Array(bytes[125...]) == [0, 10, 20, 30, 0])
    }

    @Test("sACN sequence numbers count per universe and wrap; terminated packets set option 0x40")
    func e131SequenceAndTermination() throws {
        let renderer = FixtureRenderer(patch: try patch("sacn://multicast", [fixture(universe: 7)]))
        var packetizer = LightingPacketizer(for: renderer, source: testSource, priority: 100)
        for _ in 0..<256 { packetizer.encode(renderer) }
        #expect(packetizer.packets[0].bytes[111] == 0)  // 256 packets: wrapped to 0
        #expect(packetizer.packets[0].universe == 7)
        packetizer.encode(renderer, terminated: true)
        #expect(packetizer.packets[0].bytes[111] == 1)
        #expect(packetizer.packets[0].bytes[112] == 0x40)
    }

    @Test("an ArtDmx packet carries the 15-bit port-address, a sequence 1…255 and an even big-endian length")
    func artDmxLayout() throws {
        var renderer = FixtureRenderer(
            patch: try patch(
                "artnet://10.0.0.9", [fixture(.rgbw, universe: 0x123, address: 2, on: "artnet://10.0.0.9:6454")]))
        var packetizer = LightingPacketizer(for: renderer, source: testSource, priority: 100)
        renderer.render(LevelFrame(bass: 255, mid: 0, treble: 0))
        packetizer.encode(renderer)
        let bytes = packetizer.packets[0].bytes
        #expect(Array(bytes[0..<8]) == Array("Art-Net".utf8) + [0])
        #expect(bytes[8] == 0x00 && bytes[9] == 0x50)
        #expect(bytes[10] == 0 && bytes[11] == 14)
        #expect(bytes[12] == 1)
        #expect(bytes[14] == 0x23 && bytes[15] == 0x01)
        #expect(big16(bytes, 16) == 6)  // channels 2…5 used: 5, rounded up to 6
        #expect(Array(bytes[18...]) == [0, 255, 0, 0, 0, 0])
        for _ in 0..<255 { packetizer.encode(renderer) }
        #expect(packetizer.packets[0].bytes[12] == 1)  // 256th packet: 255 wrapped to 1, never 0
    }

    @Test("DDP splits 600 pixels into 1440 + 360 bytes at their byte offsets, pushing only the last")
    func ddpLayout() throws {
        let target = "ddp://10.0.0.9"
        var renderer = FixtureRenderer(
            patch: try patch(target, [fixture(.blend, pixels: 600, on: "ddp://10.0.0.9:4048")]))
        var packetizer = LightingPacketizer(for: renderer, source: testSource, priority: 100)
        renderer.render(LevelFrame(bass: 0, mid: 255, treble: 0))
        packetizer.encode(renderer)
        #expect(packetizer.packetCount == 2)
        let first = packetizer.packets[0].bytes
        let last = packetizer.packets[1].bytes
        #expect(first[0] == 0x40 && last[0] == 0x41)
        #expect(first[1] == 1 && last[1] == 2)  // every packet its own number
        #expect(first[2] == 0x0b && first[3] == 1)
        #expect(Array(first[4..<8]) == [0, 0, 0, 0] && big16(first, 8) == 1440 && first.count == 1450)
        #expect(Array(last[4..<8]) == [0, 0, 0x05, 0xa0] && big16(last, 8) == 360 && last.count == 370)
        #expect(Array(last[10..<13]) == [0, 255, 0])
        for _ in 0..<7 { packetizer.encode(renderer) }
        #expect(packetizer.packets[0].bytes[1] == 15 && packetizer.packets[1].bytes[1] == 1)  // 1…15, then 1 again
    }

    @Test("the CID stays the same for a machine and role, differs between roles, and is a version-8 UUID")
    func stableIdentifier() {
        let send = LightingSource.stableIdentifier(machine: "0123abcd", role: "send")
        #expect(send == LightingSource.stableIdentifier(machine: "0123abcd", role: "send"))
        #expect(send != LightingSource.stableIdentifier(machine: "0123abcd", role: "receive"))
        #expect(send != LightingSource.stableIdentifier(machine: "0123abce", role: "send"))
        #expect(send.count == 16 && send[6] >> 4 == 8 && send[8] >> 6 == 2)
    }
}

@Suite("Fixtures: rendering and placing")
struct FixtureTests {
    func render(_ fixture: Fixture, _ frame: LevelFrame, target: String = "sacn://10.0.0.9") throws -> FixtureRenderer {
        var renderer = FixtureRenderer(patch: try patch(target, [fixture]))
        renderer.render(frame)
        return renderer
    }

    @Test("dimmers show bass, mid, treble on three channels, through the fixture's gamma")
    func dimmers() throws {
        let linear = try render(fixture(.dimmers, address: 5), LevelFrame(bass: 200, mid: 128, treble: 0))
        #expect(Array(linear.buffers[0][4..<7]) == [200, 128, 0])
        #expect(linear.buffers[0][0..<4].allSatisfy { $0 == 0 })
        let corrected = try render(fixture(.dimmers, gamma: 2.2), LevelFrame(bass: 255, mid: 128, treble: 64))
        #expect(Array(corrected.buffers[0][0..<3]) == [255, 56, 12])  // 255·(level/255)^2.2
    }

    @Test("rgb mixes the bands' colours in light; rgbw moves what the three share to white")
    func colours() throws {
        let rgb = try render(fixture(.rgb), LevelFrame(bass: 255, mid: 128, treble: 0))
        #expect(Array(rgb.buffers[0][0..<3]) == [255, 128, 0])
        var warm = fixture(.rgbw)
        warm.palette = try #require(Palette(parsing: "#ff8000, white, blue"))
        let rgbw = try render(warm, LevelFrame(bass: 255, mid: 51, treble: 0))
        // red 255+51, green 128+51, blue 51 → clipped 255, 179, 51; white takes 51.
        #expect(Array(rgbw.buffers[0][0..<4]) == [204, 128, 0, 51])
    }

    @Test("segments light a strip's thirds in the bands' colours, bass first")
    func segments() throws {
        let strip = try render(fixture(.segments, pixels: 6), LevelFrame(bass: 255, mid: 0, treble: 102))
        #expect(Array(strip.buffers[0][0..<18]) == [255, 0, 0, 255, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 102, 0, 0, 102])
    }

    @Test("a strip longer than a universe goes on in the next one, 170 whole pixels each")
    func stripAcrossUniverses() throws {
        let placed = try patch("sacn://10.0.0.9", [fixture(.blend, universe: 3, address: 4, pixels: 200)])
        #expect(placed.universes == [3, 4])
        #expect(placed.spans.map(\.count) == [3 * 169, 3 * 31])
        #expect(placed.spans.map(\.channel) == [3, 0])
        let renderer = FixtureRenderer(patch: placed)
        #expect(renderer.slotCounts == [510, 94])
    }

    @Test(
        "a fixture past channel 512, out of its protocol's universes or on another's channels is refused, naming it",
        arguments: [
            ([fixture(.rgbw, address: 510)], "address", "past channel 512; allowed: 1…509 for rgbw"),
            ([fixture(universe: 0)], "universe", "is out of range 1…63999 (sACN)"),
            ([fixture(universe: 64000)], "universe", "is out of range 1…63999 (sACN)"),
            ([fixture(.blend, universe: 63999, pixels: 171)], "pixels", "runs past universe 63999, the last of sACN"),
            (
                [fixture(name: "a"), fixture(.rgb, address: 3, name: "b")], "address",
                "which a already uses (1…3); move one of them (address, universe) or shorten it"
            ),
        ])
    func refusals(fixtures: [Fixture], field: String, message: String) throws {
        do {
            _ = try patch("sacn://10.0.0.9", fixtures)
            Issue.record("placed; expected \(message)")
        } catch let problem as LightingPatch.Problem {
            #expect(problem.field == field)
            #expect(problem.text.hasSuffix(message), "got: \(problem.text)")
        }
    }

    @Test("Art-Net has universe 0, and two fixtures on different universes share nothing")
    func artNetUniverseZero() throws {
        let placed = try patch(
            "artnet://10.0.0.9",
            [
                fixture(universe: 0, on: "artnet://10.0.0.9:6454", name: "a"),
                fixture(universe: 1, on: "artnet://10.0.0.9:6454", name: "b"),
            ])
        #expect(placed.universes == [0, 1])
    }

    @Test("every strip layout draws the strip effect of its name; dimmers and colours are none; beat effects are none")
    func layoutsAndEffects() {
        let ofTheLevels = StripEffect.allCases.filter { !$0.followsBeat }
        for effect in ofTheLevels {
            #expect(FixtureLayout(rawValue: effect.rawValue)?.stripEffect == effect)
        }
        #expect(StripEffect.allCases.filter(\.followsBeat).allSatisfy { FixtureLayout(rawValue: $0.rawValue) == nil })
        #expect(FixtureLayout.allCases.filter(\.isStrip).count == ofTheLevels.count)
        #expect([FixtureLayout.dimmers, .rgb, .rgbw].allSatisfy { !$0.isStrip })
    }
}
