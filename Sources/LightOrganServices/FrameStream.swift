import Foundation
public import LightOrganCore
public import Logging
public import NIOCore
import Synchronization

/// The sender's frames as they are made: one ``LevelFrame`` every 1/fps s of audio, handed to a
/// ``Delivery`` on its event loop (the loop that owns every receiver connection, so sending a
/// frame is a plain write on the thread that is already awake).
///
/// - A **stored** source (file, groove) is paced on that event loop: a timer on a fixed grid of the
///   monotonic clock wakes it, the audio that is due is analysed (``FrameProducer``) and the frame
///   written, all in that one wake-up.
/// - A **live** source (sound card, pipe, monitor) is paced by its device: a capture thread reads
///   blocks of about 5 ms, analyses them at once and, as soon as the audio of a frame period has
///   arrived, puts the frame in a one-frame slot and wakes the event loop (one wake-up per frame
///   on the sending path; a frame not yet taken is replaced by the newer one). A pipe that delivers
///   faster than real time (`ffmpeg` without `-re`) is held back to real time: reading waits while
///   the audio is more than 50 ms ahead of the clock, which a real device never is.
///
/// Every frame passes a ``SpeakerSync`` (`sender.delay`), which holds it back a whole number of
/// frame periods so the lamps change when the sound leaves the speaker; with `auto` it follows the
/// latency of the output a monitor source reports, logging each change once.
public enum FrameStream {
    /// Where the frames go.
    public struct Delivery: Sendable {
        /// The loop both callbacks run on.
        public let eventLoop: any EventLoop
        /// Called with each frame, in order.
        public let frame: @Sendable (LevelFrame) -> Void
        /// Called once, last: nil at the end of the audio or after `stop`, else what failed.
        public let finished: @Sendable ((any Error)?) -> Void

        public init(
            eventLoop: any EventLoop, frame: @escaping @Sendable (LevelFrame) -> Void,
            finished: @escaping @Sendable ((any Error)?) -> Void
        ) {
            self.eventLoop = eventLoop
            self.frame = frame
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
            let handoff = Handoff(delivery)
            let thread = Thread {
                capture(
                    source, framesPerSecond: framesPerSecond, parameters: parameters, sync: sync, logger: logger,
                    into: handoff)
            }
            thread.name = "lightorgan capture"
            thread.qualityOfService = .userInteractive
            thread.start()
            return { handoff.stop() }
        }
        // Stored: no output to follow, so the delay stays as set.
        var producer = FrameProducer(source: source, parameters: parameters)
        var storedSync = sync
        let pacer = Pacer(framesPerSecond: framesPerSecond, delivery: delivery) { seconds in
            try producer.frame(upTo: seconds).map { storedSync.pass($0) }
        }
        return pacer.start()
    }

    /// The ``CounterPattern`` at `framesPerSecond` on a fixed grid: frame n is made at tick n, and
    /// `made(n)` is called just before it is delivered (to log when the sender had it).
    public static func counting(
        framesPerSecond: Int, made: @escaping @Sendable (Int) -> Void, into delivery: Delivery
    ) -> @Sendable () -> Void {
        var counter = 0
        let pacer = Pacer(framesPerSecond: framesPerSecond, delivery: delivery) { _ in
            counter += 1
            made(counter)
            return CounterPattern.frame(counter)
        }
        return pacer.start()
    }

    /// Live source: blocking reads on this thread, a frame whenever a frame period of audio is in.
    private static func capture(
        _ source: any AudioSource, framesPerSecond: Int, parameters: AnalysisParameters, sync: SpeakerSync,
        logger: Logger, into handoff: Handoff
    ) {
        var source = source
        var sync = sync
        let output = source as? any OutputLatencyReporting  // a monitor: its speaker plays later
        let format = source.format
        var analyzer = BandAnalyzer(sampleRate: format.sampleRate, parameters: parameters)
        let block = max(32, Int(format.sampleRate / 200))  // about 5 ms
        var consumed = 0
        var nextFrameAt = Int(format.sampleRate) / framesPerSecond
        var frameIndex = 1
        let clock = ContinuousClock()
        var start: ContinuousClock.Instant?
        var overrunsLogged = 0
        let overrunCounter = source as? any OverrunCounting  // a class (ALSA): it counts as we read
        do {
            while !handoff.isStopped {
                let samples = try source.read(frames: block)
                if samples.isEmpty { break }
                let began = start ?? clock.now
                start = began
                analyzer.process(interleaved: samples, channels: format.channels)
                consumed += samples.count / format.channels
                let ahead = Double(consumed) / format.sampleRate - (clock.now - began) / .seconds(1)
                if ahead > 0.05 { Thread.sleep(forTimeInterval: ahead) }
                if let counter = overrunCounter, counter.overruns != overrunsLogged {
                    overrunsLogged = counter.overruns
                    logger.warning("capture overrun (\(overrunsLogged) so far): audio was lost because the machine was too busy to read it")
                }
                if consumed >= nextFrameAt {
                    if let output, let change = sync.follow(output.outputLatency) { logger.info("\(change)") }
                    handoff.offer(sync.pass(analyzer.nextFrame()))
                    while nextFrameAt <= consumed {
                        frameIndex += 1
                        nextFrameAt = Int(Double(frameIndex) * format.sampleRate / Double(framesPerSecond))
                    }
                }
            }
            handoff.finish(nil)
        } catch {
            handoff.finish(error)
        }
    }
}

/// Frames from a capture thread to the event loop: a one-frame slot (the newest wins) and one
/// wake-up of the loop per frame taken; `finished` is delivered once, after the last frame.
private final class Handoff: Sendable {
    private struct Slot {
        var frame: LevelFrame?
        var isStopped = false
        var isFinished = false
    }

    private let delivery: FrameStream.Delivery
    private let slot = Mutex(Slot())

    init(_ delivery: FrameStream.Delivery) {
        self.delivery = delivery
    }

    var isStopped: Bool { slot.withLock { $0.isStopped } }

    func offer(_ frame: LevelFrame) {
        let wake = slot.withLock { slot -> Bool in
            guard !slot.isStopped else { return false }
            defer { slot.frame = frame }
            return slot.frame == nil
        }
        guard wake else { return }
        delivery.eventLoop.execute { [self] in
            if let frame = slot.withLock({ slot in defer { slot.frame = nil }; return slot.frame }) { delivery.frame(frame) }
        }
    }

    func stop() { finish(nil) }

    func finish(_ error: (any Error)?) {
        let first = slot.withLock { slot -> Bool in
            slot.isStopped = true
            defer { slot.isFinished = true }
            return !slot.isFinished
        }
        guard first else { return }
        // After any frame already handed to the loop.
        delivery.eventLoop.execute { [delivery] in delivery.finished(error) }
    }
}

/// A stored source (or a test pattern) paced on the delivery's event loop: a timer on a fixed grid,
/// frame n made and delivered at start + n periods, in the same wake-up.
private final class Pacer: @unchecked Sendable {
    // @unchecked Sendable: every var is touched only on `delivery.eventLoop`.
    private let delivery: FrameStream.Delivery
    private let periodNanoseconds: Int64
    /// Makes the frame for the audio up to the given second of the stream; nil at its end.
    private var make: (Double) throws -> LevelFrame?
    private var origin = NIODeadline.uptimeNanoseconds(0)
    private var tick: Int64 = 0
    private var timer: Scheduled<Void>?
    private var isFinished = false

    init(framesPerSecond: Int, delivery: FrameStream.Delivery, make: @escaping (Double) throws -> LevelFrame?) {
        self.delivery = delivery
        self.periodNanoseconds = 1_000_000_000 / Int64(framesPerSecond)
        self.make = make
    }

    /// Starts the timer; returns the function that stops it.
    func start() -> @Sendable () -> Void {
        delivery.eventLoop.execute { [self] in
            origin = .now()
            schedule()
        }
        return { [self] in delivery.eventLoop.execute { self.finish(nil) } }
    }

    private func schedule() {
        tick += 1
        timer = delivery.eventLoop.scheduleTask(deadline: origin + .nanoseconds(periodNanoseconds * tick)) { [self] in fire() }
    }

    private func fire() {
        guard !isFinished else { return }
        let elapsed = Double((NIODeadline.now() - origin).nanoseconds) / 1e9
        do {
            guard let frame = try make(elapsed) else { return finish(nil) }
            delivery.frame(frame)
            schedule()
        } catch {
            finish(error)
        }
    }

    private func finish(_ error: (any Error)?) {
        guard !isFinished else { return }
        isFinished = true
        timer?.cancel()
        delivery.finished(error)
    }
}
