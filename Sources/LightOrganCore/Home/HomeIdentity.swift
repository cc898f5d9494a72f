/// Who the receiver is to Home Assistant: the `device` block of every entity and the ids they are known by.
public struct HomeIdentity: Sendable, Equatable {
    /// Made once and kept in the state directory (``isID(_:)``): every `unique_id` derives from it, so the
    /// entities keep their history and their place in automations across restarts and renames.
    public var id: String
    /// The receiver's name (`receiver.name`, else the host name): the device's name in Home Assistant.
    public var name: String
    /// The receiver's version.
    public var version: String
    /// The hardware it runs on, as its device tree names it (`Raspberry Pi 4 Model B Rev 1.5`), or empty.
    public var hardware: String
    /// The page's address, for Home Assistant's "visit" link; nil without a page.
    public var pageURL: String?

    public init(id: String, name: String, version: String, hardware: String = "", pageURL: String? = nil) {
        (self.id, self.name, self.version, self.hardware, self.pageURL) = (id, name, version, hardware, pageURL)
    }

    /// Whether `text` is an id as ``makeID(random:)`` makes them: 12 lowercase hexadecimal digits.
    public static func isID(_ text: String) -> Bool {
        text.utf8.count == 12 && text.utf8.allSatisfy { (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }
    }

    /// A new id from 48 random bits.
    public static func makeID(random: UInt64) -> String {
        let digits = String(random & 0xffff_ffff_ffff, radix: 16)
        return String(repeating: "0", count: 12 - digits.count) + digits
    }

    /// The device block every entity carries.
    var device: JSONValue {
        var device: [String: JSONValue] = [
            "identifiers": [.string("lightorgan_\(id)")], "name": .string(name), "manufacturer": "lightorgan",
            "model": .string(hardware.isEmpty ? "lightorgan receiver" : "lightorgan receiver on \(hardware)"),
            "sw_version": .string(version),
        ]
        if let pageURL { device["configuration_url"] = .string(pageURL) }
        return .object(device)
    }

    /// The origin block: what published the discovery messages.
    var origin: JSONValue {
        ["name": "lightorgan", "sw_version": .string(version)]
    }
}
