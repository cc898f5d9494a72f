import LightOrganCore
import Synchronization

/// An output that records what it was asked to show (frames, checks, the page's changes), in order.
final class RecordingOutput: LevelOutput {
    enum Event: Equatable {
        case frame(LevelFrame)
        case check(OutputCheck?)
        case change(OutputChange)
        case shutDown
    }

    let events = Mutex<[Event]>([])
    let stripList: [StripDescription]

    init(strip: StripDescription? = nil) { stripList = strip.map { [$0] } ?? [] }

    func show(_ frame: LevelFrame) throws { events.withLock { $0.append(.frame(frame)) } }
    func shutDown() { events.withLock { $0.append(.shutDown) } }
    func showCheck(_ check: OutputCheck?) throws { events.withLock { $0.append(.check(check)) } }
    func apply(_ change: OutputChange) { events.withLock { $0.append(.change(change)) } }
    var strips: [StripDescription] { stripList }
    var last: Event? { events.withLock { $0.last } }
    /// The frames shown, in order (checks and changes left out).
    var frames: [LevelFrame] {
        events.withLock { events in
            events.compactMap { event in
                if case .frame(let frame) = event { return frame }
                return nil
            }
        }
    }
}
