public import LightOrganCore

/// The receiver's lamps and its strip at once (`receiver.output` with `receiver.strip.device`):
/// every frame goes to both; a wiring check lights one part, the other stays dark.
public struct CombinedOutput: LevelOutput {
    private var lamps: any LevelOutput
    private var strip: any LevelOutput

    public init(lamps: any LevelOutput, strip: any LevelOutput) {
        self.lamps = lamps
        self.strip = strip
    }

    public mutating func show(_ frame: LevelFrame) throws {
        try show(frame, look: .none)
    }

    public mutating func show(_ frame: LevelFrame, look: LookCue) throws {
        // Both get the frame even when one fails; the first failure is reported.
        // The strip first (it hands its pixels to its own thread at once): lamps that draw the strip
        // (the terminal's row) then draw this frame's pixels.
        var failure: (any Error)?
        do { try strip.show(frame, look: look) } catch { failure = error }
        do { try lamps.show(frame, look: look) } catch { failure = failure ?? error }
        if let failure { throw failure }
    }

    public mutating func shutDown() {
        lamps.shutDown()
        strip.shutDown()
    }

    public mutating func showCheck(_ check: OutputCheck?) throws {
        switch check {
        case .line:
            try strip.showCheck(nil)
            try lamps.showCheck(check)
        case .strip:
            try lamps.showCheck(nil)
            try strip.showCheck(check)
        case nil:
            try lamps.showCheck(nil)
            try strip.showCheck(nil)
        }
    }

    public func seenLevels(after frame: LevelFrame) -> LevelFrame { lamps.seenLevels(after: frame) }

    public var strips: [StripDescription] { lamps.strips + strip.strips }

    public func stripPixels() -> [UInt8] { strip.stripPixels() }

    public mutating func apply(_ change: OutputChange) {
        lamps.apply(change)
        strip.apply(change)
    }
}
