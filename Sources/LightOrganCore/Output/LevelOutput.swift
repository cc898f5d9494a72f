/// Where the receiver's levels become light: virtual lamps, lines on stdout, GPIO lines.
///
/// The receiver calls ``show(_:)`` for every frame it applies, in order, from one task at a time,
/// and ``shutDown()`` exactly once, last. An output must be able to take 250 frames per second.
public protocol LevelOutput: Sendable {
    /// Sets the lamps to `frame` now. ``LevelFrame/off`` turns every lamp off.
    mutating func show(_ frame: LevelFrame) throws

    /// Turns every lamp off and releases what the output holds (cursor, lines, devices).
    mutating func shutDown()
}
