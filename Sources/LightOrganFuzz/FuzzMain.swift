import Foundation
import LightOrganCore
import LightOrganTestSupport

/// `lightorgan-fuzz`: property-based fuzzing of what parses untrusted input.
///
/// `lightorgan-fuzz [TARGET…] [--count N | --share PERCENT] [--seed S]`, TARGET one of `assembler`, `handler`,
/// `arbiter`, `settings-catalog`, `settings`, `settings-file`, `page-requests`, `page-audio`,
/// `page-settings`, `page-admission`, `home-commands` (default: all, each with its own
/// default count: millions where an input costs microseconds; the whole loader, at about 0.5 ms an
/// input through the settings loader, gets tens of thousands; `--share 25`: a quarter of each). Every
/// run is seeded (SplitMix64) and prints its seed, so a failure can be replayed. Each target checks
/// properties on random input; the first violation stops the run with its input and exit status 1.
@main
enum FuzzMain {
    static func main() async {
        var arguments = Array(CommandLine.arguments.dropFirst())
        func option(_ name: String) -> UInt64? {
            guard let index = arguments.firstIndex(of: name), index + 1 < arguments.count else { return nil }
            defer { arguments.removeSubrange(index...(index + 1)) }
            return UInt64(arguments[index + 1])
        }
        let count = option("--count").map(Int.init)
        let share = min(max(option("--share") ?? 100, 1), 100)
        let seed = option("--seed") ?? UInt64(Date().timeIntervalSince1970 * 1000)
        let targets: [(String, Int, (inout SplitMix64, Int) async throws(FuzzFailure) -> Void)] = [
            ("assembler", 4_000_000, AssemblerFuzz.run),
            ("handler", 3_000_000, HandlerFuzz.run),
            ("arbiter", 1_000_000, ArbiterFuzz.run),
            ("settings-catalog", 2_000_000, SettingsFuzz.runCatalog),
            ("settings", 20_000, SettingsFuzz.runEnvironment),
            ("settings-file", 10_000, SettingsFuzz.runFile),
            ("page-requests", 1_000_000, PageFuzz.runRequests),
            ("page-audio", 100_000, PageFuzz.runAudio),
            ("page-settings", 20_000, PageFuzz.runSettings),
            ("page-admission", 300_000, AdmissionFuzz.run),
            ("home-commands", 300_000, HomeCommandFuzz.run),
        ]
        let chosen = arguments.isEmpty ? targets : targets.filter { arguments.contains($0.0) }
        guard !chosen.isEmpty else {
            print(
                "usage: lightorgan-fuzz [\(targets.map(\.0).joined(separator: "|"))…] [--count N | --share PERCENT] [--seed S]"
            )
            exit(2)
        }
        var passed = 0, failed = 0
        for (name, defaultCount, run) in chosen {
            var generator = SplitMix64(seed: seed)
            let inputs = count ?? max(1, defaultCount * Int(share) / 100)
            let started = Date()
            do {
                try await run(&generator, inputs)
                let seconds = Date().timeIntervalSince(started)
                print(
                    String(
                        format: "fuzz %@: %d inputs, no property broken (seed %llu, %.1f s, %.0f inputs/s)",
                        name, inputs, seed, seconds, Double(inputs) / seconds))
                passed += 1
            } catch {
                print("fuzz \(name): FAILED (seed \(seed)): \(error.description)")
                failed += 1
            }
        }
        print("fuzz: \(passed) passed, \(failed) failed")
        exit(failed == 0 ? 0 : 1)
    }
}

/// A broken property, with the input that broke it.
struct FuzzFailure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// Fails with `message` unless `condition` holds.
func require(_ condition: Bool, _ message: @autoclosure () -> String) throws(FuzzFailure) {
    if !condition { throw FuzzFailure(message()) }
}
