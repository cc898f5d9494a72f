import CGPIODShim
import Dispatch
import FoundationEssentials
import Glibc
public import LightOrganCore
import LightOrganPOSIX
import Synchronization

/// The `gpio` output: lamps on GPIO lines through libgpiod (the kernel's GPIO character device, so
/// it runs on every Raspberry Pi, the Pi 5's RP1 included), with brightness by software PWM.
///
/// Each frame becomes one duty cycle per line through a ``LineDriver`` (`pwm`, `onoff` or `bar`).
/// A thread runs the PWM: each period it takes the newest duties and writes the edges of a
/// ``PWMSchedule`` at their deadlines (`clock_nanosleep` on CLOCK_MONOTONIC, absolute), one bulk
/// write for all lines; writes that change nothing are skipped. When every line is fully on or off
/// (dark lamps, relays) the thread does not wake at all until the duties change. Every line is
/// requested inactive, set inactive again on ``shutDown()`` and released.
public final class GPIOLamps: LevelOutput, @unchecked Sendable {
    // @unchecked Sendable: `gpio` is written only by the PWM thread until shutDown() has joined it;
    // `driver` only by show(), which the receiver calls from one task at a time; the duties cross
    // threads through the Mutex, the idle hand-over through the Atomic and the semaphore.
    /// The chip as found (name, label), for messages.
    public let chipDescription: String
    /// Line offsets in request order, with the band each one shows.
    public let lines: [(band: Band, offset: Int)]
    private let gpio: OpaquePointer
    private let period: Double
    private let duties: Mutex<[Double]>
    private var driver: LineDriver
    private let stopped = Mutex(false)
    private let finished = DispatchSemaphore(value: 0)
    /// The PWM thread waits on `wake` (steady lines); whoever changes the duties or stops it while
    /// this is true sets it false and signals `wake`.
    private let idle = Atomic<Bool>(false)
    private let wake = DispatchSemaphore(value: 0)
    private var isShutDown = false

    /// Requests `lines` (BCM offsets per band) on `chip` (`auto`, a name, a path or a label).
    public init(
        chip: String, lines: [Band: [Int]], activeLow: Bool, pwmFrequency: Double,
        mode: LineDriver.Mode = .pwm, onThreshold: Int = 128, hysteresis: Int = 32, minimumSwitchInterval: Double = 0.1
    ) throws(GPIOError) {
        let chipName = try Self.resolve(chip)
        let ordered = Band.allCases.flatMap { band in (lines[band] ?? []).map { (band: band, offset: $0) } }
        let offsets = ordered.map { UInt32($0.offset) }
        guard let handle = lightorgan_gpio_open(chipName, offsets, offsets.count, activeLow ? 1 : 0) else {
            throw GPIOError.opening(chip: chipName, offsets: offsets.map(Int.init), code: errno)
        }
        gpio = handle
        self.lines = ordered
        duties = Mutex(Array(repeating: 0, count: ordered.count))
        driver = LineDriver(
            mode: mode, bands: ordered.map(\.band), threshold: onThreshold, hysteresis: hysteresis,
            minimumInterval: minimumSwitchInterval)
        chipDescription = chipName
        period = 1 / pwmFrequency
        // Steady duty cycles beside other work, where allowed (the service's Nice= does it too).
        DedicatedThread.start(named: "lightorgan pwm", timeKeeping: true) { [self] in runPWM() }
    }

    public func show(_ frame: LevelFrame) {
        showDuties(driver.duties(for: frame, at: MonotonicClock.seconds()))
        seen = driver.seenLevels(for: frame)
    }

    /// What the lines show per band after the last ``show(_:)`` (onoff: full or dark), for the page.
    public private(set) var seen = LevelFrame.off

    public func seenLevels(after frame: LevelFrame) -> LevelFrame { seen }

    /// The mode lines are driven in.
    public var mode: LineDriver.Mode { driver.mode }

    /// Drives the lines in `mode` from the next frame on (the page's setting); same caller rule
    /// as ``show(_:)``.
    public func setMode(_ mode: LineDriver.Mode) {
        guard mode != driver.mode else { return }
        driver = LineDriver(
            mode: mode, bands: driver.bands, threshold: driver.threshold, hysteresis: driver.hysteresis,
            minimumInterval: driver.minimumInterval)
    }

    public func apply(_ change: OutputChange) {
        if case .lineMode(let mode) = change { setMode(mode) }
    }

    /// A line's check lights that line alone at full; anything else leaves every line dark.
    public func showCheck(_ check: OutputCheck?) {
        var offset: Int?
        if case .line(_, let line) = check { offset = line }
        showDuties(lines.map { $0.offset == offset ? 1 : 0 })
        seen = .off
    }

    /// Sets the duty cycle (0…1) of every line directly, in line order (the wiring check).
    public func showDuties(_ values: [Double]) {
        let changed = duties.withLock { duties in
            defer { duties = values }
            return duties != values
        }
        if changed { wakePWM() }
    }

    private func wakePWM() {
        if idle.exchange(false, ordering: .sequentiallyConsistent) { wake.signal() }
    }

    /// Stops the PWM, sets every line inactive and releases them.
    public func shutDown() {
        guard !isShutDown else { return }
        isShutDown = true
        stopped.withLock { $0 = true }
        wakePWM()
        finished.wait()
        lightorgan_gpio_close(gpio)
    }

    private func runPWM() {
        // A late wake-up restarts the grid at the write instead of writing the passed edges at once
        // (PWMGrid): beside two CPU hogs the emulated kernel saw periods squeezed to about 1 ms and the
        // duty of a level-232 lamp fall from 0.81 to 0.50.
        var grid = PWMGrid(period: period, start: MonotonicClock.seconds())
        var lastWritten: [Int32]? = nil
        var shownDuties: [Double]? = nil
        var schedule = PWMSchedule(duties: [])
        while !stopped.withLock({ $0 }) {
            // The period is made ready before it starts (the first edge's sleep waits for that), so
            // every write follows its wake-up at once, the rising edge as the falling ones. (Read
            // after waking, the duties delayed each rise: on the emulated Pi a level-232 lamp ran at
            // duty 0.78 instead of 0.81, and 0.72 when the host was slow; now 0.78–0.83 around it.)
            let current = duties.withLock { $0 }
            if current != shownDuties {
                shownDuties = current
                schedule = PWMSchedule(duties: current)
            }
            for edge in schedule.edges {
                MonotonicClock.sleep(until: grid.due(edge.offset))
                if edge.values != lastWritten {
                    edge.values.withUnsafeBufferPointer { _ = lightorgan_gpio_set(gpio, $0.baseAddress) }
                    lastWritten = edge.values
                    // The clock after the write: a thread preempted between its wake-up and the write
                    // still gives the rest of the period its full length.
                    grid.wrote(edgeAt: edge.offset, at: MonotonicClock.seconds())
                }
            }
            if schedule.isSteady {
                // Every line fully on or off: sleep until the duties change or the output stops.
                waitForChange(from: current)
                grid.restart(at: MonotonicClock.seconds())
                continue
            }
            grid.advance()
        }
        finished.signal()
    }

    /// Blocks the PWM thread until ``showDuties(_:)`` changes the duties away from `shown` or
    /// ``shutDown()`` is called.
    private func waitForChange(from shown: [Double]) {
        idle.store(true, ordering: .sequentiallyConsistent)
        let moved = duties.withLock { $0 != shown } || stopped.withLock { $0 }
        // Moved before we went idle: take the idle flag back; if someone took it first, their
        // signal is on its way and must be consumed.
        if moved, idle.exchange(false, ordering: .sequentiallyConsistent) { return }
        wake.wait()
    }

    /// The chips of this machine: path, name, label, line count.
    public static func chips() -> [(path: String, name: String, label: String, lines: Int)] {
        let paths = ((try? FileManager.default.contentsOfDirectory(atPath: "/dev")) ?? [])
            .filter { $0.hasPrefix("gpiochip") }.sorted { $0.count < $1.count || ($0.count == $1.count && $0 < $1) }
        return paths.compactMap { entry in
            var name = [CChar](repeating: 0, count: 64), label = [CChar](repeating: 0, count: 64)
            var count: UInt32 = 0
            guard lightorgan_gpio_chip_info("/dev/" + entry, &name, 64, &label, 64, &count) == 0 else { return nil }
            return ("/dev/" + entry, String(cCharacters: name), String(cCharacters: label), Int(count))
        }
    }

    /// The libgpiod API this build uses: 2 (libgpiod 2.x, linked in statically).
    public static var libgpiodAPI: Int { Int(lightorgan_gpio_api_version()) }

    /// Labels of the Raspberry Pi's main GPIO controller, newest first (Pi 5: RP1).
    static let raspberryPiLabels = ["pinctrl-rp1", "pinctrl-bcm2712", "pinctrl-bcm2711", "pinctrl-bcm2835"]

    private static func resolve(_ chip: String) throws(GPIOError) -> String {
        guard chip == "auto" else { return chip }
        let found = chips()
        for label in raspberryPiLabels {
            if let match = found.first(where: { $0.label == label }) { return match.name }
        }
        throw GPIOError(
            "no Raspberry Pi GPIO controller found (looked for labels \(raspberryPiLabels.joined(separator: ", "))); "
                + GPIOError.chipList(found) + (found.isEmpty ? "" : "; set receiver.chip to one of them"))
    }
}

/// A GPIO failure a Pi user can meet, in one line with what to do.
public struct GPIOError: Error, CustomStringConvertible {
    public let description: String

    init(_ description: String) {
        self.description = description
    }

    static func chipList(_ chips: [(path: String, name: String, label: String, lines: Int)]) -> String {
        chips.isEmpty
            ? "this machine has no GPIO chip (receiver.output: terminal or stdout work anywhere)"
            : "chips here: " + chips.map { "\($0.name) [\($0.label)] (\($0.lines) lines)" }.joined(separator: ", ")
    }

    static func opening(chip: String, offsets: [Int], code: Int32) -> GPIOError {
        switch code {
        case ENOENT, ENODEV:
            return GPIOError("GPIO chip \(chip) does not exist; \(chipList(GPIOLamps.chips()))")
        case ERANGE, EINVAL:
            let lines = GPIOLamps.chips().first { $0.name == chip || $0.path == chip || $0.label == chip }?.lines
            return GPIOError(
                "GPIO line \(offsets.max() ?? 0) does not exist on \(chip)"
                    + (lines.map { " (lines 0…\($0 - 1))" } ?? "") + "; fix receiver.lines")
        case EBUSY:
            for offset in offsets {
                var consumer = [CChar](repeating: 0, count: 64)
                if lightorgan_gpio_line_consumer(chip, UInt32(offset), &consumer, 64) == 0, consumer[0] != 0 {
                    return GPIOError(
                        "GPIO line \(offset) on \(chip) is busy (used by \"\(String(cCharacters: consumer))\"); "
                            + "pick another line in receiver.lines or stop the other program")
                }
            }
            return GPIOError(
                "a GPIO line of \(offsets) on \(chip) is busy; pick other lines in receiver.lines or stop the other program"
            )
        case EACCES, EPERM:
            return GPIOError(
                "no permission to use GPIO chip \(chip); add the user to the gpio group (sudo usermod -aG gpio $USER, "
                    + "then log in again), or give the service SupplementaryGroups=gpio")
        default:
            return GPIOError("GPIO chip \(chip): cannot request lines \(offsets) (\(String(cString: strerror(code))))")
        }
    }
}
