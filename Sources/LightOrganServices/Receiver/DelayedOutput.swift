package import LightOrganCore
package import NIOCore
import NIOPosix
import Synchronization

/// A ``LevelOutput`` that shows each frame a fixed time after it was given (`receiver.delay`),
/// for a sender that cannot hold its frames back itself (a 2016 app) feeding a speaker with latency.
/// With a delay of 0 it passes each frame straight on, on the caller's thread; the page may change
/// the delay while it runs (``setDelay(_:)``).
///
/// Every frame is shown at its arrival time plus the delay, on an event loop timer, in order.
/// Frames that arrive within ``coalescingWindow`` of the one before replace it instead of taking
/// a timer of their own, so a flood of frames never piles up more than one frame per window: the
/// newest still wins. Lamp-off frames from the receiver's timeouts are delayed like any other (the
/// lamps finish the last `delay` of music, then go dark); ``shutDown()`` acts at once.
package final class DelayedOutput: LevelOutput {
    /// Frames closer together than this share one timer (the later one is shown).
    static let coalescingWindow = TimeAmount.milliseconds(2)

    private struct State {
        var output: any LevelOutput
        /// Frames waiting, oldest first, each with the uptime at which it is due.
        var waiting: [(due: NIODeadline, frame: LevelFrame)] = []
        var isShutDown = false
        var delay: TimeAmount
    }

    private let eventLoop: any EventLoop
    private let state: Mutex<State>
    private let failed: @Sendable (any Error) -> Void

    /// Shows on `output` each frame `delay` after it is given; `failed` hears the output's errors.
    package init(
        wrapping output: any LevelOutput, delay: TimeAmount,
        eventLoop: any EventLoop = MultiThreadedEventLoopGroup.singleton.any(),
        failed: @escaping @Sendable (any Error) -> Void
    ) {
        self.eventLoop = eventLoop
        self.failed = failed
        state = Mutex(State(output: output, delay: delay))
    }

    /// The delay now.
    package var delay: TimeAmount { state.withLock { $0.delay } }

    /// Changes the delay from the next frame on; frames still waiting are dropped (shown late,
    /// they would come after newer ones).
    func setDelay(_ delay: TimeAmount) {
        state.withLock { state in
            state.delay = delay
            state.waiting = []
        }
    }

    package func show(_ frame: LevelFrame) throws {
        let now = NIODeadline.now()
        var due = now
        let scheduled = try state.withLock { state -> Bool in
            guard !state.isShutDown else { return false }
            guard state.delay > .zero else {
                try state.output.show(frame)
                return false
            }
            due = now + state.delay
            if let last = state.waiting.last, due - last.due < Self.coalescingWindow {
                state.waiting[state.waiting.count - 1].frame = frame
                return false
            }
            state.waiting.append((due, frame))
            return true
        }
        guard scheduled else { return }
        eventLoop.scheduleTask(deadline: due) { [self] in showDue() }
    }

    /// Shows every waiting frame that is due (normally one: the one this timer was set for).
    private func showDue() {
        let now = NIODeadline.now()
        state.withLock { state in
            while let first = state.waiting.first, first.due <= now, !state.isShutDown {
                state.waiting.removeFirst()
                do { try state.output.show(first.frame) } catch { failed(error) }
            }
        }
    }

    package func shutDown() {
        state.withLock { state in
            guard !state.isShutDown else { return }
            state.isShutDown = true
            state.waiting = []
            state.output.shutDown()
        }
    }
}
