import Glibc
import LightOrganCore
import LightOrganOutput

/// A progress bar on stderr, drawn only when stderr is a terminal and the work is long enough
/// to wait for (audio of a minute or more); redrawn at most ten times per second.
struct ProgressBar {
    /// Total audio duration, seconds.
    let total: Double
    private let isShown: Bool
    private var lastDrawn = ContinuousClock.now
    private var drawnOnce = false

    init(total: Double) {
        self.total = total
        isShown = isatty(2) == 1 && total >= 60
    }

    /// Shows that `done` seconds of audio are analysed.
    mutating func update(_ done: Double) {
        guard isShown, ContinuousClock.now - lastDrawn >= .milliseconds(100) else { return }
        lastDrawn = .now
        drawnOnce = true
        let fraction = min(max(done / total, 0), 1)
        let filled = Int(fraction * 30)
        let bar = String(repeating: "█", count: filled) + String(repeating: "·", count: 30 - filled)
        StandardError.write("\r" + bar + String(cFormat: " %3.0f%%  %.0f s of %.0f s ", fraction * 100, done, total))
    }

    /// Clears the bar.
    func finish() {
        guard drawnOnce else { return }
        StandardError.write("\r\u{1B}[K")
    }
}
