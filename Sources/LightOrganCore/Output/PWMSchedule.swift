#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One period of software PWM for several lines: which values to write, and when.
///
/// Edges, not busy loops: at the start of the period every line with a duty above 0 goes on (one bulk
/// write), then one bulk write at each distinct duty cycle turns off the lines with that duty. Lines at
/// full duty get no off edge. So a period costs 1 + (number of distinct duties below 1) writes.
public struct PWMSchedule: Sendable, Equatable {
    /// A bulk write `offset` into the period: the value of every line, in line order.
    public struct Edge: Sendable, Equatable {
        /// Time since the start of the period, as a fraction of the period (0 ≤ offset < 1).
        public var offset: Double
        /// 1 (on) or 0 (off) per line.
        public var values: [Int32]

        public init(offset: Double, values: [Int32]) {
            self.offset = offset
            self.values = values
        }
    }

    /// The writes of one period, in time order; the first is at offset 0.
    public let edges: [Edge]

    /// True when every line is fully on or fully off: the first edge holds for the whole period,
    /// so nothing needs to happen until the duties change.
    public var isSteady: Bool { edges.count == 1 }

    /// The schedule for duty cycles in 0…1 (one per line; values outside are clamped). Duties are
    /// quantised to `resolution` steps per period (the achievable timing).
    public init(duties: [Double], resolution: Int = 1000) {
        let quantised = duties.map { (min(max($0, 0), 1) * Double(resolution)).rounded() / Double(resolution) }
        var values = quantised.map { $0 > 0 ? Int32(1) : 0 }
        var edges = [Edge(offset: 0, values: values)]
        for duty in Set(quantised).filter({ $0 > 0 && $0 < 1 }).sorted() {
            for (line, lineDuty) in quantised.enumerated() where lineDuty == duty { values[line] = 0 }
            edges.append(Edge(offset: duty, values: values))
        }
        self.edges = edges
    }

    /// The duty cycle of a lamp for a level 0…255: gamma 2.2, so that equal steps of level look like
    /// equal steps of brightness (the eye is more sensitive to changes in dim light).
    public static func duty(forLevel level: UInt8, gamma: Double = 2.2) -> Double {
        pow(Double(level) / 255, gamma)
    }
}
