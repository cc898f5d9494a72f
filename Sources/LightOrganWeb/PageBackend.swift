import LightOrganCore
public import NIOCore

/// What the page server asks of the receiver: the port between this adapter and the receiver's
/// services (which implement it). Every call may come from any event-loop thread and must return
/// quickly: it never waits for the GPIO path, and the GPIO path never waits for it.
public protocol PageBackend: Sendable {
    /// Whether a client at `address` may open the page at all (`receiver.allow`).
    func mayLook(_ address: String) -> Bool
    /// Whether `key` is the page's secret.
    func isSecret(_ key: String) -> Bool
    /// The status as the page's JSON text (may be cached for a fraction of a second).
    func statusJSON() -> String
    /// The levels the lamps show now, 0…255 each, and a number that changes whenever they do.
    func lampLevels() -> (levels: [UInt8], generation: UInt64)
    /// The strip's pixels for the page (3 bytes a pixel, red, green, blue; at most
    /// ``StripPreview/maximumPixels``), empty without a strip.
    func stripPreview() -> [UInt8]
    /// Calls `changed` whenever the lamps may have changed, on ``lampLoop`` (in the wake-up that
    /// showed the frame when it was shown there), until ``unwatchLamps(_:)`` with the same `id`.
    func watchLamps(_ id: ObjectIdentifier, _ changed: @escaping @Sendable () -> Void)
    func unwatchLamps(_ id: ObjectIdentifier)
    /// The event loop the receiver shows frames on; the page's sockets live there too, so that
    /// telling a page of new lamps costs no wake-up of its own.
    var lampLoop: any EventLoop { get }
    /// Applies a setting; the value as applied, or the message saying why not.
    func set(_ key: String, to value: String) -> Result<String, PageRefusal>
    /// Drops the page's value of `key` (the settings file's, or the default, applies again); the
    /// value now applied, or the message saying why not.
    func useFileValue(_ key: String) -> Result<String, PageRefusal>
    /// Lights one GPIO line alone (nil: ends the check).
    func check(line: Int?) -> Result<Void, PageRefusal>
    /// Runs the strip's wiring check.
    func checkStrip() -> Result<Void, PageRefusal>
    /// A browser starts sending sound from `address`; nil with the reason when it may not drive the lamps.
    func openSound(_ start: BrowserAudioStream.Start, address: String, peer: String, channel: any Channel)
        -> Result<any PageSoundSink, PageRefusal>
}

/// Where a page's sound goes once it is accepted.
public protocol PageSoundSink: Sendable {
    /// The next samples, mono, -1…1, at the announced rate.
    func play(_ samples: [Float])
    /// The socket closed: the lamps go off like after any sender's disconnect.
    func stop()
}

/// Why the receiver refused what the page asked, in the words it shows the person.
public struct PageRefusal: Error, Sendable, Equatable {
    public let message: String
    public init(_ message: String) { self.message = message }
}
