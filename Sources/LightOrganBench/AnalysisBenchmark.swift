import Foundation
import LightOrganCore

/// `lightorgan-bench` (or `lightorgan-bench analysis`): CPU cost of the analysis loop, in CPU
/// seconds per second of audio.
///
/// Input as the issue states it: 44.1 kHz stereo 16-bit, 100 frames per second, in memory (the
/// loop only: no file or device I/O). The signal is the demo groove, 60 s long. Time is the
/// thread's CPU time (CLOCK_THREAD_CPUTIME_ID); the best of `--runs` runs (default 7) is reported,
/// with the median, so that a busy neighbour does not count against the code.
enum AnalysisBenchmark {
    static func run(_ arguments: [String]) {
        let runs = arguments.firstIndex(of: "--runs").flatMap { Int(arguments[$0 + 1]) } ?? 7
        let seconds = 60
        let framesPerSecond = 100
        var groove = DemoGroove()
        let mono = groove.read(frames: 44_100 * seconds)
        var stereo = [Int16](repeating: 0, count: mono.count * 2)
        for (index, sample) in mono.enumerated() {
            stereo[2 * index] = Int16(sample * 32_000)
            stereo[2 * index + 1] = Int16(sample * 24_000)
        }
        let block = 44_100 / framesPerSecond * 2
        var costs: [Double] = []
        var checksum = 0
        for _ in 0..<runs {
            var analyzer = BandAnalyzer(sampleRate: 44_100)
            let start = ThreadCPUClock.seconds()
            stereo.withUnsafeBufferPointer { samples in
                for frame in 0..<(seconds * framesPerSecond) {
                    analyzer.process(
                        int16Interleaved: UnsafeBufferPointer(
                            rebasing: samples[(frame * block)..<((frame + 1) * block)]),
                        channels: 2)
                    checksum &+= Int(analyzer.nextFrame().mid)
                }
            }
            costs.append((ThreadCPUClock.seconds() - start) / Double(seconds))
        }
        costs.sort()
        let best = costs[0], median = costs[costs.count / 2]
        print(
            String(
                format:
                    "analysis CPU per second of audio (44.1 kHz stereo s16, %d fps): best %.6f s, median %.6f s (%.0fx real time); checksum %d",
                framesPerSecond, best, median, 1 / best, checksum))
    }

}
