public import LightOrganCore
public import Synchronization

/// An output that records what it was asked to show (frames, wiring checks, the page's changes),
/// in order, for the tests of what drives a ``LevelOutput``.
public final class RecordingOutput: LevelOutput {
    /// One call, as it came.
    public enum Event: Equatable, Sendable {
        case frame(LevelFrame)
        case check(OutputCheck?)
        case change(OutputChange)
        case shutDown
    }

    /// Every call so far, oldest first.
    public let events = Mutex<[Event]>([])
    private let stripList: [StripDescription]

    /// An output with `strip` beside its lamps (none: lamps alone).
    public init(strip: StripDescription? = nil) { stripList = strip.map { [$0] } ?? [] }

    public func show(_ frame: LevelFrame) throws { events.withLock { $0.append(.frame(frame)) } }
    /// A frame as the ``LightLook`` made it: recorded as a frame, its cue kept in ``looks``.
    public func show(_ frame: LevelFrame, look: LookCue) throws {
        looks.withLock { $0.append(look) }
        try show(frame)
    }
    /// The cues of the frames shown with one (``show(_:look:)``), oldest first.
    public let looks = Mutex<[LookCue]>([])
    public func shutDown() { events.withLock { $0.append(.shutDown) } }
    public func showCheck(_ check: OutputCheck?) throws { events.withLock { $0.append(.check(check)) } }
    public func apply(_ change: OutputChange) { events.withLock { $0.append(.change(change)) } }
    public var strips: [StripDescription] { stripList }
    /// Whether ``shutDown()`` was called.
    public var isShutDown: Bool { events.withLock { $0.contains(.shutDown) } }
    /// The newest call, nil before the first.
    public var last: Event? { events.withLock { $0.last } }
    /// The frames shown, in order (checks and changes left out).
    public var frames: [LevelFrame] {
        events.withLock { events in
            events.compactMap { event in
                if case .frame(let frame) = event { return frame }
                return nil
            }
        }
    }
}
