import Foundation

/// `lightorgan-bench [analysis | strip] [--runs N]`: the CPU benchmarks of the core's hot loops,
/// each in a release build with no I/O (``AnalysisBenchmark``, ``StripBenchmark``); `levels-beat FILE`: the beat
/// tracker run on the levels rather than the envelopes (``LevelsBeatExperiment``).
@main
enum BenchmarkMain {
    static func main() {
        let arguments = Array(CommandLine.arguments.dropFirst())
        switch arguments.first {
        case nil, "analysis", "--runs": AnalysisBenchmark.run(arguments)
        case "strip": StripBenchmark.run(arguments)
        case "levels-beat": LevelsBeatExperiment.run(arguments)
        default:
            let usage = "usage: lightorgan-bench [analysis | strip] [--runs N] | levels-beat FILE.wav [--fps N]\n"
            FileHandle.standardError.write(Data(usage.utf8))
            exit(2)
        }
    }
}

/// The calling thread's CPU time (`CLOCK_THREAD_CPUTIME_ID`), seconds: what the code itself
/// spent, whatever else the machine runs.
enum ThreadCPUClock {
    static func seconds() -> Double {
        var now = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now)
        return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
    }
}
