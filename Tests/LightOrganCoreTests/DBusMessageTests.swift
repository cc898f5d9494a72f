import Glibc
import LightOrganCore
import Testing

@Suite struct DBusMessageTests {
    /// BlueZ's Properties.Set of an adapter's alias, as dbus-send would send it (serial 7): its exact bytes, checked
    /// by hand against the D-Bus specification's layout.
    @Test func encodesAMethodCallByteForByte() {
        var call = DBusMessage.call(
            "org.bluez", "/org/bluez/hci0", "org.freedesktop.DBus.Properties", "Set",
            [.string("org.bluez.Adapter1"), .string("Alias"), .variant(.string("Pi"))])
        call.serial = 7
        let bytes = call.encoded()
        #expect(Array(bytes[0..<4]) == [UInt8(ascii: "l"), 1, 0, 1])
        // The body: "org.bluez.Adapter1" (4 + 18 + 1 = 23, padded to 24), "Alias" (4 + 5 + 1: to 34), the variant's
        // signature "s" (3 bytes: to 37, padded to 40) and "Pi" (4 + 2 + 1): 47 bytes.
        #expect(Array(bytes[4..<8]) == [47, 0, 0, 0])
        #expect(Array(bytes[8..<12]) == [7, 0, 0, 0])
        #expect(bytes.count % 8 == 47 % 8)
        #expect(Array(bytes.suffix(7)) == [2, 0, 0, 0, UInt8(ascii: "P"), UInt8(ascii: "i"), 0])
    }

    @Test func decodesWhatItEncodes() throws {
        var signal = DBusMessage(kind: .signal)
        signal.path = "/org/bluez/hci0/dev_AA_BB_CC_DD_EE_FF"
        signal.interface = "org.freedesktop.DBus.Properties"
        signal.member = "PropertiesChanged"
        signal.sender = ":1.4"
        signal.serial = 99
        signal.body = [
            .string("org.bluez.Device1"),
            .properties([("Paired", .boolean(true)), ("RSSI", .int16(-42)), ("Class", .uint32(0x5a_020c))]),
            .array(elementSignature: "s", []),
        ]
        let bytes = signal.encoded()
        #expect(try DBusMessage.length(of: bytes[...]) == bytes.count)
        let decoded = try DBusMessage(decoding: bytes)
        #expect(decoded == signal)
        #expect(decoded.body[1].dictionary?["Paired"]?.bool == true)
        #expect(decoded.body[1].dictionary?["RSSI"]?.integer == -42)
        #expect(decoded.signature == "sa{sv}as")
    }

    @Test func readsNestedDictionariesLikeGetManagedObjects() throws {
        let objects = DBusValue.array(
            elementSignature: "{oa{sa{sv}}}",
            [
                .dictEntry(
                    .objectPath("/org/bluealsa/hci0/dev_AA_BB_CC_DD_EE_FF/a2dpsnk/source"),
                    .array(
                        elementSignature: "{sa{sv}}",
                        [
                            .dictEntry(
                                .string("org.bluealsa.PCM1"),
                                .properties([
                                    ("Transport", .string("A2DP-sink")), ("Mode", .string("source")),
                                    ("Sampling", .uint32(44_100)), ("Delay", .uint16(150)),
                                ]))
                        ]))
            ])
        var reply = DBusMessage(kind: .methodReturn)
        reply.replySerial = 3
        reply.body = [objects]
        let decoded = try DBusMessage(decoding: reply.encoded())
        let pcm = decoded.body[0].dictionary?["/org/bluealsa/hci0/dev_AA_BB_CC_DD_EE_FF/a2dpsnk/source"]?.dictionary?[
            "org.bluealsa.PCM1"]?.dictionary
        #expect(pcm?["Transport"]?.text == "A2DP-sink")
        #expect(pcm?["Sampling"]?.integer == 44_100)
        #expect(decoded.replySerial == 3)
    }

    @Test func readsABigEndianMessage() throws {
        // A method return, big-endian, serial 1, reply to 5, body "s" = "ok".
        let bytes: [UInt8] =
            [UInt8(ascii: "B"), 2, 0, 1, 0, 0, 0, 7, 0, 0, 0, 1, 0, 0, 0, 15]
            + [5, 1, UInt8(ascii: "u"), 0, 0, 0, 0, 5] + [8, 1, UInt8(ascii: "g"), 0, 1, UInt8(ascii: "s"), 0] + [0]
            + [0, 0, 0, 2, UInt8(ascii: "o"), UInt8(ascii: "k"), 0]
        #expect(try DBusMessage.length(of: bytes[...]) == bytes.count)
        let decoded = try DBusMessage(decoding: bytes)
        #expect(decoded.kind == .methodReturn)
        #expect(decoded.replySerial == 5)
        #expect(decoded.body == [.string("ok")])
    }

    @Test(arguments: ["a", "(", "{sv", "()", "z", "a{"])
    func refusesSignaturesThatAreNotWellFormed(signature: String) {
        #expect(throws: DBusWireError.self) { try DBusSignature.types(in: signature) }
    }

    @Test func refusesEveryTruncationOfAMessage() {
        var call = DBusMessage.call(
            "org.bluez", "/org/bluez", "org.bluez.AgentManager1", "RegisterAgent",
            [
                .objectPath("/org/lightorgan/agent"), .string("NoInputNoOutput"),
            ])
        call.serial = 1
        let bytes = call.encoded()
        for length in 16..<bytes.count {
            #expect(throws: DBusWireError.self) { try DBusMessage(decoding: Array(bytes[0..<length])) }
        }
    }
}

@Suite struct PhoneNameTests {
    @Test(arguments: [
        ("Pixel 7", "Pixel 7"),
        ("  Anna's\tiPhone\n", "Anna's iPhone"),
        ("\u{1B}[31mred\u{1B}[0m", "[31mred [0m"),
        ("\u{7}\u{0}", "?"),
        ("Zoë \u{85}phone", "Zoë phone"),
    ])
    func showsANameWithoutControlCharacters(name: String, shown: String) {
        #expect(PhoneName.shown(name) == shown)
    }

    @Test func cutsALongName() {
        #expect(PhoneName.shown(String(repeating: "x", count: 300)) == String(repeating: "x", count: 64) + "…")
    }
}

@Suite struct RateConverterTests {
    /// A 1 kHz tone at 48 kHz, converted in blocks of odd sizes: as many frames as 44.1 kHz takes, the tone's
    /// period (44.1 frames) and level kept, no click at the blocks' seams.
    @Test func convertsA48kHzToneTo44100WithoutSeams() {
        var converter = RateConverter(inputRate: 48_000, outputRate: 44_100, channels: 2)
        let input = (0..<48_000).flatMap { frame -> [Int16] in
            let value = Int16((10_000 * sin(2 * Double.pi * 1000 * Double(frame) / 48_000)).rounded())
            return [value, -value]
        }
        var output: [Int16] = []
        var start = 0
        for size in [1, 7, 480, 4096, 333] where start < 48_000 {
            let end = min(48_000, start + size * 17)
            output += converter.convert(Array(input[start * 2..<end * 2]))
            start = end
        }
        output += converter.convert(Array(input[start * 2..<48_000 * 2]))
        let frames = output.count / 2
        #expect(abs(frames - 44_100) <= 2)
        let expected = (0..<frames).map { 10_000 * sin(2 * Double.pi * 1000 * Double($0) / 44_100) }
        let worst = (0..<frames).map { abs(Double(output[$0 * 2]) - expected[$0]) }.max() ?? 0
        #expect(worst < 150, "largest error \(worst) of 10000")
        #expect((0..<frames).allSatisfy { output[$0 * 2] == -output[$0 * 2 + 1] })
    }
}
