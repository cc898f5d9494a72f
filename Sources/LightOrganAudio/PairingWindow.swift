import LightOrganCore
import LightOrganPOSIX

/// A pairing window on the receiver's Bluetooth adapter: for ``seconds`` any phone may find the receiver and pair
/// with it (Just Works: nothing to type, nothing to compare); before and after, none can. A phone that pairs
/// inside it is made trusted, so it connects again by itself later (after the Pi or `bluetoothd` restarts) with
/// no window open.
///
/// Through BlueZ's D-Bus API: an agent (`org.bluez.Agent1`) registered as `NoInputNoOutput` and made the
/// default, which accepts what a phone asks while the window is open (the pairing's confirmation, the A2DP
/// service) and refuses it after; on `org.bluez.Adapter1` `Pairable` and `Discoverable` with their timeouts set
/// to the window's length, so BlueZ itself closes the window on time even if this process dies. When a device
/// under the adapter turns `Paired`, it is set `Trusted`.
public final class PairingWindow: @unchecked Sendable {
    // @unchecked Sendable: `open`, `paired` and `unnamed` change under `lock`; the bus is thread-safe.
    /// The window's usual length, seconds.
    public static let defaultSeconds = 120
    /// Where the agent lives on this process's connection.
    static let agentPath = "/org/lightorgan/agent"

    /// How long the window stays open, seconds.
    public let seconds: Int
    /// The adapter's path (`/org/bluez/hci0`) and name as shown (`hci0`).
    public let adapter: String
    public let adapterName: String
    private let bus: SystemBus
    private let log: @Sendable (String) -> Void
    private let lock = ThreadCondition()
    private var open = false
    /// The addresses of the phones that paired, and of those not yet told to `pairedNow` (their names are asked
    /// for on the thread that runs the window: the signal's thread may not wait on the bus).
    private var paired: [String] = []
    private var unnamed: [String] = []

    /// Finds the adapter (the first BlueZ lists), powers it on, and shows it as `name` when given.
    ///
    /// - Throws: ``AudioInputError`` with one line that says what to do: no system bus, bluetoothd not running,
    ///   no adapter, an adapter that does not power on.
    public init(seconds: Int = defaultSeconds, name: String?, log: @escaping @Sendable (String) -> Void) throws {
        (self.seconds, self.log) = (seconds, log)
        let bus = try SystemBus()
        self.bus = bus
        guard bus.hasOwner("org.bluez") else {
            bus.close()
            throw AudioInputError(BlueZAdapter.bluetoothdNotRunning)
        }
        let objects = try Self.asking { try bus.managedObjects("org.bluez", "/") }
        guard let path = BlueZAdapter.first(in: objects)?.path else {
            bus.close()
            throw AudioInputError(BlueZAdapter.missing(blocked: Rfkill.bluetoothBlocked()))
        }
        adapter = path
        adapterName = BlueZAdapter.name(of: path)
        try Self.asking {
            try bus.setProperty("org.bluez", path, "org.bluez.Adapter1", "Powered", .boolean(true))
            if let name {
                try bus.setProperty("org.bluez", path, "org.bluez.Adapter1", "Alias", .string(PhoneName.shown(name)))
            }
        }
    }

    /// Runs `body` and turns a failed D-Bus call into one line.
    private static func asking<Result>(_ body: () throws -> Result) throws -> Result {
        do {
            return try body()
        } catch let error as SystemBusError {
            let what =
                error.name == "org.bluez.Error.Blocked" || error.text.contains("rfkill")
                ? "the Bluetooth adapter is blocked by rfkill: sudo rfkill unblock bluetooth" : "BlueZ said: \(error)"
            throw AudioInputError(what)
        }
    }

    /// Opens the window, calls `tick` with the seconds left once a second and `pairedNow` with each phone that
    /// pairs (`Pixel 7 (AA:BB:CC:DD:EE:FF)`: its name as shown, ``PhoneName``, and address), closes the window after
    /// ``seconds`` or when `stop` returns true, and returns the phones that paired, as `pairedNow` had them.
    ///
    /// - Throws: ``AudioInputError`` when BlueZ refuses the agent or the adapter's settings.
    public func run(
        tick: (Int) -> Void = { _ in }, pairedNow: (String) -> Void = { _ in },
        stop: () -> Bool = { false }
    ) throws -> [String] {
        let (bus, adapter, log) = (bus, adapter, log)
        bus.answerCalls { [self] call in answer(call) }
        bus.receiveSignals { [self] signal in
            guard signal.member == "PropertiesChanged", let path = signal.path, path.hasPrefix(adapter + "/"),
                signal.body.first?.text == "org.bluez.Device1",
                signal.body.count > 1, signal.body[1].dictionary?["Paired"]?.bool == true
            else { return }
            // On the reading thread: sent, not waited for (its answer comes on this thread).
            var trust = DBusMessage.call(
                "org.bluez", path, "org.freedesktop.DBus.Properties", "Set",
                [.string("org.bluez.Device1"), .string("Trusted"), .variant(.boolean(true))])
            trust.flags = 1
            _ = try? bus.send(trust)
            let address = BluetoothSpeaker.address(ofDevice: path)
            lock.withLock {
                guard !paired.contains(address) else { return }
                paired.append(address)
                unnamed.append(address)
            }
        }
        try Self.asking {
            try bus.addMatch(
                "type='signal',sender='org.bluez',interface='org.freedesktop.DBus.Properties',member='PropertiesChanged'"
            )
            try bus.call(
                .call(
                    "org.bluez", "/org/bluez", "org.bluez.AgentManager1", "RegisterAgent",
                    [.objectPath(Self.agentPath), .string("NoInputNoOutput")]))
            try bus.call(
                .call(
                    "org.bluez", "/org/bluez", "org.bluez.AgentManager1", "RequestDefaultAgent",
                    [.objectPath(Self.agentPath)]))
            lock.withLock { open = true }
            for (property, value) in [
                ("PairableTimeout", DBusValue.uint32(UInt32(seconds))), ("Pairable", .boolean(true)),
                ("DiscoverableTimeout", .uint32(UInt32(seconds))), ("Discoverable", .boolean(true)),
            ] {
                try bus.setProperty("org.bluez", adapter, "org.bluez.Adapter1", property, value)
            }
        }
        log("Bluetooth: pairing window open on \(adapterName) for \(seconds) s (discoverable and pairable, Just Works)")
        let end = MonotonicClock.nanoseconds() + Int64(seconds) * 1_000_000_000
        var told: [String] = []
        var lastTick = -1
        while !stop() {
            let left = end - MonotonicClock.nanoseconds()
            guard left > 0 else { break }
            let secondsLeft = Int((left + 999_999_999) / 1_000_000_000)
            if secondsLeft != lastTick {
                tick(secondsLeft)
                lastTick = secondsLeft
            }
            for address in lock.withLock({ () -> [String] in
                defer { unnamed.removeAll() }
                return unnamed
            }) {
                let device = "\(adapter)/dev_" + address.replacing(":", with: "_")
                let name = (try? bus.property("org.bluez", device, "org.bluez.Device1", "Alias"))?.text ?? address
                let shown = "\(PhoneName.shown(name)) (\(address))"
                log("Bluetooth: \(shown) paired and trusted")
                told.append(shown)
                pairedNow(shown)
            }
            DedicatedThread.sleep(seconds: min(0.2, Double(left) / 1e9))
        }
        close()
        return told
    }

    /// Closes the window: neither discoverable nor pairable, the agent unregistered.
    public func close() {
        let wasOpen = lock.withLock {
            defer { open = false }
            return open
        }
        guard wasOpen else { return }
        try? bus.setProperty("org.bluez", adapter, "org.bluez.Adapter1", "Discoverable", .boolean(false))
        try? bus.setProperty("org.bluez", adapter, "org.bluez.Adapter1", "Pairable", .boolean(false))
        _ = try? bus.call(
            .call(
                "org.bluez", "/org/bluez", "org.bluez.AgentManager1", "UnregisterAgent", [.objectPath(Self.agentPath)]))
        log("Bluetooth: pairing window closed on \(adapterName) (neither discoverable nor pairable)")
        bus.close()
    }

    /// The agent's answer to BlueZ's call: accepted while the window is open, refused after.
    private func answer(_ call: DBusMessage) -> DBusMessage? {
        guard call.path == Self.agentPath, call.interface == "org.bluez.Agent1", let member = call.member else {
            return nil
        }
        let isOpen = lock.withLock { open }
        let device = call.body.first?.text.map(BluetoothSpeaker.address(ofDevice:)) ?? "?"
        switch member {
        case "Release", "Cancel", "DisplayPasskey", "DisplayPinCode":
            return .reply(to: call)
        case "RequestConfirmation", "RequestAuthorization", "AuthorizeService":
            guard isOpen else {
                log("Bluetooth: refused \(device) (\(member)): no pairing window is open")
                return .error(to: call, "org.bluez.Error.Rejected", "no pairing window is open")
            }
            return .reply(to: call)
        case "RequestPinCode":
            // Old phones without Secure Simple Pairing: the usual code of a speaker.
            return isOpen
                ? .reply(to: call, [.string("0000")])
                : .error(to: call, "org.bluez.Error.Rejected", "no pairing window is open")
        case "RequestPasskey":
            return isOpen
                ? .reply(to: call, [.uint32(0)])
                : .error(to: call, "org.bluez.Error.Rejected", "no pairing window is open")
        default:
            return nil
        }
    }
}
