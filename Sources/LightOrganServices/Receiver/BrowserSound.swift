import LightOrganCore
import LightOrganNetwork
import LightOrganWeb
import Synchronization

/// A page's sound as a sender: analysed here like `lightorgan send` analyses its audio, and
/// offered to the ``LampSwitchboard`` as frames of a connection of its own, so the same rules
/// hold (the allow list, newest sender wins, lamps off when it stops or goes quiet).
final class BrowserSound: PageSoundSink {
    private let connection: FrameConnection
    private let switchboard: LampSwitchboard
    private let analysis: Mutex<BrowserSoundAnalysis>

    /// Opens the connection on the switchboard; nil when the switchboard refuses it (allow list,
    /// connection limit), with the reason logged by the switchboard.
    init?(connection: FrameConnection, sampleRate: Int, parameters: AnalysisParameters, switchboard: LampSwitchboard) {
        guard switchboard.opened(connection) else { return nil }
        self.connection = connection
        self.switchboard = switchboard
        analysis = Mutex(BrowserSoundAnalysis(sampleRate: sampleRate, parameters: parameters))
    }

    func play(_ samples: [Float]) {
        let (newest, completed, beat) = analysis.withLock { analysis in
            let (newest, completed) = analysis.analyze(samples)
            return (newest, completed, analysis.newestBeat)
        }
        switchboard.arrived(
            newest, beat: beat, completed: completed, bytes: completed * LevelFrame.byteCount, on: connection)
    }

    func stop() {
        switchboard.closed(connection)
    }
}
