/// How the levels of the three bands become duty cycles of GPIO lines (`receiver.mode`).
///
/// - `pwm`: each line of a band shows the band's level as brightness (gamma 2.2).
/// - `onoff`: the classic light organ and relay boards: a band's lines switch fully on at
///   `threshold` and off only below `threshold − hysteresis`, and never sooner than
///   `minimumInterval` after their last switch, so relays do not chatter.
/// - `bar`: a band's lines form a level meter: with n lines each covers 255/n of the level, lines
///   below the level are full, the one at the level is lit in proportion, the rest are off.
public struct LineDriver: Sendable {
    /// The mode, as in the settings.
    public enum Mode: String, Sendable, CaseIterable, CustomStringConvertible {
        case pwm, onoff, bar

        public var description: String { rawValue }
    }

    /// The mode this driver runs.
    public let mode: Mode
    /// The band of each line, in line order.
    public let bands: [Band]
    /// Level (0…255) at which `onoff` switches on.
    public let threshold: Int
    /// How far below `threshold` the level must fall to switch off, in levels.
    public let hysteresis: Int
    /// Shortest time between two switches of a band in `onoff`, seconds.
    public let minimumInterval: Double
    private var isOn: [Band: Bool] = [:]
    private var lastSwitch: [Band: Double] = [:]

    public init(mode: Mode, bands: [Band], threshold: Int = 128, hysteresis: Int = 32, minimumInterval: Double = 0.1) {
        self.mode = mode
        self.bands = bands
        self.threshold = threshold
        self.hysteresis = hysteresis
        self.minimumInterval = minimumInterval
    }

    /// The duty cycle (0…1) of every line for `frame`, shown at `time` seconds (any monotonic clock).
    /// The levels a person sees per band after the last ``duties(for:at:)`` with `frame`: the
    /// frame itself for pwm and bar, full or dark for onoff (its threshold, hysteresis and
    /// minimum interval decided).
    public func seenLevels(for frame: LevelFrame) -> LevelFrame {
        guard mode == .onoff else { return frame }
        func seen(_ band: Band) -> UInt8 { bands.contains(band) ? (isOn[band] == true ? 255 : 0) : frame[band] }
        return LevelFrame(bass: seen(.bass), mid: seen(.mid), treble: seen(.treble))
    }

    public mutating func duties(for frame: LevelFrame, at time: Double) -> [Double] {
        switch mode {
        case .pwm:
            return bands.map { PWMSchedule.duty(forLevel: frame[$0]) }
        case .onoff:
            for band in Set(bands) {
                let level = Int(frame[band])
                let on = isOn[band] ?? false
                let wanted = on ? level >= threshold - hysteresis : level >= threshold
                // (1 µs of tolerance: 1.2 − 1.1 is a hair under 0.1 in binary floating point)
                if wanted != on, time - (lastSwitch[band] ?? -.infinity) >= minimumInterval - 1e-6 {
                    isOn[band] = wanted
                    lastSwitch[band] = time
                }
            }
            return bands.map { isOn[$0] == true ? 1 : 0 }
        case .bar:
            var index: [Band: Int] = [:]
            return bands.map { band in
                let count = bands.filter { $0 == band }.count
                let position = index[band, default: 0]
                index[band] = position + 1
                let filled = Double(frame[band]) / 255 * Double(count) - Double(position)
                return PWMSchedule.duty(forLevel: UInt8((min(max(filled, 0), 1) * 255).rounded()))
            }
        }
    }
}
