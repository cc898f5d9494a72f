import Glibc
public import LightOrganCore

/// The `terminal` output: three virtual lamps with brightness and level bars.
///
/// On a terminal the lamps are redrawn in place (24-bit colour, the cursor hidden while they run):
///
///     ●  bass    ████████████████▌              165
///     ●  mid     ██████▏                         62
///     ●  treble  ███████████████████████████    255
///
/// With a strip beside the lamps (`receiver.strip.device: virtual`, `lightorgan demo --strip`), a
/// fourth row shows its pixels, each cell the brightest of the pixels it stands for.
///
/// When stdout is not a terminal it writes a plain line every `plainInterval` seconds instead
/// (`t=1.20 s  bass 165  mid 62  treble 255`), so logs and pipes stay readable.
public struct TerminalLamps: LevelOutput {
    /// How the lamps are drawn.
    public enum Style: Sendable {
        /// Redrawn in place with colours: for a terminal.
        case inPlace
        /// A plain text line every so many seconds: for pipes and files.
        case plainLines(every: Double)
    }

    /// Lamp colours at full brightness (red, orange, blue), as on the 2016 LightOrgan wiring.
    static let colours: [(red: Double, green: Double, blue: Double)] = [(255, 40, 20), (255, 150, 0), (40, 110, 255)]
    static let barCells = 32

    public let style: Style
    /// The strip's pixels now (3 bytes a pixel), drawn in a row of their own; nil without a strip.
    private let stripPixels: (@Sendable () -> [UInt8])?
    /// Cells of the strip's row at most.
    static let stripCells = 60
    private var drawnBefore = false
    private var startSeconds: Double?
    private var lastPlainLine = -Double.infinity
    private var lastPlainFrame: LevelFrame?
    private var lastShown: LevelFrame?

    /// Chooses the style from stdout: in place on a terminal, else a plain line every 0.1 s.
    public init(strip stripPixels: (@Sendable () -> [UInt8])? = nil) {
        self.init(style: StandardOutput.isTerminal ? .inPlace : .plainLines(every: 0.1), strip: stripPixels)
    }

    public init(style: Style, strip stripPixels: (@Sendable () -> [UInt8])? = nil) {
        self.style = style
        self.stripPixels = stripPixels
    }

    public mutating func show(_ frame: LevelFrame) {
        lastShown = frame
        let now = MonotonicClock.seconds()
        let start = startSeconds ?? now
        startSeconds = start
        switch style {
        case .inPlace:
            let strip = stripPixels.map { Self.stripRow($0()) } ?? ""
            let rows = stripPixels == nil ? 3 : 4
            StandardOutput.write((drawnBefore ? "\u{1B}[\(rows)F" : "\u{1B}[?25l") + Self.panel(for: frame) + strip)
            drawnBefore = true
        case .plainLines(let interval):
            // Every `interval`, and at once when the lamps go off (once), so the end is never missed.
            let goesOff = frame.isOff && lastPlainFrame?.isOff == false
            guard now - lastPlainLine >= interval || goesOff else { return }
            lastPlainLine = now
            lastPlainFrame = frame
            StandardOutput.write(Self.plainLine(for: frame, seconds: now - start))
        }
    }

    public mutating func shutDown() {
        if lastShown?.isOff != true { show(.off) }
        if case .inPlace = style, drawnBefore { StandardOutput.write("\u{1B}[?25h") }
    }

    /// Three coloured rows, each ending in a newline and clearing the rest of its line.
    static func panel(for frame: LevelFrame) -> String {
        Band.allCases.map { band in
            let level = frame[band]
            let colour = colours[band.rawValue]
            // An off lamp stays faintly visible (12 %), like an unlit bulb.
            let glow = 0.12 + 0.88 * Double(level) / 255
            let lamp = "\u{1B}[38;2;\(Int(colour.red * glow));\(Int(colour.green * glow));\(Int(colour.blue * glow))m●"
            let bar = "\u{1B}[38;2;\(Int(colour.red));\(Int(colour.green));\(Int(colour.blue))m" + Self.bar(level)
            let name = band.description + String(repeating: " ", count: max(0, 7 - band.description.count))
            let value = String(level).leftPadded(to: 4)
            return "  \(lamp)\u{1B}[0m  \(name) \(bar)\u{1B}[0m\(value)\u{1B}[K\n"
        }.joined()
    }

    /// The strip's pixels as a row of coloured cells (each the brightest of the pixels it stands for,
    /// linear light shown through a 2.2 display gamma), ending in a newline.
    static func stripRow(_ rgb: [UInt8]) -> String {
        let pixels = rgb.count / 3
        guard pixels > 0 else { return "\u{1B}[K\n" }
        let cells = min(stripCells, pixels)
        var row = "  strip   "
        for cell in 0..<cells {
            let first = cell * pixels / cells
            let end = max(first + 1, (cell + 1) * pixels / cells)
            var color: [Int] = []
            for channel in 0..<3 {
                var brightest = 0
                for pixel in first..<end { brightest = max(brightest, Int(rgb[3 * pixel + channel])) }
                let light = Double(brightest) / 255
                color.append(Int((pow(light, 1 / 2.2) * 255).rounded()))
            }
            row += "\u{1B}[38;2;\(color[0]);\(color[1]);\(color[2])m█"
        }
        return row + "\u{1B}[0m\u{1B}[K\n"
    }

    /// A bar of `barCells` cells with eighth-cell resolution.
    static func bar(_ level: UInt8) -> String {
        let eighths = (Int(level) * barCells * 8 + 127) / 255
        let partials = ["", "▏", "▎", "▍", "▌", "▋", "▊", "▉"]
        let full = String(repeating: "█", count: eighths / 8)
        let partial = partials[eighths % 8]
        let used = eighths / 8 + (partial.isEmpty ? 0 : 1)
        return full + partial + String(repeating: " ", count: barCells - used)
    }

    /// One plain line: time since the first frame, then the three levels.
    static func plainLine(for frame: LevelFrame, seconds: Double) -> String {
        String(
            cFormat: "t=%.2f s  bass %3d  mid %3d  treble %3d\n", seconds, Int32(frame.bass), Int32(frame.mid),
            Int32(frame.treble))
    }
}

extension String {
    fileprivate func leftPadded(to width: Int) -> String {
        String(repeating: " ", count: max(0, width - count)) + self
    }
}
