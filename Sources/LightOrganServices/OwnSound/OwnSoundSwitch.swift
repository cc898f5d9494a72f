import LightOrganCore
import Logging
import Synchronization

/// Holds the receiver's own sound (``OwnSound``) and changes it while the receiver runs: the page
/// sets `receiver.sound` or `receiver.play`, the running sound stops (its lamps go off, its
/// shairport-sync ends) and the new one opens, with the same one-line errors as at start.
package final class OwnSoundSwitch: Sendable {
    private let open: @Sendable (Settings) -> ReceiverService.OwnSoundSetup?
    private let switchboard: LampSwitchboard
    private let logger: Logger
    private let current: Mutex<(sound: OwnSound?, running: Bool)>

    /// Opens the sound `settings` name (nil: none) with `open`, not started yet.
    init(
        settings: Settings, open: @escaping @Sendable (Settings) -> ReceiverService.OwnSoundSetup?,
        switchboard: LampSwitchboard, logger: Logger
    ) {
        (self.open, self.switchboard, self.logger) = (open, switchboard, logger)
        current = Mutex((nil, false))
        let sound = make(settings)
        current.withLock { $0.sound = sound }
    }

    /// What the page shows: `AirPlay: playing`, nil without a sound of its own.
    var status: String? { current.withLock { $0.sound }?.status }

    func start() {
        let sound = current.withLock { state -> OwnSound? in
            state.running = true
            return state.sound
        }
        sound?.start()
    }

    /// Stops the sound in use (waiting for it to let go of its device and port) and opens and
    /// starts the one `settings` name.
    func change(to settings: Settings) {
        let old = current.withLock { state -> OwnSound? in
            defer { state.sound = nil }
            return state.sound
        }
        old?.stop(waiting: true)
        let new = make(settings)
        let running = current.withLock { state -> Bool in
            state.sound = new
            return state.running
        }
        if running { new?.start() }
        logger.info("page: receiver.sound is now \(settings.receiver.sound), played on \(settings.receiver.play)")
    }

    func stop() {
        let sound = current.withLock { state -> OwnSound? in
            state.running = false
            return state.sound
        }
        sound?.stop(waiting: true)
    }

    private func make(_ settings: Settings) -> OwnSound? {
        open(settings).map {
            OwnSound(
                input: $0.input, player: $0.player, pacesUnplayed: $0.pacesUnplayed,
                framesPerSecond: $0.framesPerSecond,
                parameters: $0.analysis, switchboard: switchboard, logger: logger)
        }
    }
}
