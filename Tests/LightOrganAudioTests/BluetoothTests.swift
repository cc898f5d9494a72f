import FoundationEssentials
import Glibc
import LightOrganAudio
import LightOrganCore
import LightOrganPOSIX
import Testing

@Suite("Bluetooth: BlueZ's names, rfkill, and the system bus spoken without a library")
struct BluetoothTests {
    @Test func readsTheAddressOfABlueZDevicePath() {
        #expect(BluetoothSpeaker.address(ofDevice: "/org/bluez/hci0/dev_AA_BB_CC_DD_EE_0F") == "AA:BB:CC:DD:EE:0F")
    }

    @Test func seesARadioBlockedByRfkill() throws {
        let root = "/tmp/lightorgan-rfkill-\(getpid())"
        defer { _ = try? FileManager.default.removeItem(atPath: root) }
        func write(_ name: String, _ text: String) throws {
            try FileManager.default.createDirectory(
                atPath: root + "/" + name.split(separator: "/").dropLast().joined(separator: "/"),
                withIntermediateDirectories: true)
            try Data(text.utf8).write(to: URL(fileURLWithPath: root + "/" + name))
        }
        try write("rfkill0/type", "wlan\n")
        try write("rfkill0/soft", "1\n")
        try write("rfkill0/hard", "0\n")
        try write("rfkill1/type", "bluetooth\n")
        try write("rfkill1/soft", "0\n")
        try write("rfkill1/hard", "0\n")
        #expect(Rfkill.bluetoothBlocked(root: root) == nil)
        try write("rfkill1/soft", "1\n")
        #expect(Rfkill.bluetoothBlocked(root: root) == "soft")
        try write("rfkill1/hard", "1\n")
        #expect(Rfkill.bluetoothBlocked(root: root)?.hasPrefix("hard") == true)
        #expect(Rfkill.bluetoothBlocked(root: root + "/none") == nil)
    }

    /// A private dbus-daemon (the system bus's own program, on a socket of the test's): the connection
    /// authenticates, says Hello, asks the bus, and answers a call another connection makes to it (as an agent
    /// answers bluetoothd).
    @Test(.enabled(if: access("/usr/bin/dbus-daemon", X_OK) == 0))
    func talksToARealBusAndAnswersCalls() throws {
        let socket = "/tmp/lightorgan-bus-\(getpid())"
        let started = try ChildProcess.run(
            path: "/usr/bin/dbus-daemon",
            arguments: ["--session", "--address=unix:path=\(socket)", "--fork", "--print-pid"], timeLimit: 10)
        let pid = Int32(String(decoding: started.output, as: UTF8.self).trimmingWhitespace()) ?? 0
        defer {
            if pid > 0 { kill(pid, SIGTERM) }
            unlink(socket)
        }
        let environment = ["DBUS_SYSTEM_BUS_ADDRESS": "unix:path=\(socket)"]
        let agent = try SystemBus(environment: environment)
        let bluez = try SystemBus(environment: environment)
        defer {
            agent.close()
            bluez.close()
        }
        #expect(agent.uniqueName.hasPrefix(":"))
        #expect(agent.hasOwner("org.freedesktop.DBus"))
        #expect(!agent.hasOwner("org.bluez"))
        agent.answerCalls { call in
            guard call.member == "RequestConfirmation", case .uint32(let passkey) = call.body.last else { return nil }
            return passkey == 123_456 ? .reply(to: call) : .error(to: call, "org.bluez.Error.Rejected", "no")
        }
        let call = DBusMessage.call(
            agent.uniqueName, "/org/lightorgan/agent", "org.bluez.Agent1", "RequestConfirmation",
            [.objectPath("/org/bluez/hci0/dev_AA_BB_CC_DD_EE_FF"), .uint32(123_456)])
        #expect(try bluez.call(call).isEmpty)
        var refused = call
        refused.body[1] = .uint32(1)
        #expect(throws: SystemBusError.self) { try bluez.call(refused) }
        #expect(throws: SystemBusError.self) {
            try bluez.call(.call("org.bluez", "/", "org.freedesktop.DBus.ObjectManager", "GetManagedObjects"))
        }
    }
}
