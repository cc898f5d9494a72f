import Foundation
import LightOrganCore
import LightOrganServices
import LightOrganTestSupport
import NIOCore
import NIOEmbedded
import Synchronization
import Testing

/// What Home Assistant changes through ``ReceiverControl`` (the page's own path): the lights' switch, the palette,
/// the wiring check of every part, the snapshot its entities show; and a page told of a frame may read the status.
@Suite("ReceiverControl for Home Assistant: the lights' switch, the palette, the wiring check, the snapshot")
struct HomeControlTests {
    let lit = LevelFrame(bass: 200, mid: 100, treble: 0)

    @Test("receiver.lights off shows every frame dark at once and after; on lets the next frame through; kept")
    func lightsSwitch() throws {
        let receiver = try PageReceiver()
        defer { receiver.finish() }
        try receiver.sendFrame(lit)
        #expect(receiver.control.set("receiver.lights", to: "off") == .success("off"))
        #expect(receiver.output.frames == [lit, .off], "dark at once, not at the next frame")
        try receiver.sendFrame(lit)
        #expect(receiver.output.frames.last == .off)
        #expect(receiver.control.homeSnapshot().lightsOn == false)
        #expect(receiver.pageFileText?.contains("  lights: off\n") == true)
        #expect(receiver.control.set("receiver.lights", to: "on") == .success("on"))
        try receiver.sendFrame(lit)
        #expect(receiver.output.frames.last == lit)
    }

    @Test("a palette chosen in Home Assistant reaches the strip")
    func palette() throws {
        let receiver = try PageReceiver()
        defer { receiver.finish() }
        #expect(
            receiver.control.set("receiver.strip.palette", to: "red, amber, white") == .success("red, amber, white"))
        let palette = try #require(Palette(parsing: "red, amber, white"))
        #expect(receiver.output.events.withLock { $0.contains(.change(.stripPalette(palette))) })
        #expect(receiver.control.homeSnapshot().palette == "red, amber, white")
    }

    @Test("the wiring check's button lights each line alone in turn, then ends dark")
    func checkEveryPart() throws {
        let receiver = try PageReceiver()
        defer { receiver.finish() }
        receiver.control.checkEveryPart()
        var lit: [Int?] = []
        let start = receiver.loop.now
        for step in 0...PageReceiver.lines.count {
            receiver.loop.advanceTime(to: start + TimeAmount(ReceiverControl.checkStep * step))
            lit.append(receiver.tap.checking?.offset)
        }
        #expect(lit == [17, 27, 22, nil])
    }

    @Test("the snapshot names who drives the lights, the frame rate and the levels shown")
    func snapshot() throws {
        let receiver = try PageReceiver()
        defer { receiver.finish() }
        #expect(receiver.control.homeSnapshot().driver == "nobody")
        try receiver.sendFrame(lit)
        let snapshot = receiver.control.homeSnapshot()
        #expect(snapshot.driver == "192.168.1.20")
        #expect(snapshot.levels == lit)
        #expect(snapshot.sound == "network" && snapshot.brightness == 100 && snapshot.lightsOn)
    }

    @Test("a page told of a frame may read the status: it is told after the switchboard has let go of its lock")
    func watcherReadsStatus() throws {
        let receiver = try PageReceiver()
        defer { receiver.finish() }
        let seen = Mutex<[String?]>([])
        receiver.tap.watch(ObjectIdentifier(HomeControlTests.self)) { [control = receiver.control] in
            // A page's write can make TLS hand over the page's own waiting message, whose reply is the status.
            let sender = control.status().sender?.address
            seen.withLock { $0.append(sender) }
        }
        try receiver.sendFrame(lit)
        receiver.loop.run()
        #expect(seen.withLock { $0 } == ["192.168.1.20"])
    }
}
