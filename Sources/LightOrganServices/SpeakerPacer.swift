package import LightOrganCore
import LightOrganOutput
import LightOrganPOSIX

/// Sends a live source's frames when they are due (``FrameTimeline``), for a delay
/// (`sender.delay`): the capture thread adds each frame as it is made and goes back to reading;
/// this thread sleeps until the oldest waiting frame is due (`clock_nanosleep`, absolute) and
/// sends it: one wake-up per frame, at the pace the audio was made, however it was handed over.
///
/// While the delay is 0 the capture thread sends each frame itself as it adds it (it is due at
/// once) and this thread stays asleep, unless the source's clock makes the frame due later (a
/// Snapcast room hands its sound over ahead of time). Frames are offered to the ``Gate`` with the timeline locked,
/// so the two threads never reorder them. A frame added with another delay than the one before
/// wakes this thread, which takes its next due time from the new one: a delay that shrinks (a
/// guess replaced by a reading) sends the frames at their new time, not at the old.
package final class SpeakerPacer: @unchecked Sendable {
    // @unchecked Sendable: `timeline`, `isWaiting`, `isSleeping` and `isDraining` are only touched
    // with `condition` locked.
    private let condition = ThreadCondition()
    private var timeline: FrameTimeline
    /// The pacer thread waits for a frame to be added.
    private var isWaiting = false
    /// The pacer thread sleeps until the oldest waiting frame is due.
    private var isSleeping = false
    /// The audio ended: send what waits, then finish the gate.
    private var isDraining = false
    private let gate: Gate

    /// A pacer for a source of `sampleRate` samples per second at `framesPerSecond`, sending into `gate`.
    package init(sampleRate: Double, framesPerSecond: Int, into gate: Gate) {
        timeline = FrameTimeline(sampleRate: sampleRate, framesPerSecond: framesPerSecond)
        self.gate = gate
    }

    /// Starts the pacer thread.
    package func start() {
        DedicatedThread.start(named: "lightorgan pacer", timeKeeping: true) { [self] in run() }
    }

    /// Capture thread, after each read: `samples` samples in all had arrived by `nanoseconds`.
    package func observe(samples: Int, at nanoseconds: Int64) {
        condition.withLock { timeline.observe(samples: samples, at: nanoseconds) }
    }

    /// Player thread, after each write: the source's sample `sample` leaves the DAC at
    /// `nanoseconds`. From then on each frame is due when its last sample leaves the DAC
    /// (``FrameTimeline/heard``); a due time that moves over 1 ms earlier wakes this thread.
    package func hear(sample: Int, at nanoseconds: Int64) {
        condition.withLock {
            let before = timeline.nextDue
            timeline.heard = (sample, nanoseconds)
            guard isSleeping, let after = timeline.nextDue else { return }
            if before.map({ after < $0 - 1_000_000 }) ?? true { condition.signal() }
        }
    }

    /// Capture thread: `frame` was made from the audio up to sample `endSample`; it is due
    /// `delayNanoseconds` after that sample was made. `beat`: what the beat tracker said of it, which goes
    /// with it.
    package func add(
        _ frame: LevelFrame, beat: BeatState = .none, endingAtSample endSample: Int, delayNanoseconds: Int64,
        now: Int64
    ) {
        condition.withLock {
            let changed = timeline.delayNanoseconds != delayNanoseconds
            timeline.delayNanoseconds = delayNanoseconds
            timeline.add(frame, beat: beat, endingAtSample: endSample)
            if delayNanoseconds == 0, let due = timeline.takeDueWithBeat(now: now) {
                gate.offer(due.frame, beat: due.beat)
            }
            // A frame still waits (delayed, or due later by its source's own clock: a Snapcast room's): the
            // pacer thread sleeps until it is due.
            if timeline.nextDue != nil, isWaiting || (changed && isSleeping) { condition.signal() }
        }
    }

    /// Capture thread, at the end of the audio: the frames still waiting are sent at their time,
    /// then the gate is finished (unless it was stopped first).
    func drainAndFinish() {
        condition.withLock {
            isDraining = true
            condition.signal()
        }
    }

    /// Wakes the pacer thread to see that the gate was finished (after a failure or `stop`): it
    /// ends without sending what waits.
    package func wake() {
        condition.withLock { condition.signal() }
    }

    private func run() {
        condition.lock()
        defer { condition.unlock() }
        while !gate.isStopped {
            guard let due = timeline.nextDue else {
                if isDraining { break }
                isWaiting = true
                condition.wait()
                isWaiting = false
                continue
            }
            if due > MonotonicClock.nanoseconds() {
                // Until it is due, or the delay changed (then the loop takes the due time again).
                isSleeping = true
                condition.wait(untilNanoseconds: due)
                isSleeping = false
                continue
            }
            if let due = timeline.takeDueWithBeat(now: MonotonicClock.nanoseconds()) {
                gate.offer(due.frame, beat: due.beat)
            }
        }
        if isDraining { gate.finish(nil) }
    }
}
