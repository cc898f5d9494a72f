import LightOrganAudio
import LightOrganCore
import LightOrganServices
import Logging

/// Opens what `receiver.sound` and `receiver.play` name, before the receiver runs.
///
/// The lamps are the receiver's job: a sound that cannot be opened (shairport-sync missing, its
/// port held by Debian's own service, a path that is not a FIFO, an absent device) is logged as one
/// line that says what to do, and the receiver runs on without it; a playback device that cannot be
/// opened leaves the sound analysed and not played.
enum OwnSoundStartup {
    static func open(_ settings: Settings, environment: [String: String], logger: Logger)
        -> ReceiverService.OwnSoundSetup?
    {
        let receiver = settings.receiver
        let input: any OwnSoundInput
        do {
            switch receiver.sound {
            case .network:
                return nil
            case .airplay:
                let name =
                    receiver.name.isEmpty
                    ? ServiceName.defaultName(hostName: PublisherService.hostName()) : receiver.name
                let speaker = try ShairportSpeaker(
                    name: name, port: receiver.airplayPort, folder: StateDirectory.path(environment: environment)
                ) { line in logger.info("\(line)") }
                input = speaker
                logger.info(
                    "AirPlay: speaker \"\(name)\" on port \(receiver.airplayPort) (shairport-sync \(speaker.version))")
            case .pipe(let path):
                input = try PipeSoundInput(path: path)
                logger.info("pipe: reading raw S16LE 44.1 kHz stereo from the FIFO \(path)")
            case .capture(let device):
                input = try CaptureSoundInput(device: device)
                logger.info("line-in: capturing \(device) (\(input.format))")
            }
        } catch {
            logger.error("\(error); the receiver runs without its own sound")
            return nil
        }
        var player: (any SoundPlayer)?
        if receiver.sound.isPlayed, case .device(let name) = receiver.play {
            do {
                let playback = try ALSAPlayback(name: name, format: input.format)
                player = playback
                logger.info(
                    "\(input.label): played on \(name) (\(playback.periodFrames)-frame periods, \(playback.bufferFrames)-frame buffer); the lamps follow when it is heard"
                )
            } catch {
                logger.error("receiver.play = \(name): \(error); \(input.label) lights the lamps and is not played")
            }
        }
        return ReceiverService.OwnSoundSetup(
            input: input, player: player, pacesUnplayed: receiver.sound.isPlayed,
            framesPerSecond: settings.sender.framesPerSecond, analysis: settings.analysis)
    }
}
