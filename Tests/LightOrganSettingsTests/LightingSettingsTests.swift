import LightOrganCore
import LightOrganSettings
import Testing

@Suite("Settings: lighting targets and fixtures")
struct LightingSettingsTests {
    func load(_ yaml: String, options: [String: (value: String, option: String)] = [:]) async throws -> Settings {
        let file = try TemporarySettingsFile(yaml)
        return try await SettingsLoader(options: options, environment: [:]).load(configPath: file.path).settings
    }

    func expectError(_ message: String, _ yaml: String, sourceLocation: SourceLocation = #_sourceLocation) async {
        do {
            _ = try await load(yaml)
            Issue.record("no error; expected \(message)", sourceLocation: sourceLocation)
        } catch {
            #expect("\(error)".hasSuffix(message), "got: \(error)", sourceLocation: sourceLocation)
        }
    }

    @Test("sender.hosts mixes receivers and lighting targets; a bare target gets dimmers at universe 1, address 1")
    func hostsMixReceiversAndTargets() async throws {
        let settings = try await load("sender:\n  hosts: [sacn://192.168.1.60, ddp://wled-kitchen.local, pi.local]\n")
        #expect(settings.sender.receivers == [Endpoint(host: "pi.local", port: 8181)])
        #expect(!settings.sender.discoversReceiver)
        #expect(
            settings.sender.lighting.map(\.target.address) == [
                "sacn://192.168.1.60:5568", "ddp://wled-kitchen.local:4048",
            ])
        let dimmers = settings.sender.lighting[0].fixtures[0]
        #expect(dimmers.layout == .dimmers && dimmers.universe == 1 && dimmers.address == 1 && dimmers.gamma == 2.2)
        #expect(settings.sender.lighting[0].target.rate == 44)
        #expect(settings.sender.lighting[1].fixtures[0].layout == .segments)
        #expect(settings.sender.lighting[1].target.rate == 100)
    }

    @Test("a target alone drives no receiver; `auto` among the hosts finds one by DNS-SD")
    func lightingOnly() async throws {
        let alone = try await load("sender:\n  hosts: [artnet://broadcast?universe=0&layout=rgb]\n")
        #expect(alone.sender.receivers.isEmpty && !alone.sender.discoversReceiver)
        #expect(alone.sender.lighting[0].fixtures[0].layout == .rgb)
        let both = try await load("sender:\n  hosts: [auto, sacn://multicast]\n")
        #expect(both.sender.discoversReceiver && both.sender.receivers.isEmpty)
    }

    @Test("fixtures under fixtures: are laid out on their target, several on one device and universe")
    func fixturesFromTheFile() async throws {
        let settings = try await load(
            """
            receiver:
              forward: [sacn://10.0.0.9?rate=30]
            fixtures:
              wash:
                target: sacn://10.0.0.9
                layout: rgbw
                address: 10
                palette: [amber, "#00ff80", blue]
              strip:
                target: sacn://10.0.0.9
                universe: 2
                layout: segments
                pixels: 170
                gamma: 1
            """)
        let forward = try #require(settings.receiver.forward.first)
        #expect(forward.target.rate == 30)
        #expect(forward.fixtures.map(\.name) == ["strip", "wash"])
        #expect(forward.universes == [1, 2])
        let mid = forward.fixtures[1].palette.colors[1]
        #expect([mid.red, mid.green, mid.blue] == [0, 255, 128])
        #expect(settings.warnings.isEmpty)
    }

    @Test("a fixture whose target no list names stops the command, naming the devices it could mean")
    func unusedFixture() async throws {
        await expectError(
            "fixtures.wash.target = sacn://10.0.0.9 is in neither sender.hosts nor receiver.forward, so nothing would drive the fixture; add it to one of them",
            "fixtures:\n  wash:\n    target: sacn://10.0.0.9\n")
        await expectError(
            "fixtures.wash.target = sacn://10.0.0.8 is in neither sender.hosts nor receiver.forward, so nothing would drive the fixture; allowed: one of sacn://10.0.0.9:5568, or add it to a list",
            "sender:\n  hosts: [sacn://10.0.0.9]\nfixtures:\n  wash:\n    target: sacn://10.0.0.8\n")
    }

    @Test(
        "lighting.interface goes to multicast, broadcast and artnet://auto targets without their own; unicast keeps its route"
    )
    func lightingInterface() async throws {
        let settings = try await load(
            """
            sender:
              hosts: [sacn://multicast, "artnet://broadcast?interface=eth2", artnet://auto, sacn://10.0.0.9, "sacn://10.0.0.8?sync=7"]
            lighting:
              interface: eth1
            """)
        #expect(settings.sender.lighting.map(\.target.interface) == ["eth1", "eth2", "eth1", "", ""])
        #expect(settings.sender.lighting.map(\.target.syncUniverse) == [nil, nil, nil, nil, 7])
        await expectError(
            "lighting.interface = eth/1 is not allowed; allowed: empty, or 1…15 characters without /, : or spaces (eth0, wlan0; `ip link` lists them)",
            "lighting:\n  interface: eth/1\n")
    }

    @Test("a setting that would mean nothing on its protocol or layout is refused")
    func inapplicableSettings() async {
        await expectError(
            "sender.hosts = ddp://10.0.0.9?universe=2 is not allowed: `ddp://10.0.0.9?universe=2`: universe does not apply to DDP, which has one byte space per device; allowed after ?: rate, interface, address, layout, pixels, gamma",
            "sender:\n  hosts: [ddp://10.0.0.9?universe=2]\n")
        await expectError(
            "sender.hosts = sacn://10.0.0.9?pixels=30 has sacn://10.0.0.9:5568 with pixels=30, which applies to the strip layouts (segments, blend) only; the dimmers layout has 3 channels",
            "sender:\n  hosts: [sacn://10.0.0.9?pixels=30]\n")
        await expectError(
            "fixtures.wash.universe = 2 does not apply to DDP, which has one byte space per device; address says where the fixture starts",
            "sender:\n  hosts: [ddp://10.0.0.9]\nfixtures:\n  wash:\n    target: ddp://10.0.0.9\n    universe: 2\n")
        await expectError(
            "fixtures.wash.palette = red, green, blue applies to the colour layouts (rgb, rgbw, segments, blend) only; dimmers are three plain channels",
            "sender:\n  hosts: [sacn://10.0.0.9]\nfixtures:\n  wash:\n    target: sacn://10.0.0.9\n    palette: red, green, blue\n"
        )
        await expectError(
            "sender.hosts = ddp://10.0.0.9?address=2 has ddp://10.0.0.9:4048 whose address 2 is not where a pixel starts: DDP pixels are 3 bytes; allowed: 1, 4, 7, … (pixel n starts at byte 3n+1)",
            "sender:\n  hosts: [ddp://10.0.0.9?address=2]\n")
        await expectError(
            "sender.hosts = artnet://10.0.0.9?priority=120 is not allowed: `artnet://10.0.0.9?priority=120`: unknown setting `priority` (priority is sACN's); allowed after ?: rate, interface, universe, address, layout, pixels, gamma",
            "sender:\n  hosts: [artnet://10.0.0.9?priority=120]\n")
        await expectError(
            "sender.hosts = sacn://multicast?interface=eth/0 is not allowed: `sacn://multicast?interface=eth/0`: interface=eth/0 is not a network interface's name; allowed: 1…15 characters without /, : or spaces (eth0, wlan0; `ip link` lists them)",
            "sender:\n  hosts: [sacn://multicast?interface=eth/0]\n")
        await expectError(
            "sender.hosts = sacn://10.0.0.9?sync=0 is not allowed: `sacn://10.0.0.9?sync=0`: sync=0 is not a universe; allowed: 1…63999 (the universe of the synchronization packets)",
            "sender:\n  hosts: [sacn://10.0.0.9?sync=0]\n")
    }

    @Test("bad lighting settings stop with one line naming the key, the value and what is allowed")
    func refusals() async {
        await expectError(
            "sender.hosts = dmx://10.0.0.9 is not allowed: `dmx://10.0.0.9` has the unknown scheme dmx://; allowed: sacn://, artnet://, ddp:// (or a receiver's host[:port] without a scheme)",
            "sender:\n  hosts: [dmx://10.0.0.9]\n")
        await expectError(
            "fixtures.wash.universe = 70000 is out of range 1…63999 (sACN)",
            "sender:\n  hosts: [sacn://10.0.0.9]\nfixtures:\n  wash:\n    target: sacn://10.0.0.9\n    universe: 70000\n"
        )
        await expectError(
            "fixtures.wash.address = 511 puts the dimmers layout's 3 channels at 511…513, past channel 512; allowed: 1…510 for dimmers",
            "sender:\n  hosts: [sacn://10.0.0.9]\nfixtures:\n  wash:\n    target: sacn://10.0.0.9\n    address: 511\n")
        await expectError(
            "fixtures.b.address = 2 puts channels 2…4 of universe 1 on sacn://10.0.0.9:5568, which a already uses (1…3); move one of them (address, universe) or shorten it",
            "sender:\n  hosts: [sacn://10.0.0.9]\nfixtures:\n  a:\n    target: sacn://10.0.0.9\n  b:\n    target: sacn://10.0.0.9\n    address: 2\n"
        )
        await expectError(
            "sender.hosts = sacn://10.0.0.9?universe=0 has sacn://10.0.0.9:5568 whose universe 0 is out of range 1…63999 (sACN)",
            "sender:\n  hosts: [sacn://10.0.0.9?universe=0]\n")
        await expectError(
            "fixtures.wash.layout = spots is not allowed; allowed: dimmers, rgb, rgbw, segments, blend, scroll, energy, flash",
            "sender:\n  hosts: [sacn://10.0.0.9]\nfixtures:\n  wash:\n    target: sacn://10.0.0.9\n    layout: spots\n")
        await expectError(
            "unknown key fixtures.wash.univers; did you mean fixtures.wash.universe? (a fixture has target, universe, address, layout, pixels, gamma, palette)",
            "fixtures:\n  wash:\n    target: sacn://10.0.0.9\n    univers: 2\n")
        await expectError(
            "sender.hosts = sacn://10.0.0.9?rate=500 is not allowed: `sacn://10.0.0.9?rate=500`: rate=500 is out of range 1…250 packets per second",
            "sender:\n  hosts: [sacn://10.0.0.9?rate=500]\n")
        await expectError(
            "fixtures.wash.address = 2 belongs to fixtures.wash, which has no target; add fixtures.wash.target: sacn://…, artnet://… or ddp://…",
            "fixtures:\n  wash:\n    address: 2\n")
    }
}
