import LightOrganCore
import LightOrganServices
import LightOrganTestSupport
import LightOrganWeb
import NIOCore
import NIOEmbedded
import Testing

@Suite("LiveSocketHandler: the page's /live socket — hello, settings, wiring checks, lamps and status pushed")
struct LiveSocketHandlerTests {
    let lit = LevelFrame(bass: 200, mid: 100, treble: 0)

    func liveSocket() throws -> PageSocket { try PageSocket { LiveSocketHandler(socket: $0) } }

    func hello(_ key: String) -> String { #"{"type":"hello","key":"\#(key)"}"# }

    @Test("hello with the key: the page may control, and gets the status at once")
    func helloWithKey() throws {
        let page = try liveSocket()
        defer { page.finish() }
        try page.send(hello(PageSocket.key))
        let texts = try page.texts()
        #expect(texts.count == 2)
        #expect(texts.first == PageReply.hello(control: true).json())
        #expect(texts.last == page.control.statusJSON())
        #expect(texts.last?.contains(#""type":"status""#) == true)
    }

    @Test("hello without a key looks only: changing a setting then closes the socket with 4001, nothing changed")
    func lookOnly() throws {
        let page = try liveSocket()
        defer { page.finish() }
        try page.send(hello(""))
        #expect(try page.texts().first == PageReply.hello(control: false).json())
        try page.send(#"{"type":"set","id":1,"key":"receiver.max_brightness","value":50}"#)
        #expect(try page.written() == [.close(code: 4001, reason: "changing the receiver needs the key")])
        #expect(!page.channel.isActive)
        #expect(page.pageFileText == nil)
        #expect(page.control.status().settings.first { $0.key == "receiver.max_brightness" }?.value == "100")
    }

    @Test("a wrong key closes the socket with 4001")
    func wrongKey() throws {
        let page = try liveSocket()
        defer { page.finish() }
        try page.send(hello("not-the-secret-at-all"))
        #expect(try page.written() == [.close(code: 4001, reason: "wrong key")])
        #expect(!page.channel.isActive)
    }

    @Test("a setting before hello closes the socket with 1008")
    func settingBeforeHello() throws {
        let page = try liveSocket()
        defer { page.finish() }
        try page.send(#"{"type":"set","id":1,"key":"receiver.mode","value":"bar"}"#)
        #expect(try page.written() == [.close(code: 1008, reason: "say hello first")])
        #expect(page.control.status().receiver.mode == "pwm")
    }

    @Test("a setting reaches the receiver: answered with the value applied, then the status; the next frame obeys it")
    func settingApplied() throws {
        let page = try liveSocket()
        defer { page.finish() }
        try page.send(hello(PageSocket.key))
        _ = try page.written()
        try page.send(#"{"type":"set","id":7,"key":"receiver.max_brightness","value":50}"#)
        let texts = try page.texts()
        #expect(texts.first == PageReply.set(id: 7, key: "receiver.max_brightness", value: "50").json())
        #expect(texts.count == 2 && texts.last?.contains(#""source":"page""#) == true)
        try page.showFromSender(lit)
        #expect(page.output.frames == [LevelFrame(bass: 100, mid: 50, treble: 0)])
        #expect(page.pageFileText?.contains("max_brightness: 50") == true)
    }

    @Test("a refused setting is answered with the reason and the socket stays open; the file's value comes back")
    func settingRefusedAndUseFile() throws {
        let page = try liveSocket()
        defer { page.finish() }
        try page.send(hello(PageSocket.key))
        _ = try page.written()
        try page.send(#"{"type":"set","id":2,"key":"receiver.mode","value":"blink"}"#)
        #expect(
            try page.texts().first
                == PageReply.set(
                    id: 2, key: "receiver.mode",
                    refused: "receiver.mode = blink is not allowed; allowed: pwm, onoff, bar"
                ).json())
        #expect(page.channel.isActive)
        try page.send(#"{"type":"set","id":3,"key":"receiver.mode","value":"bar"}"#)
        try page.send(#"{"type":"useFile","id":4,"key":"receiver.mode"}"#)
        let texts = try page.texts()
        #expect(texts.contains(PageReply.set(id: 3, key: "receiver.mode", value: "bar").json()))
        #expect(texts.contains(PageReply.set(id: 4, key: "receiver.mode", value: "pwm").json()))
        #expect(page.control.status().receiver.mode == "pwm")
    }

    @Test("a wiring check message lights the line through the output; an unknown line or a strip is refused")
    func wiringCheck() throws {
        let page = try liveSocket()
        defer { page.finish() }
        try page.send(hello(PageSocket.key))
        _ = try page.written()
        try page.send(#"{"type":"check","id":5,"line":27}"#)
        var texts = try page.texts()
        #expect(texts.first == PageReply.check(id: 5, line: 27).json())
        #expect(texts.last?.contains(#""checking":{"band":"mid","line":27,"pin":13}"#) == true)
        #expect(page.output.last == .check(.line(band: .mid, offset: 27)))
        try page.send(#"{"type":"check","id":6,"line":4}"#)
        texts = try page.texts()
        #expect(
            texts.first
                == PageReply.check(
                    id: 6, refused: "line 4 is not one of the receiver's lines: 17 (bass), 27 (mid), 22 (treble)"
                ).json())
        try page.send(#"{"type":"check","id":7,"strip":true}"#)
        #expect(
            try page.texts().first
                == PageReply.check(id: 7, refused: "this receiver drives no strip (receiver.strip.device)").json())
        try page.send(#"{"type":"check","id":8,"line":null}"#)
        #expect(try page.texts().first == PageReply.check(id: 8, line: nil).json())
        #expect(page.output.last == .check(nil))
    }

    @Test("a frame the switchboard shows is pushed to the page at once as its three levels")
    func lampsPushed() throws {
        let page = try liveSocket()
        defer { page.finish() }
        try page.send(hello(""))
        _ = try page.written()
        try page.showFromSender(lit)
        #expect(try page.written() == [.binary([200, 100, 0])])
    }

    @Test("the status is pushed every fifth tick of the timer (every half second)")
    func statusEveryHalfSecond() throws {
        let page = try liveSocket()
        defer { page.finish() }
        page.loop.advanceTime(by: LiveSocketHandler.tickInterval * 4)
        #expect(try page.texts().isEmpty)
        page.loop.advanceTime(by: LiveSocketHandler.tickInterval)
        #expect(try page.texts() == [page.control.statusJSON()])
    }

    @Test("more than 20 messages within a second close the socket with 1008")
    func tooManyMessages() throws {
        let page = try liveSocket()
        defer { page.finish() }
        for _ in 0..<LiveSocketHandler.messagesPerSecond { try page.send(hello("")) }
        #expect(page.channel.isActive)
        _ = try page.written()
        try page.send(hello(""))
        #expect(try page.written() == [.close(code: 1008, reason: "more than 20 messages a second")])
        #expect(!page.channel.isActive)
    }

    @Test("binary data closes the socket with 1003, text that is not a request with 1007")
    func wrongMessages() throws {
        let binary = try liveSocket()
        defer { binary.finish() }
        try binary.send(binary: [1, 2, 3])
        #expect(try binary.written() == [.close(code: 1003, reason: "this socket takes JSON text only")])
        let garbage = try liveSocket()
        defer { garbage.finish() }
        try garbage.send("hello")
        #expect(
            try garbage.written() == [
                .close(code: 1007, reason: "not a message of the page's protocol (JSON with a known `type`)")
            ])
    }

    @Test("a ping is answered with a pong carrying its data, and counts as no message")
    func ping() throws {
        let page = try liveSocket()
        defer { page.finish() }
        try page.ping([7, 8, 9])
        #expect(try page.written() == [.pong([7, 8, 9])])
        #expect(page.channel.isActive)
    }
}
