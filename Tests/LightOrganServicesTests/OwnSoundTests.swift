import Foundation
import LightOrganCore
import LightOrganServices
import LightOrganTestSupport
import Synchronization
import Testing

/// An own-sound input that hands over its script one step per read, in real time: a block of a tone sleeps its
/// own length first, a pause returns nil at once (as a read that timed out would), then the input waits for
/// ``close()``.
final class ScriptedSoundInput: OwnSoundInput, @unchecked Sendable {
    // @unchecked Sendable: `steps` is read by the reader thread alone; `closed` is behind its Mutex.
    enum Step {
        /// This many sample frames, the first `sounding` of them a sine at `hertz` (half of full scale), the rest
        /// silence: a beat of the band `hertz` is in.
        case beat(hertz: Double, frames: Int, sounding: Int)
        /// Nothing came within the read's timeout.
        case pause
    }

    let format = AudioFormat(sampleRate: 48_000, channels: 1)
    let label = "AirPlay"
    private var steps: [Step]
    private let closed = Mutex(false)

    init(_ steps: [Step]) { self.steps = steps }

    func read(frames: Int, timeoutMilliseconds: Int) throws -> [Int16]? {
        guard !steps.isEmpty else {
            while !closed.withLock({ $0 }) { Thread.sleep(forTimeInterval: 0.01) }
            return []
        }
        switch steps.removeFirst() {
        case .pause:
            return nil
        case .beat(let hertz, let count, let sounding):
            Thread.sleep(forTimeInterval: Double(count) / format.sampleRate)
            return (0..<count).map {
                $0 < sounding ? Int16(16_000 * sin(2 * Double.pi * hertz * Double($0) / format.sampleRate)) : 0
            }
        }
    }

    func close() { closed.withLock { $0 = true } }
}

@Suite("OwnSound: the receiver's own sound on the switchboard")
struct OwnSoundTests {
    @Test("a stream begun while the last one's frames still wait keeps the lamps (the old end closes nothing)")
    func nextStreamKeepsTheLamps() throws {
        // Stream 1: a beat, then a pause; stream 2 begins at once (as shairport-sync's second stream did,
        // 1 s after the first) while stream 1's frames still wait their 150 ms in the pacer: silence, then treble
        // beats, 0.25 s apart, from 0.4 s on (after stream 1's end was shown).
        let silence = ScriptedSoundInput.Step.beat(hertz: 6_000, frames: 4_800, sounding: 0)
        let trebleBeat = ScriptedSoundInput.Step.beat(hertz: 6_000, frames: 12_000, sounding: 2_400)
        let input = ScriptedSoundInput(
            [silence, .beat(hertz: 80, frames: 12_000, sounding: 4_800), .pause] + Array(repeating: silence, count: 4)
                + Array(repeating: trebleBeat, count: 6) + [.pause])
        let output = RecordingOutput()
        let board = LampSwitchboard(output: output, rules: ReceiverRules(), logger: quietLogger)
        let sound = OwnSound(
            input: input, player: nil, pacesUnplayed: true, framesPerSecond: 50, parameters: AnalysisParameters(),
            switchboard: board, logger: quietLogger)
        sound.start()
        defer {
            sound.stop(waiting: true)
            board.shutDown()
        }
        let deadline = Date().addingTimeInterval(10)
        while !output.frames.contains(where: { $0.treble > 100 && $0.treble > $0.bass }), Date() < deadline {
            Thread.sleep(forTimeInterval: 0.02)
        }
        let frames = output.frames
        #expect(frames.contains { !$0.isOff }, "stream 1 lit the lamps")
        #expect(
            frames.contains { $0.treble > 100 && $0.treble > $0.bass },
            "stream 2 (treble) lit the lamps: \(frames.map { [$0.bass, $0.mid, $0.treble] })")
    }
}
