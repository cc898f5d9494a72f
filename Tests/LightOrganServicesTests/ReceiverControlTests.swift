import Foundation
import LightOrganCore
import LightOrganServices
import LightOrganTestSupport
import LightOrganWeb
import NIOCore
import NIOEmbedded
import Synchronization
import Testing

@Suite("ReceiverControl: the page's settings, wiring checks, status and sound, applied to the running receiver")
struct ReceiverControlTests {
    let lit = LevelFrame(bass: 200, mid: 100, treble: 0)

    /// The message of a refusal, nil when `result` is a success.
    func refusal<Value>(_ result: Result<Value, PageRefusal>) -> String? {
        guard case .failure(let refusal) = result else { return nil }
        return refusal.message
    }

    @Test("the page may look from receiver.allow only; its key is the secret")
    func lookingAndKey() throws {
        let everyone = try PageReceiver()
        defer { everyone.finish() }
        #expect(everyone.control.mayLook("192.168.1.30"))
        let home = try PageReceiver(settings: ["receiver.allow": RawSetting("10.0.0.0/8", from: .file("test.yaml"))])
        defer { home.finish() }
        #expect(!home.control.mayLook("192.168.1.30"))
        #expect(home.control.mayLook("10.1.2.3"))
        #expect(home.control.isSecret("test-secret-0123456789"))
        #expect(!home.control.isSecret("test-secret-012345678"))
        #expect(!home.control.isSecret(""))
    }

    @Test("a brightness limit from the page applies to the next frame and is kept in the page's file")
    func brightnessApplied() throws {
        let receiver = try PageReceiver()
        defer { receiver.finish() }
        #expect(receiver.control.set("receiver.max_brightness", to: "50") == .success("50"))
        try receiver.sendFrame(lit)
        #expect(receiver.output.frames == [LevelFrame(bass: 100, mid: 50, treble: 0)])
        #expect(receiver.pageFileText?.contains("receiver:\n  max_brightness: 50\n") == true)
        let row = receiver.control.status().settings.first { $0.key == "receiver.max_brightness" }
        #expect(row?.value == "50" && row?.source == "page")
    }

    @Test("a refused value says why in the settings file's words, changes nothing and writes no file")
    func refusedValue() throws {
        let receiver = try PageReceiver()
        defer { receiver.finish() }
        #expect(
            receiver.control.set("receiver.mode", to: "blink")
                == .failure(PageRefusal("receiver.mode = blink is not allowed; allowed: pwm, onoff, bar")))
        #expect(receiver.control.status().receiver.mode == "pwm")
        #expect(receiver.pageFileText == nil)
        #expect(receiver.output.events.withLock { $0.isEmpty })
    }

    @Test("the mode and the strip's settings reach the output, the delay the delayed output")
    func settingsReachTheirParts() throws {
        let receiver = try PageReceiver()
        defer { receiver.finish() }
        #expect(receiver.control.set("receiver.mode", to: "onoff") == .success("onoff"))
        #expect(receiver.control.set("receiver.strip.effect", to: "energy") == .success("energy"))
        #expect(receiver.control.set("receiver.strip.brightness", to: "30") == .success("30"))
        #expect(
            receiver.output.events.withLock { $0 }
                == [.change(.lineMode(.onoff)), .change(.stripEffect(.energy)), .change(.stripBrightness(30))])
        #expect(receiver.control.status().receiver.mode == "onoff")
        #expect(receiver.control.set("receiver.delay", to: "250") == .success("250"))
        #expect(receiver.delayed.delay == .milliseconds(250))
    }

    @Test("a lamp timeout from the page reaches the switchboard: lit lamps go off once it has passed")
    func timeoutReachesSwitchboard() throws {
        let receiver = try PageReceiver()
        defer { receiver.finish() }
        #expect(receiver.control.set("receiver.timeout", to: "0.05") == .success("0.05"))
        try receiver.sendFrame(lit)
        usleep(80_000)
        receiver.switchboard.sweep()
        #expect(receiver.output.frames == [lit, .off])
    }

    @Test("using the file's value drops the page's: the default applies again and leaves the file")
    func useFileValue() throws {
        let receiver = try PageReceiver()
        defer { receiver.finish() }
        _ = receiver.control.set("receiver.max_brightness", to: "40")
        #expect(receiver.control.useFileValue("receiver.max_brightness") == .success("100"))
        try receiver.sendFrame(lit)
        #expect(receiver.output.frames == [lit])
        #expect(receiver.pageFileText?.contains("max_brightness") == false)
        #expect(receiver.control.status().settings.first { $0.key == "receiver.max_brightness" }?.source == "default")
    }

    @Test("a change that cannot be kept still applies, and the page is told it is not kept")
    func notKept() throws {
        let receiver = try PageReceiver(pageFile: "/dev/null/page-settings.yaml")
        defer { receiver.finish() }
        let message = refusal(receiver.control.set("receiver.max_brightness", to: "50"))
        #expect(message?.hasPrefix("applied now, but not kept across a restart: ") == true)
        try receiver.sendFrame(lit)
        #expect(receiver.output.frames == [LevelFrame(bass: 100, mid: 50, treble: 0)])
    }

    @Test("the wiring check lights one line through the output and shows in the status, until ended")
    func wiringCheck() throws {
        let receiver = try PageReceiver()
        defer { receiver.finish() }
        #expect(throws: Never.self) { try receiver.control.check(line: 27).get() }
        #expect(receiver.output.last == .check(.line(band: .mid, offset: 27)))
        #expect(receiver.control.status().checking == ReceiverStatus.Line(band: .mid, line: 27))
        try receiver.sendFrame(lit)
        #expect(receiver.output.frames.isEmpty, "frames wait while a line is checked")
        #expect(
            refusal(receiver.control.check(line: 5))
                == "line 5 is not one of the receiver's lines: 17 (bass), 27 (mid), 22 (treble)")
        #expect(throws: Never.self) { try receiver.control.check(line: nil).get() }
        #expect(receiver.output.last == .check(nil))
        #expect(receiver.control.status().checking == nil)
    }

    @Test("the strip's check is refused without a strip, and runs with one")
    func stripCheck() throws {
        let lamps = try PageReceiver()
        defer { lamps.finish() }
        #expect(refusal(lamps.control.checkStrip()) == "this receiver drives no strip (receiver.strip.device)")
        let strip = StripDescription(device: "virtual", pixels: 30, led: .ws2812b, effect: .scroll)
        let stripped = try PageReceiver(strip: strip)
        defer { stripped.finish() }
        #expect(throws: Never.self) { try stripped.control.checkStrip().get() }
        stripped.loop.run()
        #expect(stripped.output.last == .check(.strip(.ends)))
        #expect(stripped.control.status().checkingStrip)
        #expect(stripped.control.status().receiver.strip?.pixels == 30)
    }

    @Test("the status names the receiver, its lines and pins, and the sender driving the lamps")
    func status() throws {
        let receiver = try PageReceiver()
        defer { receiver.finish() }
        var status = receiver.control.status()
        #expect(status.receiver.name == "pi" && status.receiver.port == 4242 && status.receiver.chip == nil)
        #expect(status.receiver.lines.map(\.line) == [17, 27, 22])
        #expect(status.receiver.lines.map(\.pin) == [11, 13, 15])
        #expect(status.sender == nil && status.connections == 0)
        #expect(status.settings.map(\.key) == PageSettings.tunableKeys)
        try receiver.sendFrame(lit)
        status = receiver.control.status()
        #expect(status.sender?.address == "192.168.1.20" && status.sender?.port == 50_000)
        #expect(status.connections == 1 && status.frameAge != nil)
        #expect(receiver.control.lampLevels().levels == [200, 100, 0])
    }

    @Test("the status text is cached, and a setting's change is in the next one")
    func statusText() throws {
        let receiver = try PageReceiver()
        defer { receiver.finish() }
        let first = receiver.control.statusJSON()
        #expect(first.contains(#""name":"pi""#))
        #expect(receiver.control.statusJSON() == first)
        _ = receiver.control.set("receiver.mode", to: "bar")
        #expect(receiver.control.statusJSON().contains(#""mode":"bar""#))
    }

    @Test("a browser's sound drives the lamps as a sender, shown as a browser; its end turns them off")
    func browserSound() throws {
        let receiver = try PageReceiver()
        defer { receiver.finish() }
        let start = BrowserAudioStream.Start(key: PageReceiver.secret.text, sampleRate: 48_000, source: "microphone")
        let sink = try receiver.control.openSound(
            start, address: "192.168.1.30", peer: "192.168.1.30:40000", channel: try receiver.senders.channel()
        ).get()
        // A tenth of a second of a loud 100 Hz tone: ten frames of 480 samples, the newest shown.
        sink.play((0..<4800).map { Float(0.8 * sin(2 * Double.pi * 100 * Double($0) / 48_000)) })
        #expect(receiver.output.frames.count == 1)
        let sender = try #require(receiver.control.status().sender)
        #expect(sender.kind == .browser && sender.port == nil && sender.address == "192.168.1.30")
        sink.stop()
        #expect(receiver.output.frames.last?.isOff == true)
        #expect(receiver.control.status().sender == nil)
    }

    @Test("a browser the switchboard refuses (receiver.allow) may not send sound")
    func browserRefused() throws {
        var rules = ReceiverRules()
        rules.allow = [try #require(AddressRange("10.0.0.0/8"))]
        let receiver = try PageReceiver(rules: rules)
        defer { receiver.finish() }
        let start = BrowserAudioStream.Start(key: PageReceiver.secret.text, sampleRate: 48_000, source: "tab")
        let result = receiver.control.openSound(
            start, address: "192.168.1.30", peer: "192.168.1.30:40000", channel: try receiver.senders.channel())
        #expect(
            refusal(result) == "the receiver refused this sender (receiver.allow or receiver.max_connections)")
    }
}
