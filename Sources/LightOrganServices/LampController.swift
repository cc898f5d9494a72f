import LightOrganCore
import Logging

/// Owns the receiver's output and decides what it shows: frames from the sender that wrote last,
/// and off when that sender goes away, when no frame arrives for the timeout, and at shutdown.
///
/// Invariant: whenever no connection has delivered a frame within the timeout, the output is off.
actor LampController {
    private var output: any LevelOutput
    private let timeout: Duration
    private let clock = ContinuousClock()
    /// The connection whose frames are shown (the last one that wrote).
    private var activeConnection: Int?
    private var lastFrameTime: ContinuousClock.Instant?
    private var isOff = true
    private var isShutDown = false
    private let logger: Logger

    init(output: any LevelOutput, timeout: Duration, logger: Logger) {
        self.output = output
        self.timeout = timeout
        self.logger = logger
    }

    /// Shows `frame` from `connection`, which becomes the active sender.
    func show(_ frame: LevelFrame, from connection: Int) {
        guard !isShutDown else { return }
        activeConnection = connection
        lastFrameTime = clock.now
        apply(frame)
    }

    /// A connection closed: if its frames were on show, the lamps go off.
    func connectionEnded(_ connection: Int) {
        guard activeConnection == connection else { return }
        activeConnection = nil
        if !isOff { apply(.off) }
    }

    /// Turns the lamps off if the last frame is older than the timeout.
    func expireIfIdle() {
        guard !isOff, let lastFrameTime, clock.now - lastFrameTime >= timeout else { return }
        logger.info("no frame for \(timeout); lamps off")
        activeConnection = nil
        apply(.off)
    }

    /// Turns everything off and releases the output. Frames after this are ignored.
    func shutDown() {
        guard !isShutDown else { return }
        isShutDown = true
        if !isOff { apply(.off) }
        output.shutDown()
        isOff = true
    }

    private func apply(_ frame: LevelFrame) {
        do {
            try output.show(frame)
            isOff = frame.isOff
        } catch {
            logger.error("output failed: \(error)")
        }
    }
}
