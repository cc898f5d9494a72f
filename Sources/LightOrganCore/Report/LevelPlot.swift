#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// An SVG picture of an analysis as a person would judge it (`lightorgan analyze --plot out.svg`):
/// the waveform on top and, under it on the same time axis, one lane per lamp showing how bright
/// it looks (L*, 0…100, after the receiver's gamma) with a mark on every flash (a rise of ≥ 15 L*
/// within 60 ms, see ``FlashDetector``). Given the band envelopes, each lane also draws its band's
/// sound (dBFS, −60…0, a thin line) and marks its onsets under the lane (a rise of ≥ 6 dB over the
/// quietest of the last 50 ms), so a missed beat or a flash without one shows at a glance. Lamps that
/// dance show tall, narrow spikes with a mark on each; lamps that are "just on" show a flat band near the top.
public struct LevelPlot: Sendable {
    /// Width and height of the picture, pixels.
    public let width = 1600, height = 860
    private let left = 70.0
    private var right: Double { Double(width) - 20 }
    private var waveformMinima: [Float] = []
    private var waveformMaxima: [Float] = []
    private var samplesPerColumn: Int
    private var columnFill = 0
    /// Per band, per pixel column: the highest lightness of the frames in that column (−1: none).
    private var lightnessHigh: [[Double]] = [[], [], []]
    /// Per band: times of the flashes, seconds.
    private var flashTimes: [[Double]] = [[], [], []]
    private var detectors = [FlashDetector](repeating: FlashDetector(), count: 3)
    /// Per band, per pixel column: the highest envelope of the frames in that column, dBFS (nil: none).
    private var soundHigh: [[Double?]] = [[], [], []]
    /// Per band: times of the sound's onsets, seconds.
    private var onsetTimes: [[Double]] = [[], [], []]
    /// Per band: the envelopes of the last 50 ms (time, dBFS), for the onset marks.
    private var recentSound: [[(time: Double, decibels: Double)]] = [[], [], []]
    private let sampleRate: Double
    private let duration: Double
    private let title: String

    /// Prepares a plot of about `duration` seconds of audio at `sampleRate` Hz.
    public init(title: String, sampleRate: Double, duration: Double) {
        self.title = title
        self.sampleRate = sampleRate
        self.duration = max(duration, 1e-3)
        samplesPerColumn = max(1, Int(duration * sampleRate / (Double(width) - 20 - left)))
    }

    /// Adds mono samples of the waveform, in order.
    public mutating func addWaveform(_ samples: some Sequence<Float>) {
        for sample in samples {
            if columnFill == 0 {
                waveformMinima.append(sample)
                waveformMaxima.append(sample)
            } else {
                waveformMinima[waveformMinima.count - 1] = min(waveformMinima.last!, sample)
                waveformMaxima[waveformMaxima.count - 1] = max(waveformMaxima.last!, sample)
            }
            columnFill = (columnFill + 1) % samplesPerColumn
        }
    }

    /// Adds one analysed frame at audio time `time` seconds, with the band envelopes it was made
    /// from (linear amplitude, bass, mid, treble) when known.
    public mutating func addFrame(_ frame: LevelFrame, at time: Double, envelopes: SIMD3<Float>? = nil) {
        let column = min(max(Int(x(time) - left), 0), Int(right - left))
        if let envelopes {
            for index in 0..<3 {
                let decibels = Double(20 * log10(max(envelopes[index], 1e-10)))
                recentSound[index].removeAll { time - $0.time > 0.05 }
                let quietest = recentSound[index].map(\.decibels).min() ?? decibels
                let sinceLast = time - (onsetTimes[index].last ?? -1)
                if decibels >= -60, decibels - quietest >= 6, sinceLast >= 0.05 { onsetTimes[index].append(time) }
                recentSound[index].append((time, decibels))
                while soundHigh[index].count <= column { soundHigh[index].append(nil) }
                soundHigh[index][column] = max(soundHigh[index][column] ?? -.infinity, decibels)
            }
        }
        for band in Band.allCases {
            let lightness = LampLightness.lightness(level: frame[band])
            let index = band.rawValue
            if detectors[index].feed(lightness: lightness, at: time) { flashTimes[index].append(time) }
            while lightnessHigh[index].count <= column { lightnessHigh[index].append(-1) }
            lightnessHigh[index][column] = max(lightnessHigh[index][column], lightness)
        }
    }

    /// Flashes found so far per band (bass, mid, treble).
    public var flashCounts: [Int] { flashTimes.map(\.count) }
    /// Onsets of the sound found so far per band (bass, mid, treble); 0 without envelopes.
    public var onsetCounts: [Int] { onsetTimes.map(\.count) }

    private func x(_ time: Double) -> Double { left + (right - left) * time / duration }

    /// The SVG document.
    public func svg() -> String {
        let colours = ["#ff2814", "#ff9600", "#3c82ff"]
        let waveTop = 44.0, waveHeight = 150.0
        let laneTop = waveTop + waveHeight + 24, laneHeight = 170.0, laneGap = 22.0
        var svg = """
            <svg xmlns="http://www.w3.org/2000/svg" width="\(width)" height="\(height)" font-family="sans-serif" font-size="12">
            <rect width="100%" height="100%" fill="#111"/>
            <text x="\(left)" y="26" fill="#ddd" font-size="15">\(Self.escape(title))</text>
            <text x="\(right)" y="26" fill="#999" text-anchor="end">lamp lightness L* (0–100, gamma 2.2) · ▼ flash: +15 L* within 60 ms · grey line: the band's sound, −60…0 dBFS · | its onsets</text>

            """
        // Waveform: one vertical line per column from its minimum to its maximum.
        var wave = ""
        let middle = waveTop + waveHeight / 2
        for (column, (low, high)) in zip(waveformMinima, waveformMaxima).enumerated() {
            let px = x(Double(column * samplesPerColumn) / sampleRate)
            let y1 = middle - Double(high) * waveHeight / 2, y2 = middle - Double(low) * waveHeight / 2
            wave += String(cFormat: "M%.1f %.1fV%.1f", px, y1, max(y2, y1 + 0.5))
        }
        svg += "<path d=\"\(wave)\" stroke=\"#8a8a8a\" stroke-width=\"1\"/>\n"
        svg += "<text x=\"\(left - 8)\" y=\"\(middle + 4)\" fill=\"#aaa\" text-anchor=\"end\">audio</text>\n"
        // One lane per lamp: the lightness range of each pixel column, filled, and the flashes.
        for band in Band.allCases {
            let index = band.rawValue
            let top = laneTop + Double(index) * (laneHeight + laneGap)
            func y(_ lightness: Double) -> Double { top + laneHeight * (1 - lightness / 100) }
            svg +=
                "<rect x=\"\(left)\" y=\"\(top)\" width=\"\(right - left)\" height=\"\(laneHeight)\" fill=\"#1b1b1b\" stroke=\"#444\"/>\n"
            svg +=
                "<line x1=\"\(left)\" y1=\"\(y(20))\" x2=\"\(right)\" y2=\"\(y(20))\" stroke=\"#333\" stroke-dasharray=\"4 4\"/>\n"
            // The brightest frame of each pixel column, as a filled curve: flashes stand out as spikes.
            var curve: [String] = []
            var last = 0.0
            for (column, high) in lightnessHigh[index].enumerated() {
                if high >= 0 { last = high }
                curve.append(String(cFormat: "%.1f,%.1f", left + Double(column) + 0.5, y(last)))
            }
            if let first = curve.first, let final = curve.last {
                let base = String(cFormat: "%.1f", y(0))
                let open = "\(first.split(separator: ",")[0]),\(base)",
                    close = "\(final.split(separator: ",")[0]),\(base)"
                svg +=
                    "<polygon points=\"\(open) \(curve.joined(separator: " ")) \(close)\" fill=\"\(colours[index])\" fill-opacity=\"0.35\" stroke=\"\(colours[index])\" stroke-width=\"1\"/>\n"
            }
            var marks = ""
            for time in flashTimes[index] {
                let px = x(time)
                marks += String(cFormat: "M%.1f %.1fl-3 -6h6z", px, top - 1)
            }
            svg += "<path d=\"\(marks)\" fill=\"#eee\"/>\n"
            // The band's sound, −60…0 dBFS over the lane, and its onsets as ticks under the lane.
            var sound = ""
            for (column, decibels) in soundHigh[index].enumerated() {
                guard let decibels else { continue }
                let level = min(max((decibels + 60) / 60, 0), 1)
                sound +=
                    (sound.isEmpty ? "M" : "L")
                    + String(cFormat: "%.1f %.1f", left + Double(column) + 0.5, y(level * 100))
            }
            if !sound.isEmpty {
                svg +=
                    "<path d=\"\(sound)\" fill=\"none\" stroke=\"#ddd\" stroke-opacity=\"0.45\" stroke-width=\"1\"/>\n"
            }
            var ticks = ""
            for time in onsetTimes[index] { ticks += String(cFormat: "M%.1f %.1fv7", x(time), top + laneHeight + 2) }
            if !ticks.isEmpty {
                svg += "<path d=\"\(ticks)\" stroke=\"\(colours[index])\" stroke-width=\"1.5\"/>\n"
                svg +=
                    "<text x=\"\(left - 8)\" y=\"\(top + 46)\" fill=\"#888\" text-anchor=\"end\">\(onsetTimes[index].count) |</text>\n"
            }
            svg +=
                "<text x=\"\(left - 8)\" y=\"\(top + 14)\" fill=\"\(colours[index])\" text-anchor=\"end\">\(band)</text>\n"
            svg +=
                "<text x=\"\(left - 8)\" y=\"\(top + 30)\" fill=\"#888\" text-anchor=\"end\">\(flashTimes[index].count) ▼</text>\n"
            for lightness in [0.0, 50, 100] {
                svg +=
                    "<text x=\"\(left - 8)\" y=\"\(y(lightness) + 4)\" fill=\"#666\" text-anchor=\"end\" font-size=\"10\">\(Int(lightness))</text>\n"
            }
        }
        // Time axis under the last lane.
        let axis = laneTop + 3 * laneHeight + 2 * laneGap + 12
        let tick =
            [0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 15, 30, 60, 120, 300, 600]
            .first { duration / $0 <= 20 } ?? 1200
        for time in stride(from: 0, through: duration, by: tick) {
            let px = x(time)
            svg += "<line x1=\"\(px)\" y1=\"\(axis)\" x2=\"\(px)\" y2=\"\(axis + 5)\" stroke=\"#aaa\"/>"
            svg +=
                "<text x=\"\(px)\" y=\"\(axis + 18)\" fill=\"#aaa\" text-anchor=\"middle\">\(Self.format(time)) s</text>\n"
        }
        return svg + "</svg>\n"
    }

    private static func format(_ time: Double) -> String {
        time == time.rounded() ? String(Int(time)) : String(cFormat: "%g", time)
    }

    private static func escape(_ text: String) -> String {
        text.replacing("&", with: "&amp;").replacing("<", with: "&lt;").replacing(">", with: "&gt;")
    }
}
