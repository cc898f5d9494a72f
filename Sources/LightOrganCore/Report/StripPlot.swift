#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A picture of the strip effects over time (`lightorgan analyze --strip-plot`): one panel per
/// effect, each pixel of the strip a column, time running down in rows of ``rowSeconds``; each
/// cell as the strip's light would look (linear light shown through a 2.2 display gamma). Each effect
/// is drawn as the receiver draws it, through a ``LightLook`` of its own: the beat effects follow the
/// beat once the tracker holds one.
public struct StripPlot {
    /// Seconds a row stands for (the frame closest to its start is drawn).
    public static let rowSeconds = 0.04
    /// Width of a panel, SVG units.
    static let width = 600.0
    /// Height of a row, SVG units.
    static let rowHeight = 3.0

    private let pixels: Int
    private let title: String
    private var renderers: [StripRenderer]
    private var looks: [LightLook]
    private var rows: [[[UInt8]]]
    private var nextRow = 0.0

    /// A plot of every effect on a strip of `pixels` pixels.
    public init(title: String, pixels: Int, palette: Palette = .standard, gamma: Double = 2.2) {
        self.pixels = pixels
        self.title = title
        renderers = StripEffect.allCases.map {
            StripRenderer(pixels: pixels, effect: $0, palette: palette, gamma: gamma)
        }
        looks = StripEffect.allCases.map { LightLook(effect: $0) }
        rows = StripEffect.allCases.map { _ in [] }
    }

    /// Renders `frame` at `time` seconds, with what the beat tracker said of it, on every effect (every
    /// frame: scroll and flash need them all) and keeps a row every ``rowSeconds``.
    public mutating func add(_ frame: LevelFrame, beat: BeatState = .none, at time: Double) {
        for index in renderers.indices {
            let (levels, cue) = looks[index].look(frame, beat: beat, at: time)
            renderers[index].render(levels, look: cue, at: time)
        }
        guard time >= nextRow else { return }
        nextRow += Self.rowSeconds
        for index in renderers.indices { rows[index].append(renderers[index].pixels) }
    }

    /// The SVG document.
    public func svg() -> String {
        let cell = Self.width / Double(pixels)
        let rowCount = rows.first?.count ?? 0
        let panelHeight = Double(rowCount) * Self.rowHeight
        let labelHeight = 22.0
        let height = 30 + Double(StripEffect.allCases.count) * (panelHeight + labelHeight + 10)
        var svg = """
            <svg xmlns="http://www.w3.org/2000/svg" width="\(Int(Self.width) + 20)" height="\(Int(height))" \
            font-family="sans-serif" font-size="13">
            <rect width="100%" height="100%" fill="#fff"/>
            <text x="10" y="20" font-size="15">\(Self.escape(title)) — \(pixels) pixels, time runs down, \
            \(Int(Self.rowSeconds * 1000)) ms a row</text>

            """
        var top = 30.0
        for (index, effect) in StripEffect.allCases.enumerated() {
            svg += "<text x=\"10\" y=\"\(top + 15)\">\(effect)</text>\n"
            top += labelHeight
            svg += "<rect x=\"10\" y=\"\(top)\" width=\"\(Self.width)\" height=\"\(panelHeight)\" fill=\"#000\"/>\n"
            for (row, pixelsOfRow) in rows[index].enumerated() {
                let y = top + Double(row) * Self.rowHeight
                var start = 0
                // One rectangle per run of equal pixels; dark runs are the background.
                while start < pixels {
                    var end = start + 1
                    let color = Array(pixelsOfRow[3 * start..<3 * start + 3])
                    while end < pixels, Array(pixelsOfRow[3 * end..<3 * end + 3]) == color { end += 1 }
                    if color != [0, 0, 0] {
                        let x = 10 + Double(start) * cell
                        svg +=
                            "<rect x=\"\(Self.format(x))\" y=\"\(Self.format(y))\" width=\"\(Self.format(Double(end - start) * cell))\" "
                            + "height=\"\(Self.rowHeight)\" fill=\"\(Self.displayColor(color))\"/>\n"
                    }
                    start = end
                }
            }
            top += panelHeight + 10
        }
        return svg + "</svg>\n"
    }

    /// `#rrggbb` of the strip's linear light as a screen shows it (2.2 gamma).
    static func displayColor(_ color: [UInt8]) -> String {
        let digits = Array("0123456789abcdef")
        var text = "#"
        for channel in color {
            let shown = Int((pow(Double(channel) / 255, 1 / 2.2) * 255).rounded())
            text.append(digits[shown >> 4])
            text.append(digits[shown & 15])
        }
        return text
    }

    private static func format(_ value: Double) -> String { String((value * 10).rounded() / 10) }

    private static func escape(_ text: String) -> String {
        text.replacing("&", with: "&amp;").replacing("<", with: "&lt;").replacing(">", with: "&gt;")
    }
}
