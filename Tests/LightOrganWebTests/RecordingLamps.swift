import LightOrganCore
import Synchronization

/// An output that records the frames and wiring checks it was asked to show, in order.
final class RecordingLamps: LevelOutput {
    enum Event: Equatable {
        case frame(LevelFrame)
        case check(OutputCheck?)
        case shutDown
    }

    let events = Mutex<[Event]>([])

    func show(_ frame: LevelFrame) throws { events.withLock { $0.append(.frame(frame)) } }
    func shutDown() { events.withLock { $0.append(.shutDown) } }
    func showCheck(_ check: OutputCheck?) throws { events.withLock { $0.append(.check(check)) } }
    var last: Event? { events.withLock { $0.last } }
    /// The frames shown, in order (checks left out).
    var frames: [LevelFrame] {
        events.withLock { events in
            events.compactMap { event in
                if case .frame(let frame) = event { return frame }
                return nil
            }
        }
    }
}
