import LightOrganCore

/// What the receiver's Bluetooth parts (``BluetoothSpeaker``, ``PairingWindow``) ask BlueZ about its adapter, and
/// the one line each says when something is missing, so that both say the same.
enum BlueZAdapter {
    /// The line when nobody owns `org.bluez` on the system bus.
    static let bluetoothdNotRunning =
        "bluetoothd is not running: sudo apt install bluez, then sudo systemctl enable --now bluetooth"

    /// The adapter BlueZ lists first (by object path, `/org/bluez/hci0` before `hci1`) in `objects`
    /// (`GetManagedObjects`' answer) with its `org.bluez.Adapter1` properties, or nil when there is none.
    static func first(in objects: [String: [String: [String: DBusValue]]]) -> (
        path: String, properties: [String: DBusValue]
    )? {
        guard let path = objects.filter({ $0.value["org.bluez.Adapter1"] != nil }).keys.sorted().first,
            let properties = objects[path]?["org.bluez.Adapter1"]
        else { return nil }
        return (path, properties)
    }

    /// The adapter's short name, `hci0` of `/org/bluez/hci0`.
    static func name(of path: String) -> String {
        path.split(separator: "/").last.map(String.init) ?? path
    }

    /// The line when BlueZ lists no adapter: rfkill's block when `blocked` names one (Rfkill.bluetoothBlocked()),
    /// else which Pis have one built in.
    static func missing(blocked: String?) -> String {
        blocked.map { "the Bluetooth adapter is blocked by rfkill (\($0)): sudo rfkill unblock bluetooth" }
            ?? "no Bluetooth adapter: the Pi 3, 4, 5, 400 and Zero 2 W have one built in (unless config.txt says dtoverlay=disable-bt); other boards need a USB dongle"
    }
}
