import LightOrganCore
import LightOrganTestSupport
import Testing

@Suite("PWM grid")
struct PWMGridTests {
    /// 200 Hz, the receiver's default.
    static let period = 0.005

    @Test("keeps every edge on its grid while the writes are on time or late within the tolerance")
    func staysOnGrid() {
        var grid = PWMGrid(period: Self.period, start: 10)
        #expect(grid.tolerance == 0.0005)
        for period in 0..<100 {
            let start = 10 + Double(period) * Self.period
            #expect(abs(grid.due(0) - start) < 1e-9)
            let risingMoved = grid.wrote(edgeAt: 0, at: start + 0.0004)
            #expect(!risingMoved)
            #expect(abs(grid.due(0.81) - (start + 0.00405)) < 1e-9)
            let fallingMoved = grid.wrote(edgeAt: 0.81, at: start + 0.00405 + 0.0001)
            #expect(!fallingMoved)
            grid.advance()
        }
        #expect(grid.restarts == 0)
    }

    @Test("a rising edge written late starts a whole period anew at the write")
    func lateRiseRestarts() {
        var grid = PWMGrid(period: Self.period, start: 0)
        let moved = grid.wrote(edgeAt: 0, at: 0.003)
        #expect(moved)
        #expect(grid.due(0) == 0.003)
        #expect(abs(grid.due(0.81) - (0.003 + 0.00405)) < 1e-9, "the on time keeps its length")
        grid.advance()
        #expect(abs(grid.due(0) - 0.008) < 1e-9, "the next period starts a whole period after the late one")
        #expect(grid.restarts == 1)
    }

    @Test("woken many periods late, it writes no passed edge: the period starts at the wake-up")
    func noCatchingUp() {
        var grid = PWMGrid(period: Self.period, start: 0)
        grid.advance()
        let moved = grid.wrote(edgeAt: 0, at: 1.0)
        #expect(moved)
        for offset in [0, 0.25, 0.81] {
            #expect(grid.due(offset) >= 1.0, "edge at \(offset) is due after the wake-up")
        }
    }

    @Test("a falling edge written late keeps the whole off time after it")
    func lateFallKeepsOffTime() {
        var grid = PWMGrid(period: Self.period, start: 0)
        let risingMoved = grid.wrote(edgeAt: 0, at: 0)
        #expect(!risingMoved)
        let fallingMoved = grid.wrote(edgeAt: 0.8, at: 0.0047)  // due at 0.004, 0.7 ms late
        #expect(fallingMoved)
        grid.advance()
        #expect(abs(grid.due(0) - (0.0047 + 0.001)) < 1e-9)
    }

    @Test("restarts at a given time after steady lines")
    func restartAfterSteady() {
        var grid = PWMGrid(period: Self.period, start: 0)
        grid.restart(at: 42)
        #expect(grid.due(0) == 42)
        #expect(grid.restarts == 0, "a restart after idling is not a late write")
    }

    /// How late each wake-up is, by its index, seconds.
    enum Load: String, CaseIterable, CustomTestStringConvertible {
        case idle, jitterWithinTolerance, everySeventhNineTenthsLate, bursts, randomUpToTwoPeriods
        var testDescription: String { rawValue }

        func lateness(_ wake: Int, _ random: inout SplitMix64) -> Double {
            switch self {
            case .idle: 0
            case .jitterWithinTolerance: Double.random(in: 0..<0.00045, using: &random)
            case .everySeventhNineTenthsLate: wake % 7 == 3 ? 0.9 * PWMGridTests.period : 0.00005
            case .bursts: wake % 50 < 5 ? 3 * PWMGridTests.period : 0.0001
            case .randomUpToTwoPeriods:
                Double.random(in: 0..<1, using: &random) < 0.2
                    ? Double.random(in: 0..<2 * PWMGridTests.period, using: &random) : 0.0001
            }
        }
    }

    @Test(
        "under any load no period is squeezed: every on and off phase lasts its share less the tolerance, or longer",
        arguments: Load.allCases)
    func neverSqueezes(load: Load) {
        let duty = 0.812, period = Self.period
        let edges = PWMSchedule(duties: [duty]).edges
        var grid = PWMGrid(period: period, start: 0)
        var random = SplitMix64(seed: 38)
        var now = 0.0, wake = 0
        var writes: [(time: Double, value: Int32)] = []
        for _ in 0..<400 {
            for edge in edges {
                // The PWM thread: sleeps until the edge is due (at once when that has passed), wakes
                // late by the load, writes, reads the clock.
                now = max(now, grid.due(edge.offset)) + load.lateness(wake, &random)
                wake += 1
                writes.append((now, edge.values[0]))
                grid.wrote(edgeAt: edge.offset, at: now)
            }
            grid.advance()
        }
        let tolerance = grid.tolerance + 1e-12
        let rises = writes.filter { $0.value == 1 }.map(\.time)
        let lengths = zip(rises, rises.dropFirst()).map { $1 - $0 }
        #expect(lengths.allSatisfy { $0 >= period - tolerance }, "shortest period \(lengths.min() ?? 0) s")
        for (write, next) in zip(writes, writes.dropFirst()) {
            let share = write.value == 1 ? duty : 1 - duty
            #expect(next.time - write.time >= share * period - tolerance, "a phase at \(write.time) s")
        }
        let sorted = lengths.sorted()
        let median = sorted[sorted.count / 2]
        if load == .idle || load == .jitterWithinTolerance {
            #expect(abs(median - period) < grid.tolerance, "on its grid: \(median) s")
            #expect(grid.restarts == 0)
            let mean = (rises.last! - rises.first!) / Double(rises.count - 1)
            #expect(abs(mean - period) < 0.00001, "the frequency exact on average: \(1 / mean) Hz")
        }
    }
}
