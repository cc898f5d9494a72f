public import LightOrganCore
import LightOrganOutput
import LightOrganPOSIX
public import Logging
import Synchronization

/// The sender's frames as they are made: one ``LevelFrame`` every 1/fps s of audio, handed to a
/// ``Delivery`` on the thread that made it, which sends it there and then (a `send(2)` per
/// receiver, ``FrameSocket``): one wake-up per frame on the whole sending path, no other thread
/// involved.
///
/// - A **stored** source (file, groove) is paced by a thread of its own that sleeps until the
///   next tick of a fixed grid on the monotonic clock (`clock_nanosleep`, absolute, so the grid
///   never drifts); in that one wake-up the audio that is due is analysed (``FrameProducer``) and
///   the frame delivered.
/// - A **live** source (sound card, pipe, monitor) is paced by its device: a capture thread reads
///   the audio up to the end of the next frame period (a read returns what has arrived, so a
///   device that delivers in smaller pieces costs more reads, never a later frame), analyses it
///   at once and delivers the frame as soon as the period is complete. A pipe that delivers
///   faster than real time (`ffmpeg` without `-re`) is held back to real time: once its audio is
///   more than 50 ms ahead of the clock, which a real device never is, each frame waits for its own
///   time, so the frames leave one per period, not in bursts.
///
/// A delay (`sender.delay`, ``SpeakerSync``) holds frames back so the lamps change when the sound
/// leaves the speaker; with `auto` it follows the latency of the output a monitor source reports,
/// logging each change once. A stored source's frames pass a ``FrameDelayLine`` (a whole number of
/// periods on its clock); a live source's go to a ``SpeakerPacer``, which sends each the delay after
/// its audio was made, however the device chunked it.
public enum FrameStream {
    /// Where the frames go.
    public struct Delivery: Sendable {
        /// Called with each frame, in order, on the thread that made it; must not block.
        public let frame: @Sendable (LevelFrame) -> Void
        /// Called instead of ``frame`` for a frame of music with its beat, where the receiver analyses its own
        /// sound (nil: the beat is not wanted, as on the sender's wire).
        public let music: (@Sendable (LevelFrame, BeatState) -> Void)?
        /// Called once, last (no frame follows it): nil at the end of the audio or after `stop`,
        /// else what failed.
        public let finished: @Sendable ((any Error)?) -> Void

        public init(
            frame: @escaping @Sendable (LevelFrame) -> Void, finished: @escaping @Sendable ((any Error)?) -> Void
        ) {
            self.frame = frame
            self.music = nil
            self.finished = finished
        }

        /// A delivery that takes each frame with what the beat tracker said of it.
        public init(
            music: @escaping @Sendable (LevelFrame, BeatState) -> Void,
            finished: @escaping @Sendable ((any Error)?) -> Void
        ) {
            self.frame = { music($0, .none) }
            self.music = music
            self.finished = finished
        }
    }

    /// Starts analysing `source` into `delivery`; returns a function that stops it (from any thread).
    ///
    /// Overruns of a live source (audio lost because it was not read in time) are logged as they happen.
    public static func start(
        source: any AudioSource, framesPerSecond: Int, parameters: AnalysisParameters = .standard,
        delay: LightDelay = .milliseconds(0), logger: Logger, into delivery: Delivery
    ) -> @Sendable () -> Void {
        let sync = SpeakerSync(setting: delay, framesPerSecond: framesPerSecond)
        if case .milliseconds(let value) = delay, value > 0 {
            logger.info("lights delayed \(sync.delayMilliseconds) ms (sender.delay)")
        }
        if source.isLive {
            return spawn(named: "lightorgan capture", into: delivery) { gate in
                capture(
                    source, framesPerSecond: framesPerSecond, parameters: parameters, sync: sync, logger: logger,
                    into: gate)
            }
        }
        // Stored: no output to follow, so the delay stays as set.
        return spawn(named: "lightorgan pacer", into: delivery) { gate in
            var producer = FrameProducer(source: source, parameters: parameters)
            var storedSync = sync
            pace(framesPerSecond: framesPerSecond, into: gate) { seconds in
                try producer.frame(upTo: seconds).map { storedSync.pass($0) }
            }
        }
    }

    /// The ``CounterPattern`` at `framesPerSecond` on a fixed grid: frame n is made at tick n, and
    /// `made(n)` is called just before it is delivered (to log when the sender had it).
    public static func counting(
        framesPerSecond: Int, made: @escaping @Sendable (Int) -> Void, into delivery: Delivery
    ) -> @Sendable () -> Void {
        spawn(named: "lightorgan pacer", into: delivery) { gate in
            var counter = 0
            pace(framesPerSecond: framesPerSecond, into: gate) { _ in
                counter += 1
                made(counter)
                return CounterPattern.frame(counter)
            }
        }
    }

    /// Runs `body` on a thread of its own, making frames into a ``Gate`` to `delivery`; returns the
    /// function that stops it.
    private static func spawn(
        named name: String, into delivery: Delivery, _ body: @escaping @Sendable (Gate) -> Void
    ) -> @Sendable () -> Void {
        let gate = Gate(delivery)
        DedicatedThread.start(named: name, timeKeeping: true) { body(gate) }
        return { gate.finish(nil) }
    }

    /// Stored source or pattern: frame n is made and delivered at start + n periods, one
    /// absolute `clock_nanosleep` per frame (a late wake-up never shifts the grid, and ticks it
    /// missed are skipped); `make` gets the seconds since the start and returns nil at the end.
    private static func pace(framesPerSecond: Int, into gate: Gate, make: (Double) throws -> LevelFrame?) {
        let period = 1_000_000_000 / Int64(framesPerSecond)
        let origin = MonotonicClock.nanoseconds()
        var tick: Int64 = 0
        do {
            while !gate.isStopped {
                tick += 1
                MonotonicClock.sleep(untilNanoseconds: origin + period * tick)
                // The audio due by now (more than a period's worth when the wake-up came late).
                let elapsed = MonotonicClock.nanoseconds() - origin
                guard let frame = try make(Double(elapsed) / 1e9) else { break }
                gate.offer(frame)
                // Woken more than a period late (a busy machine): the frame just made holds all the
                // audio due, so the ticks missed are skipped, not made up in a burst.
                tick = max(tick, elapsed / period)
            }
            gate.finish(nil)
        } catch {
            gate.finish(error)
        }
    }

    /// Live source: blocking reads on this thread, a frame whenever a frame period of audio is in.
    private static func capture(
        _ source: any AudioSource, framesPerSecond: Int, parameters: AnalysisParameters, sync: SpeakerSync,
        logger: Logger, into gate: Gate
    ) {
        var source = source
        var sync = sync
        let output = source as? any OutputLatencyReporting  // a monitor: its speaker plays later
        let format = source.format
        var analyzer = BandAnalyzer(sampleRate: format.sampleRate, parameters: parameters)
        var consumed = 0
        var nextFrameAt = Int(format.sampleRate) / framesPerSecond
        var frameIndex = 1
        let clock = ContinuousClock()
        var start: ContinuousClock.Instant?
        var overrunsLogged = 0
        var throttled = false  // the source delivered faster than real time: it is held back frame by frame
        let overrunCounter = source as? any OverrunCounting  // a class (ALSA): it counts as we read
        let timing = source as? any CaptureTimeReporting  // a class (a pipe, a monitor): it times its audio
        var lagLog = CaptureLagLog()
        // A delay (a number, or `auto` with an output to follow) sends each frame at its time.
        let delays = output == nil ? sync.delayMilliseconds > 0 : sync.setting != .milliseconds(0)
        let pacer =
            delays ? SpeakerPacer(sampleRate: format.sampleRate, framesPerSecond: framesPerSecond, into: gate) : nil
        pacer?.start()
        do {
            while !gate.isStopped {
                // Up to the end of the frame period (at least 32 sample frames).
                let count = try source.read(frames: max(32, nextFrameAt - consumed), into: &analyzer)
                if count == 0 { break }
                let arrived = MonotonicClock.nanoseconds()
                let began = start ?? clock.now
                start = began
                consumed += count
                // When the audio was made: a block's time, not that of this piece of it, less the lag
                // the sound server or device states.
                if let readAhead = timing?.readAhead {
                    pacer?.observe(samples: consumed + readAhead.frames, at: readAhead.madeAt)
                } else {
                    pacer?.observe(samples: consumed, at: arrived)
                }
                // What the capture cost, in the log (an unknown lag only when frames are delayed).
                let lag = timing == nil ? .unknown("the source does not say") : timing?.captureLag
                if let line = lagLog.take(lag, now: arrived, delayed: pacer != nil) { logger.info("\(line)") }
                // A pipe faster than real time: once it is 50 ms ahead, every frame waits for its own
                // time (bursts of frames would reach the lamps as one: the receiver shows the newest).
                // Not a source that keeps real time: a sound server's first block can hold 50 ms or
                // more made before the first read, and holding the frames to that read's clock would
                // send every later frame that much late.
                let ahead = Double(consumed) / format.sampleRate - (clock.now - began) / .seconds(1)
                if timing?.keepsRealTime != true, ahead > (throttled ? 0 : 0.05) {
                    throttled = true
                    DedicatedThread.sleep(seconds: ahead)
                }
                if let counter = overrunCounter, counter.overruns != overrunsLogged {
                    overrunsLogged = counter.overruns
                    logger.warning(
                        "capture overrun (\(overrunsLogged) so far): audio was lost because the machine was too busy to read it"
                    )
                }
                if consumed >= nextFrameAt {
                    if let output, let change = sync.follow(output.outputLatency) { logger.info("\(change)") }
                    let frame = analyzer.nextFrame()
                    if let pacer {
                        pacer.add(
                            frame, endingAtSample: consumed,
                            delayNanoseconds: Int64(sync.delayMilliseconds) * 1_000_000,
                            now: arrived)
                    } else {
                        gate.offer(frame)
                    }
                    while nextFrameAt <= consumed {
                        frameIndex += 1
                        nextFrameAt = Int(Double(frameIndex) * format.sampleRate / Double(framesPerSecond))
                    }
                }
            }
            if let pacer { pacer.drainAndFinish() } else { gate.finish(nil) }
        } catch {
            gate.finish(error)
        }
        pacer?.wake()
    }
}

/// The door between the thread making frames and the ``FrameStream/Delivery``: frames pass until
/// it is finished, `finished` is delivered once, and no frame follows it (a frame being delivered
/// when `stop` comes completes first, so the all-off frame sent after `finished` is the last).
package final class Gate: Sendable {
    private let delivery: FrameStream.Delivery
    private let stopped = Mutex(false)

    package init(_ delivery: FrameStream.Delivery) {
        self.delivery = delivery
    }

    var isStopped: Bool { stopped.withLock { $0 } }

    func offer(_ frame: LevelFrame, beat: BeatState = .none) {
        stopped.withLock { isStopped in
            guard !isStopped else { return }
            if let music = delivery.music { music(frame, beat) } else { delivery.frame(frame) }
        }
    }

    package func finish(_ error: (any Error)?) {
        let first = stopped.withLock { isStopped in
            defer { isStopped = true }
            return !isStopped
        }
        if first { delivery.finished(error) }
    }
}
