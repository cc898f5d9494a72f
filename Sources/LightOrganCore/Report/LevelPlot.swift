import Foundation

/// An SVG picture of an analysis: the waveform on top, the three levels over time below it,
/// on one time axis, for tuning by eye (`lightorgan analyze --plot out.svg`).
public struct LevelPlot: Sendable {
    /// Width and height of the picture, pixels.
    public var width = 1600, height = 700
    private var waveformMinima: [Float] = []
    private var waveformMaxima: [Float] = []
    private var samplesPerColumn: Int
    private var columnFill = 0
    private var rows: [(time: Double, frame: LevelFrame)] = []
    private let sampleRate: Double
    private let title: String

    /// Prepares a plot of about `duration` seconds of audio at `sampleRate` Hz.
    public init(title: String, sampleRate: Double, duration: Double) {
        self.title = title
        self.sampleRate = sampleRate
        samplesPerColumn = max(1, Int(duration * sampleRate / Double(width - 80)))
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

    /// Adds one analysed frame at audio time `time` seconds.
    public mutating func addFrame(_ frame: LevelFrame, at time: Double) {
        rows.append((time, frame))
    }

    /// The SVG document.
    public func svg() -> String {
        let left = 60.0, right = Double(width) - 20
        let duration = max(Double(waveformMaxima.count * samplesPerColumn) / sampleRate, rows.last?.time ?? 0, 1e-3)
        func x(_ time: Double) -> Double { left + (right - left) * time / duration }
        let waveTop = 40.0, waveHeight = Double(height) * 0.28
        let levelTop = waveTop + waveHeight + 30, levelHeight = Double(height) - levelTop - 40
        var svg = """
            <svg xmlns="http://www.w3.org/2000/svg" width="\(width)" height="\(height)" font-family="sans-serif" font-size="12">
            <rect width="100%" height="100%" fill="#111"/>
            <text x="\(left)" y="24" fill="#ddd" font-size="15">\(Self.escape(title))</text>

            """
        // Waveform: one vertical line per column from its minimum to its maximum.
        var wave = ""
        let middle = waveTop + waveHeight / 2
        for (column, (low, high)) in zip(waveformMinima, waveformMaxima).enumerated() {
            let px = x(Double(column * samplesPerColumn) / sampleRate)
            let y1 = middle - Double(high) * waveHeight / 2, y2 = middle - Double(low) * waveHeight / 2
            wave += String(format: "M%.1f %.1fV%.1f", px, y1, max(y2, y1 + 0.5))
        }
        svg += "<path d=\"\(wave)\" stroke=\"#8a8a8a\" stroke-width=\"1\"/>\n"
        // Levels: one polyline per band, 0 at the bottom, 255 at the top.
        let colours = ["#ff2814", "#ff9600", "#286eff"]
        for band in Band.allCases {
            let step = max(1, rows.count / (width * 2))
            let points = stride(from: 0, to: rows.count, by: step).map { index -> String in
                let row = rows[index]
                return String(format: "%.1f,%.1f", x(row.time), levelTop + levelHeight * (1 - Double(row.frame[band]) / 255))
            }.joined(separator: " ")
            svg += "<polyline points=\"\(points)\" fill=\"none\" stroke=\"\(colours[band.rawValue])\" stroke-width=\"1.2\" opacity=\"0.9\"/>\n"
            svg += "<text x=\"\(right - 180 + Double(band.rawValue) * 60)\" y=\"24\" fill=\"\(colours[band.rawValue])\">\(band)</text>\n"
        }
        // Axes: level scale and a time tick every "nice" interval.
        svg += "<rect x=\"\(left)\" y=\"\(levelTop)\" width=\"\(right - left)\" height=\"\(levelHeight)\" fill=\"none\" stroke=\"#444\"/>\n"
        for level in [0, 128, 255] {
            let y = levelTop + levelHeight * (1 - Double(level) / 255)
            svg += "<text x=\"\(left - 8)\" y=\"\(y + 4)\" fill=\"#aaa\" text-anchor=\"end\">\(level)</text>\n"
        }
        let tick = [0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 15, 30, 60, 120, 300, 600]
            .first { duration / $0 <= 20 } ?? 1200
        for time in stride(from: 0, through: duration, by: tick) {
            let px = x(time)
            svg += "<line x1=\"\(px)\" y1=\"\(levelTop + levelHeight)\" x2=\"\(px)\" y2=\"\(levelTop + levelHeight + 5)\" stroke=\"#aaa\"/>"
            svg += "<text x=\"\(px)\" y=\"\(levelTop + levelHeight + 18)\" fill=\"#aaa\" text-anchor=\"middle\">\(Self.format(time)) s</text>\n"
        }
        return svg + "</svg>\n"
    }

    private static func format(_ time: Double) -> String {
        time == time.rounded() ? String(Int(time)) : String(format: "%g", time)
    }

    private static func escape(_ text: String) -> String {
        text.replacing("&", with: "&amp;").replacing("<", with: "&lt;").replacing(">", with: "&gt;")
    }
}
