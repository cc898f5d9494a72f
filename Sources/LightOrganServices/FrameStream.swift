import Foundation
public import LightOrganCore
public import Logging
import Synchronization

/// The sender's frames as they are made: one ``LevelFrame`` every 1/fps s of audio.
///
/// - A **stored** source (file, groove) is paced by the monotonic clock: a task wakes on a fixed
///   grid and analyses exactly the audio that is due (``FrameProducer``).
/// - A **live** source (sound card, pipe) is paced by its device: a capture thread reads blocks of
///   about 5 ms, analyses them at once and emits a frame as soon as the audio of a frame period has
///   arrived, so no frame waits for a timer. A pipe that delivers faster than real time (`ffmpeg`
///   without `-re`) is held back to real time: reading waits while the audio is more than 50 ms
///   ahead of the clock, which a real device never is.
///
/// The stream keeps only the newest frame: a consumer that falls behind (a stalled network) never
/// makes capture wait or frames queue up; it gets the present when it asks again.
public enum FrameStream {
    /// Starts analysing `source`. The frames finish when the source ends or `stop` is called.
    ///
    /// Overruns of a live source (audio lost because it was not read in time) are logged as they happen.
    public static func start(
        source: any AudioSource, framesPerSecond: Int, parameters: AnalysisParameters = .standard, logger: Logger
    ) -> (frames: AsyncThrowingStream<LevelFrame, any Error>, stop: @Sendable () -> Void) {
        let (stream, continuation) = AsyncThrowingStream<LevelFrame, any Error>.makeStream(bufferingPolicy: .bufferingNewest(1))
        let stop: @Sendable () -> Void = { continuation.finish() }
        if source.isLive {
            let thread = Thread {
                capture(source, framesPerSecond: framesPerSecond, parameters: parameters, logger: logger, into: continuation)
            }
            thread.name = "lightorgan capture"
            thread.qualityOfService = .userInteractive
            thread.start()
        } else {
            let task = Task { await pace(source, framesPerSecond: framesPerSecond, parameters: parameters, into: continuation) }
            continuation.onTermination = { _ in task.cancel() }
        }
        return (stream, stop)
    }

    /// The ``CounterPattern`` at `framesPerSecond` on a fixed grid: frame n is made at tick n, and
    /// `made(n)` is called just before it is yielded (to log when the sender had it).
    public static func counting(
        framesPerSecond: Int, made: @escaping @Sendable (Int) -> Void
    ) -> (frames: AsyncThrowingStream<LevelFrame, any Error>, stop: @Sendable () -> Void) {
        let (stream, continuation) = AsyncThrowingStream<LevelFrame, any Error>.makeStream(bufferingPolicy: .bufferingNewest(1))
        let task = Task {
            let clock = ContinuousClock()
            let start = clock.now
            let period = Duration.seconds(1) / framesPerSecond
            var counter = 0
            while !Task.isCancelled {
                counter += 1
                guard (try? await clock.sleep(until: start + period * counter)) != nil else { break }
                made(counter)
                continuation.yield(CounterPattern.frame(counter))
            }
            continuation.finish()
        }
        continuation.onTermination = { _ in task.cancel() }
        return (stream, { continuation.finish() })
    }

    /// Stored source: a frame per tick of a fixed grid on the monotonic clock.
    private static func pace(
        _ source: any AudioSource, framesPerSecond: Int, parameters: AnalysisParameters,
        into continuation: AsyncThrowingStream<LevelFrame, any Error>.Continuation
    ) async {
        var producer = FrameProducer(source: source, parameters: parameters)
        let clock = ContinuousClock()
        let start = clock.now
        let period = Duration.seconds(1) / framesPerSecond
        var tick = 0
        do {
            while !Task.isCancelled {
                tick += 1
                try await clock.sleep(until: start + period * tick)
                guard let frame = try producer.frame(upTo: (clock.now - start) / .seconds(1)) else { break }
                continuation.yield(frame)
            }
            continuation.finish()
        } catch is CancellationError {
            continuation.finish()
        } catch {
            continuation.finish(throwing: error)
        }
    }

    /// Live source: blocking reads on this thread, a frame whenever a frame period of audio is in.
    private static func capture(
        _ source: any AudioSource, framesPerSecond: Int, parameters: AnalysisParameters, logger: Logger,
        into continuation: AsyncThrowingStream<LevelFrame, any Error>.Continuation
    ) {
        var source = source
        let format = source.format
        var analyzer = BandAnalyzer(sampleRate: format.sampleRate, parameters: parameters)
        let block = max(32, Int(format.sampleRate / 200))  // about 5 ms
        var consumed = 0
        var nextFrameAt = Int(format.sampleRate) / framesPerSecond
        var frameIndex = 1
        let stopped = StopFlag()
        continuation.onTermination = { _ in stopped.set() }
        let clock = ContinuousClock()
        var start: ContinuousClock.Instant?
        var overrunsLogged = 0
        let overrunCounter = source as? any OverrunCounting  // a class (ALSA): it counts as we read
        do {
            while !stopped.isSet {
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
                    continuation.yield(analyzer.nextFrame())
                    while nextFrameAt <= consumed {
                        frameIndex += 1
                        nextFrameAt = Int(Double(frameIndex) * format.sampleRate / Double(framesPerSecond))
                    }
                }
            }
            continuation.finish()
        } catch {
            continuation.finish(throwing: error)
        }
    }
}

/// A flag set once from any thread and read from another.
final class StopFlag: Sendable {
    private let state = Mutex(false)
    func set() { state.withLock { $0 = true } }
    var isSet: Bool { state.withLock { $0 } }
}
