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
        /// Frames waiting, oldest first, each with the uptime at which it is due and, for a frame of music, its
        /// beat (``Music``).
        var waiting: [(due: NIODeadline, frame: LevelFrame, music: Music?)] = []
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

    /// A frame of music, and what the beat tracker said of it (nil: not known here).
    struct Music {
        var beat: BeatState?
    }

    package func show(_ frame: LevelFrame) throws {
        try show(frame, music: nil)
    }

    package func show(_ frame: LevelFrame, beat: BeatState?) throws {
        try show(frame, music: Music(beat: beat))
    }

    private func show(_ frame: LevelFrame, music: Music?) throws {
        let now = NIODeadline.now()
        var due = now
        let scheduled = try state.withLock { state -> Bool in
            guard !state.isShutDown else { return false }
            guard state.delay > .zero else {
                try Self.show(frame, music: music, on: &state.output)
                return false
            }
            due = now + state.delay
            if let last = state.waiting.last, due - last.due < Self.coalescingWindow {
                // The later frame wins, and keeps a beat the one it replaces announced.
                var merged = music
                if let beat = last.music?.beat, beat.beat > 0, var newer = merged?.beat, newer.beat == 0 {
                    newer.beat = beat.beat
                    merged?.beat = newer
                }
                state.waiting[state.waiting.count - 1].frame = frame
                state.waiting[state.waiting.count - 1].music = merged
                return false
            }
            state.waiting.append((due, frame, music))
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
                do { try Self.show(first.frame, music: first.music, on: &state.output) } catch { failed(error) }
            }
        }
    }

    private static func show(_ frame: LevelFrame, music: Music?, on output: inout any LevelOutput) throws {
        if let music { try output.show(frame, beat: music.beat) } else { try output.show(frame) }
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
