/// One frame of the light organ wire: the brightness of the bass, mid and treble lamps.
///
/// On the wire a frame is exactly three bytes, `[bass, mid, treble]`, with no header, no length
/// and no acknowledgement: the format of the 2016 LightOrgan apps (TCP, port 8181). Each level is
/// 0…255, where 0 is off and 255 is full brightness; the value is perceptual (already on a
/// loudness-like scale), so a receiver applies its own gamma for the lamp it drives.
public struct LevelFrame: Sendable, Hashable, CustomStringConvertible {
    /// Bytes per frame on the wire.
    public static let byteCount = 3

    /// All lamps off.
    public static let off = LevelFrame(bass: 0, mid: 0, treble: 0)

    /// What the 2016 clients send just before a clean close (about 5 % on every lamp).
    public static let legacyGoodbye = LevelFrame(bass: 13, mid: 13, treble: 13)

    /// Level of the low band (below the bass/mid crossover), 0…255.
    public var bass: UInt8
    /// Level of the middle band, 0…255.
    public var mid: UInt8
    /// Level of the high band (above the mid/treble crossover), 0…255.
    public var treble: UInt8

    public init(bass: UInt8, mid: UInt8, treble: UInt8) {
        self.bass = bass
        self.mid = mid
        self.treble = treble
    }

    /// Builds a frame from three levels in 0…1; values outside are clamped, NaN counts as 0.
    ///
    /// Rounds to nearest, as the 2016 apps did (`UInt8(round(255 * level))`).
    public init(unitBass: Float, unitMid: Float, unitTreble: Float) {
        self.init(bass: Self.byte(unitBass), mid: Self.byte(unitMid), treble: Self.byte(unitTreble))
    }

    /// The levels in wire order: bass, mid, treble.
    public var levels: [UInt8] { [bass, mid, treble] }

    /// True when every lamp is off.
    public var isOff: Bool { self == .off }

    /// The three wire bytes, in order.
    public var wireBytes: (UInt8, UInt8, UInt8) { (bass, mid, treble) }

    public var description: String { "[\(bass), \(mid), \(treble)]" }

    private static func byte(_ unit: Float) -> UInt8 {
        guard unit > 0 else { return 0 }  // also catches NaN
        guard unit < 1 else { return 255 }
        return UInt8((unit * 255).rounded())
    }
}

/// The three bands of the light organ, in wire order.
public enum Band: Int, Sendable, CaseIterable, CustomStringConvertible {
    case bass = 0
    case mid = 1
    case treble = 2

    public var description: String {
        switch self {
        case .bass: "bass"
        case .mid: "mid"
        case .treble: "treble"
        }
    }
}

extension LevelFrame {
    /// The level of one band, 0…255.
    public subscript(band: Band) -> UInt8 {
        get {
            switch band {
            case .bass: bass
            case .mid: mid
            case .treble: treble
            }
        }
        set {
            switch band {
            case .bass: bass = newValue
            case .mid: mid = newValue
            case .treble: treble = newValue
            }
        }
    }
}
