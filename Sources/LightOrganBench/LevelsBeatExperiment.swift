import Foundation
import LightOrganCore

/// `lightorgan-bench levels-beat FILE.wav [--fps N]`: what a receiver would know of the beat if it ran a
/// ``BeatTracker`` on the levels it receives (the 3-byte frames) rather than on the band envelopes, printed as
/// `lightorgan analyze` prints its own (`t_s,bass,mid,treble,beat,bpm`), so that `beat_bench.py` scores it
/// beside the tracker as it runs (TheAnalysis.md, "The beat on the lights").
///
/// The levels are the dance response's, at `--fps` (default 100; the 2016 apps send about 10), each level / 255
/// taken as the band's envelope.
enum LevelsBeatExperiment {
    static func run(_ arguments: [String]) {
        guard arguments.count >= 2 else {
            FileHandle.standardError.write(Data("usage: lightorgan-bench levels-beat FILE.wav [--fps N]\n".utf8))
            exit(2)
        }
        let framesPerSecond = arguments.firstIndex(of: "--fps").flatMap { Int(arguments[$0 + 1]) } ?? 100
        do {
            var producer = FrameProducer(source: try WAVFile(path: arguments[1]))
            var tracker = BeatTracker()
            var lines = ["t_s,bass,mid,treble,beat,bpm"]
            var frame = 1
            while let levels = try producer.frame(upTo: Double(frame) / Double(framesPerSecond)) {
                let envelopes = SIMD3(Float(levels.bass), Float(levels.mid), Float(levels.treble)) / 255
                let beat = tracker.update(envelopes: envelopes, elapsed: 1 / Double(framesPerSecond))
                lines.append(
                    "\(producer.audioTime),\(levels.bass),\(levels.mid),\(levels.treble),\(beat.beat),\(beat.bpm)")
                frame += 1
            }
            print(lines.joined(separator: "\n"))
        } catch {
            FileHandle.standardError.write(Data("\(error)\n".utf8))
            exit(1)
        }
    }
}
