/// Where the receiver's levels become light: virtual lamps, lines on stdout, GPIO lines, LED strips.
///
/// The receiver calls ``show(_:)`` for every frame it applies, in order, from one task at a time,
/// and ``shutDown()`` exactly once, last; the other members follow the same caller rule. An output
/// must be able to take 250 frames per second. Everything the page, the wiring check, `test-leds`
/// and the status need of an output goes through this protocol: nothing outside the output asks
/// what kind of output it is.
public protocol LevelOutput: Sendable {
    /// Sets the lamps to `frame` now. ``LevelFrame/off`` turns every lamp off.
    mutating func show(_ frame: LevelFrame) throws

    /// Shows a frame of music from a sender, with what the beat tracker said of it where the analysis runs on
    /// this side of the wire (nil: a sender over the network). The stages before the lights take it (the
    /// delay, the ``LightLook``); an output that draws no look shows `frame` (the default).
    mutating func show(_ frame: LevelFrame, beat: BeatState?) throws

    /// Shows `frame` as the ``LightLook`` made it: a strip draws a beat effect or the idle look by `look`, lamps
    /// show `frame` (the default).
    mutating func show(_ frame: LevelFrame, look: LookCue) throws

    /// Turns every lamp off and releases what the output holds (cursor, lines, devices).
    mutating func shutDown()

    /// Shows one step of a wiring check alone, every other light dark; nil: everything dark.
    mutating func showCheck(_ check: OutputCheck?) throws

    /// The levels a person sees per band after ``show(_:)`` with `frame` (GPIO `onoff`: full or dark).
    func seenLevels(after frame: LevelFrame) -> LevelFrame

    /// The strips it drives (none for lamps alone).
    var strips: [StripDescription] { get }

    /// Red, green, blue of each pixel of its first strip now (empty without a strip), for the page.
    func stripPixels() -> [UInt8]

    /// Applies a setting the page changed that acts on lights; outputs it does not concern ignore it.
    mutating func apply(_ change: OutputChange)
}

/// One step of a wiring check, as the output shows it.
public enum OutputCheck: Sendable, Equatable {
    /// This GPIO line of this band at full (outputs without lines light the band's lamp).
    case line(band: Band, offset: Int)
    /// One picture of a strip's check.
    case strip(StripCheck.Step)
}

/// A setting the page changes while the receiver runs that the output applies.
public enum OutputChange: Sendable, Equatable {
    /// `receiver.mode`: how levels drive GPIO lines.
    case lineMode(LineDriver.Mode)
    /// `receiver.strip.effect`.
    case stripEffect(StripEffect)
    /// `receiver.strip.brightness`, percent.
    case stripBrightness(Int)
    /// `receiver.strip.palette`.
    case stripPalette(Palette)
}

/// A strip as the page, the status and the log name it.
public struct StripDescription: Sendable, Equatable {
    /// The device (`/dev/spidev0.0`, `/dev/leds0`, `virtual`).
    public var device: String
    /// Pixels.
    public var pixels: Int
    /// The chip, as `receiver.strip.type` names it.
    public var led: StripLED
    /// The effect drawn now.
    public var effect: StripEffect

    public init(device: String, pixels: Int, led: StripLED, effect: StripEffect) {
        (self.device, self.pixels, self.led, self.effect) = (device, pixels, led, effect)
    }
}

extension LevelOutput {
    public mutating func show(_ frame: LevelFrame, beat: BeatState?) throws { try show(frame) }

    public mutating func show(_ frame: LevelFrame, look: LookCue) throws { try show(frame) }

    /// Lamps without lines of their own (terminal, stdout) show a line's check as its band's lamp.
    public mutating func showCheck(_ check: OutputCheck?) throws {
        var frame = LevelFrame.off
        if case .line(let band, _) = check { frame[band] = 255 }
        try show(frame)
    }

    public func seenLevels(after frame: LevelFrame) -> LevelFrame { frame }

    public var strips: [StripDescription] { [] }

    public func stripPixels() -> [UInt8] { [] }

    public mutating func apply(_ change: OutputChange) {}
}
