import Dispatch
public import LightOrganCore
import LightOrganPOSIX
import Synchronization

/// An addressable LED strip wired to the receiver: frames become pixels through a
/// ``StripRenderer`` (the effect, palette, gamma and brightness limit) and go to a ``StripDevice``
/// on a writer thread of its own.
///
/// ``show(_:)`` renders at once (microseconds) and hands the pixels over; the writer thread sends
/// the newest pixels it has (a frame that arrives while the last one is still on the wire replaces
/// the one waiting: newest wins, nothing queues), so a strip's 9 ms on the wire never holds the
/// caller, the lamps or the page. ``shutDown()`` waits for the writer, sends a dark frame itself and
/// closes the device: the strip is dark on disconnect, timeout and stop like every lamp.
public final class LEDStrip: LevelOutput, @unchecked Sendable {
    // @unchecked Sendable: `renderer` is touched only by the output's caller (one at a time, the
    // protocol's rule); the pixels cross to the writer thread through `mailbox`'s lock.
    /// The strip as the page and the log name it.
    public private(set) var description: StripDescription
    private let device: any StripDevice
    private var renderer: StripRenderer
    private let mailbox = ThreadCondition()
    private var waiting: [UInt8]?  // guarded by mailbox
    private var stopping = false  // guarded by mailbox
    private let shown: Mutex<[UInt8]>
    private let failure = Mutex<StripError?>(nil)
    private let finished = DispatchSemaphore(value: 0)
    private var isShutDown = false
    private let written = Atomic<Int>(0)
    /// Frames the device has taken.
    public var framesWritten: Int { written.load(ordering: .relaxed) }

    /// Starts driving `device` with `settings`' effect, palette, gamma and brightness.
    public init(device: any StripDevice, settings: StripSettings) {
        self.device = device
        renderer = StripRenderer(
            pixels: settings.pixels, effect: settings.effect, palette: settings.palette,
            gamma: device.appliesGamma ? 1 : settings.gamma,
            brightness: device.appliesBrightness ? 1 : Float(settings.brightness) / 100)
        description = StripDescription(
            device: device.path, pixels: settings.pixels, led: settings.led, effect: settings.effect)
        shown = Mutex([UInt8](repeating: 0, count: 3 * settings.pixels))
        DedicatedThread.start(named: "lightorgan strip", timeKeeping: true) { [self] in runWriter() }
        hand(renderer.pixels)  // dark from the start, whatever the strip showed before
    }

    /// Opens the strip `settings` name: spidev, the Pi 5's PIO (`/dev/leds…`) or a virtual one.
    public static func open(_ settings: StripSettings) throws(StripError) -> LEDStrip {
        let device: any StripDevice
        if settings.device == StripSettings.virtualDevice {
            device = VirtualStripDevice()
        } else if settings.device.hasPrefix("/dev/leds") {
            device = try PIOStripDevice(
                path: settings.device, pixels: settings.pixels, led: settings.led, brightness: settings.brightness)
        } else {
            device = try SPIStripDevice(
                path: settings.device, pixels: settings.pixels, led: settings.led, order: settings.wireOrder)
        }
        return LEDStrip(device: device, settings: settings)
    }

    /// What the log should say of the strip once it is open.
    public var notes: [String] { device.notes }

    public func show(_ frame: LevelFrame) throws {
        try show(frame, look: .none)
    }

    /// Draws `frame` with the strip's effect, as `look` says (a beat effect, the idle look), and hands it over.
    public func show(_ frame: LevelFrame, look: LookCue) throws {
        if let error = failure.withLock({ error in
            defer { error = nil }; return error
        }) {
            throw error
        }
        renderer.render(frame, look: look, at: MonotonicClock.seconds())
        hand(renderer.pixels)
    }

    public func showCheck(_ check: OutputCheck?) throws {
        if case .strip(let step) = check {
            renderer.render(step)
        } else {
            renderer.clear()
        }
        hand(renderer.pixels)
    }

    public var strips: [StripDescription] { [description] }

    public func stripPixels() -> [UInt8] { shown.withLock { $0 } }

    public func apply(_ change: OutputChange) {
        switch change {
        case .stripEffect(let effect):
            renderer.effect = effect
            description.effect = effect
        case .stripBrightness(let percent):
            if device.appliesBrightness {
                try? device.setBrightness(percent: percent)
            } else {
                renderer.brightness = Float(percent) / 100
            }
        case .stripPalette(let palette):
            renderer.palette = palette
        case .lineMode:
            break
        }
    }

    /// Waits for the writer, sends a dark frame and closes the device.
    public func shutDown() {
        guard !isShutDown else { return }
        isShutDown = true
        mailbox.withLock { stopping = true }
        mailbox.signal()
        finished.wait()
        renderer.clear()
        try? device.write(rgb: renderer.pixels)
        shown.withLock { $0 = renderer.pixels }
        device.close()
    }

    private func hand(_ pixels: [UInt8]) {
        shown.withLock { $0 = pixels }
        mailbox.withLock { waiting = pixels }
        mailbox.signal()
    }

    private func runWriter() {
        while true {
            mailbox.lock()
            while waiting == nil, !stopping { mailbox.wait() }
            let pixels = waiting
            waiting = nil
            let stop = stopping
            mailbox.unlock()
            if stop { break }
            guard let pixels else { continue }
            do {
                try device.write(rgb: pixels)
                written.add(1, ordering: .relaxed)
            } catch {
                failure.withLock { $0 = error }
            }
        }
        finished.signal()
    }
}
