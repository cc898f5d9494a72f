import LightOrganAudio
import LightOrganCore
import LightOrganNetwork
import LightOrganServices
import Logging

/// Opens what `receiver.sound` and `receiver.play` name, before the receiver runs.
///
/// The lamps are the receiver's job: a sound that cannot be opened (shairport-sync or snapclient
/// missing, a port held by Debian's own service, a path that is not a FIFO, an absent device) is
/// logged as one line that says what to do when the receiver starts it, shown as failed, and the
/// receiver runs on without it; a playback device that cannot be opened leaves the sound analysed
/// and not played.
enum OwnSoundStartup {
    static func open(_ settings: Settings, environment: [String: String], logger: Logger)
        -> ReceiverService.OwnSoundSetup?
    {
        let receiver = settings.receiver
        let input: any OwnSoundInput
        var player: (any SoundPlayer)?
        do {
            switch receiver.sound {
            case .network:
                return nil
            case .airplay:
                let name = PublisherService.receiverName(configured: receiver.name)
                let speaker = try ShairportSpeaker(
                    name: name, port: receiver.airplayPort, folder: StateDirectory.path(environment: environment)
                ) { line in logger.info("\(line)") }
                input = speaker
                logger.info(
                    "AirPlay: speaker \"\(name)\" on port \(receiver.airplayPort) (shairport-sync \(speaker.version))")
            case .bluetooth:
                let name = PublisherService.receiverName(configured: receiver.name)
                input = try BluetoothSpeaker(name: name, environment: environment) { line in logger.info("\(line)") }
                logger.info("Bluetooth: an A2DP speaker named \"\(name)\" through BlueZ and BlueALSA")
            case .snapcast(let server):
                // snapclient hands the sound over as much earlier than the room as this receiver holds it before
                // it is heard: the player's lead and the device's buffer, with room for snapclient's 50 ms
                // blocks; with nothing to play on, the time the frames wait to be shown.
                var latency = snapcastUnplayedLatencyMilliseconds
                if case .device(let name) = receiver.play {
                    if let playback = openPlayer(
                        name, format: SnapcastSpeaker.format, label: "Snapcast", logger: logger)
                    {
                        player = playback
                        latency =
                            snapcastPlayedMarginMilliseconds + playback.bufferFrames * 1000
                            / Int(SnapcastSpeaker.format.sampleRate)
                    }
                }
                let name = PublisherService.receiverName(configured: receiver.name)
                let speaker = try SnapcastSpeaker(server: server, name: name, latencyMilliseconds: latency) { line in
                    logger.info("\(line)")
                }
                input = speaker
                let control = SnapcastControl(
                    clientID: speaker.clientID, name: name, server: { speaker.controlAddress }
                ) { report in
                    switch report {
                    case .room(let room): speaker.controlSaid(room: room, trouble: nil)
                    case .notListed: speaker.controlSaid(room: nil, trouble: nil)
                    case .unreachable(let why): speaker.controlSaid(room: nil, trouble: why)
                    }
                }
                speaker.closes(with: control.close)
                control.start()
                logger.info(
                    "Snapcast: joining \(server.map { "the server at \($0)" } ?? "the server DNS-SD finds (_snapcast._tcp)") as \"\(speaker.clientID)\", \(latency) ms ahead of the room"
                )
            case .pipe(let path):
                input = try PipeSoundInput(path: path)
                logger.info("pipe: reading raw S16LE 44.1 kHz stereo from the FIFO \(path)")
            case .capture(let device):
                input = try CaptureSoundInput(device: device)
                logger.info("line-in: capturing \(device) (\(input.format))")
            }
        } catch {
            // Said when the sound starts, and shown as failed.
            return ReceiverService.OwnSoundSetup(
                input: UnopenedSoundInput(label: receiver.sound.label, reason: "\(error)"), player: nil,
                pacesUnplayed: false, framesPerSecond: settings.sender.framesPerSecond, analysis: settings.analysis)
        }
        let opened = if case .snapcast = receiver.sound { true } else { false }  // with its latency, above
        if !opened, receiver.sound.isPlayed, case .device(let name) = receiver.play {
            player = openPlayer(name, format: input.format, label: input.label, logger: logger)
        }
        return ReceiverService.OwnSoundSetup(
            input: input, player: player, pacesUnplayed: receiver.sound.isPlayed,
            framesPerSecond: settings.sender.framesPerSecond, analysis: settings.analysis)
    }

    /// How much earlier than the room snapclient hands the sound over to a receiver that does not play it, ms.
    static let snapcastUnplayedLatencyMilliseconds = 100
    /// What a receiver that plays Snapcast's sound holds besides its device's buffer, ms: the player's lead
    /// (``SoundQueue/leadSeconds``), snapclient's 50 ms block and 30 ms to spare.
    static let snapcastPlayedMarginMilliseconds = 280

    /// The playback device `name`, nil (said in one line) when it cannot be opened.
    private static func openPlayer(_ name: String, format: AudioFormat, label: String, logger: Logger)
        -> ALSAPlayback?
    {
        do {
            let playback = try ALSAPlayback(name: name, format: format)
            logger.info(
                "\(label): played on \(name) (\(playback.periodFrames)-frame periods, \(playback.bufferFrames)-frame buffer); the lamps follow when it is heard"
            )
            return playback
        } catch {
            logger.error("receiver.play = \(name): \(error); \(label) lights the lamps and is not played")
            return nil
        }
    }
}
