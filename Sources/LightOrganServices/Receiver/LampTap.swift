package import LightOrganCore
package import NIOCore
import NIOPosix
import Synchronization

/// The last step before the lines: the look, the brightness limit, the wiring check, and what the page sees.
///
/// Every frame passes through ``show(_:)`` on the thread that shows it (the network thread, or
/// the delay's timer), is scaled by `receiver.max_brightness` and given to the output. A frame of music
/// (``show(_:beat:)``) goes through the ``LightLook`` first: a beat effect, the idle look, and the changes of
/// effect or palette held to the downbeat; any other frame (the receiver darkening the lamps) is shown as
/// it is and restarts the look's idle clock. What the
/// lamps then show is published in one atomic word (three levels and a generation), which pages
/// read without a lock: a page can never slow the lines, only miss a level.
///
/// Pages that ``watch(_:_:)`` are told after the output has the frame, by one task on the receiver's
/// event loop for all of them, never more than one pending: in the same wake-up when the frame is
/// shown on that loop (where the page's sockets live too: a page's update then costs one write, no
/// wake-up of its own), else with one hop to it. Never while the frame is being shown: the
/// switchboard holds its lock then, and a page's write can make TLS hand over that page's own
/// waiting messages, whose replies (the status) read the switchboard.
///
/// While a wiring check runs, one line is lit alone (or a strip runs its ``StripCheck``) and frames
/// are held back; the check ends on request, after ``checkDuration`` (a strip: its sequence), or at
/// shutdown. Lamps and strips alike go through ``LevelOutput``: the tap never asks what the output is.
package final class LampTap: LevelOutput {
    /// Longest a wiring check keeps a line lit.
    static let checkDuration = TimeAmount.seconds(10)

    /// One line of the receiver, as the page names it.
    package struct Line: Sendable, Equatable {
        package var band: Band
        package var offset: Int

        package init(band: Band, offset: Int) {
            self.band = band
            self.offset = offset
        }
    }

    /// What a wiring check lights: a line, or the strip.
    enum Part: Sendable, Equatable {
        case line(Line)
        case strip
    }

    private struct State {
        var output: any LevelOutput
        var maxBrightness: Int
        /// `receiver.lights: off`: every frame is shown dark.
        var isDark = false
        var checking: Part?
        var checkGeneration = 0
        var isShutDown = false
        var look: LightLook
    }

    /// The lines, in output order.
    let lines: [Line]
    /// The output's strips (at most one today).
    package let strips: [StripDescription]
    /// The strip's pixels now, read without the lock frames are shown under (the strip keeps them
    /// behind a lock of its own): a page never holds the lamps up.
    private let pixelSource: @Sendable () -> [UInt8]
    private let state: Mutex<State>
    /// Levels shown (bits 0…23: bass, mid, treble) and a generation (bits 24…63).
    private let published = Atomic<UInt64>(0)
    /// The beat of the last frame shown: BPM (bits 0…15), the frame's beat (16…19), the place of the latest beat
    /// (20…23), the phase in 1/65535 (24…39).
    private let publishedBeat = Atomic<UInt64>(0)
    /// The receiver's event loop: frames, pages and the wiring check's timer.
    let eventLoop: any EventLoop
    /// Who is told of new levels; `watcherCount` lets a frame skip the lock when nobody watches.
    private let watchers = Mutex<[ObjectIdentifier: @Sendable () -> Void]>([:])
    private let watcherCount = Atomic<Int>(0)
    /// A hop to ``eventLoop`` to tell the watchers is on its way.
    private let hopPending = Atomic<Bool>(false)

    /// - Parameter look: the effect (`receiver.strip.effect`) and the idle look (`analysis.idle`, `idle_after`).
    package init(
        output: any LevelOutput, lines: [Line], maxBrightness: Int, dark: Bool = false, look: LightLook = LightLook(),
        eventLoop: any EventLoop = MultiThreadedEventLoopGroup.singleton.any()
    ) {
        self.lines = lines
        strips = output.strips
        pixelSource = { [output] in output.stripPixels() }
        self.eventLoop = eventLoop
        state = Mutex(State(output: output, maxBrightness: maxBrightness, isDark: dark, look: look))
    }

    package func show(_ frame: LevelFrame) throws {
        let shown = try state.withLock { state -> Bool in
            guard !state.isShutDown, state.checking == nil else { return false }
            state.look.restart()
            publishedBeat.store(0, ordering: .relaxed)
            let scaled = state.isDark ? .off : Self.scale(frame, percent: state.maxBrightness)
            try state.output.show(scaled)
            publish(state.output.seenLevels(after: scaled))
            return true
        }
        if shown { tellWatchers() }
    }

    package func show(_ frame: LevelFrame, beat: BeatState?) throws {
        let shown = try state.withLock { state -> Bool in
            guard !state.isShutDown, state.checking == nil else { return false }
            let (levels, cue) = state.look.look(frame, beat: beat, at: MonotonicClock.seconds())
            for change in state.look.takeReleased() { state.output.apply(change) }
            publishBeat(cue)
            let scaled = state.isDark ? .off : Self.scale(levels, percent: state.maxBrightness)
            try state.output.show(scaled, look: state.isDark ? .none : cue)
            publish(state.output.seenLevels(after: scaled))
            return true
        }
        if shown { tellWatchers() }
    }

    /// The beat of the frame shown last: the tempo held (BPM, 0 while none), the frame's beat (0, or its place in
    /// the bar on the frame where a beat falls), the place of the latest beat (0 while none is held) and the
    /// phase (0…1 from that beat to the next).
    package var beat: (bpm: Int, beat: Int, place: Int, phase: Double) {
        let word = publishedBeat.load(ordering: .relaxed)
        return (Int(word & 0xffff), Int(word >> 16 & 0xf), Int(word >> 20 & 0xf), Double(word >> 24 & 0xffff) / 65535)
    }

    private func publishBeat(_ cue: LookCue) {
        guard let beat = cue.beat else {
            publishedBeat.store(0, ordering: .relaxed)
            return
        }
        let bpm = UInt64(min(max(beat.bpm.rounded(), 0), 65535))
        let phase = UInt64((min(max(beat.phase, 0), 1) * 65535).rounded())
        let word = phase << 24 | UInt64(cue.place & 0xf) << 20 | UInt64(beat.beat & 0xf) << 16 | bpm
        publishedBeat.store(word, ordering: .relaxed)
    }

    /// `analysis.idle` and `analysis.idle_after` from the next frame on.
    func setIdle(_ idle: IdleLook, after seconds: Double) {
        state.withLock { state in
            state.look.idle = idle
            state.look.idleAfter = seconds
        }
    }

    /// Calls `changed` on ``eventLoop`` after every frame shown, until ``unwatch(_:)`` with the same `id`.
    package func watch(_ id: ObjectIdentifier, _ changed: @escaping @Sendable () -> Void) {
        watchers.withLock { watchers in
            watchers[id] = changed
            watcherCount.store(watchers.count, ordering: .relaxed)
        }
    }

    func unwatch(_ id: ObjectIdentifier) {
        watchers.withLock { watchers in
            watchers[id] = nil
            watcherCount.store(watchers.count, ordering: .relaxed)
        }
    }

    private func tellWatchers() {
        guard watcherCount.load(ordering: .relaxed) > 0 else { return }
        let tell: @Sendable () -> Void = { [self] in
            for changed in watchers.withLock({ Array($0.values) }) { changed() }
        }
        if !hopPending.exchange(true, ordering: .acquiringAndReleasing) {
            eventLoop.execute { [self] in
                hopPending.store(false, ordering: .releasing)
                tell()
            }
        }
    }

    package func shutDown() {
        state.withLock { state in
            guard !state.isShutDown else { return }
            state.isShutDown = true
            state.checking = nil
            state.output.shutDown()
        }
        publish(.off)
        tellWatchers()
    }

    /// The levels the lamps show and their generation (changes with every frame shown).
    package var levels: (frame: LevelFrame, generation: UInt64) {
        let word = published.load(ordering: .relaxed)
        let frame = LevelFrame(bass: UInt8(word & 0xff), mid: UInt8(word >> 8 & 0xff), treble: UInt8(word >> 16 & 0xff))
        return (frame, word >> 24)
    }

    /// The line a wiring check lights now (nil also while the strip's check runs).
    package var checking: Line? {
        state.withLock { state in
            if case .line(let line) = state.checking { return line }
            return nil
        }
    }

    /// Whether the strip's check runs now.
    package var checkingStrip: Bool { state.withLock { $0.checking == .strip } }

    /// The pixels of the strip now (empty without one), for the page.
    package func stripPixels() -> [UInt8] { pixelSource() }

    /// Brightness limit, percent, from the next frame on.
    func setMaxBrightness(_ percent: Int) {
        state.withLock { $0.maxBrightness = percent }
    }

    /// `receiver.lights`: off (`dark`) shows every frame dark from now on, and darkens the lamps at once; on
    /// lets the next frame through.
    func setDark(_ dark: Bool) {
        let darkened = state.withLock { state -> Bool in
            state.isDark = dark
            guard dark, !state.isShutDown, state.checking == nil else { return false }
            try? state.output.show(.off)
            publish(state.output.seenLevels(after: .off))
            return true
        }
        if darkened { tellWatchers() }
    }

    /// Applies a page's change of a setting the output acts on, from the next frame on; a change of the effect or
    /// the palette while a beat is held waits for the next downbeat (``LightLook/request(_:)``).
    package func apply(_ change: OutputChange) {
        state.withLock { state in
            if let now = state.look.request(change) { state.output.apply(now) }
        }
    }

    /// Lights `offset` alone (nil: ends the check, lamps dark until the next frame).
    ///
    /// - Throws: ``LampCheckError`` when `offset` is not one of the receiver's lines.
    package func check(_ offset: Int?) throws(LampCheckError) {
        guard let offset else {
            endCheck(generation: nil)
            return
        }
        guard let line = lines.first(where: { $0.offset == offset }) else {
            let known = lines.map { "\($0.offset) (\($0.band))" }.joined(separator: ", ")
            throw LampCheckError(description: "line \(offset) is not one of the receiver's lines: \(known)")
        }
        let generation = state.withLock { state -> Int? in
            guard !state.isShutDown else { return nil }
            state.checking = .line(line)
            state.checkGeneration += 1
            try? state.output.showCheck(.line(band: line.band, offset: line.offset))
            return state.checkGeneration
        }
        guard let generation else { return }
        var lit = LevelFrame.off
        lit[line.band] = 255
        publish(lit)
        tellWatchers()
        eventLoop.scheduleTask(in: Self.checkDuration) { [self] in endCheck(generation: generation) }
    }

    /// Runs the strip's wiring check (``StripCheck``): the ends, a runner, then dark.
    ///
    /// - Throws: ``LampCheckError`` when the receiver drives no strip.
    package func checkStrip() throws(LampCheckError) {
        guard let strip = strips.first else {
            throw LampCheckError(description: "this receiver drives no strip (receiver.strip.device)")
        }
        let sequence = StripCheck(pixels: strip.pixels)
        let generation = state.withLock { state -> Int? in
            guard !state.isShutDown else { return nil }
            state.checking = .strip
            state.checkGeneration += 1
            return state.checkGeneration
        }
        guard let generation else { return }
        showStripCheck(sequence.steps[...], generation: generation, start: eventLoop.now, due: .zero)
    }

    /// Shows the first of `steps`, due at `due` after `start`, and schedules the rest as
    /// ``StripCheck/nextStep(due:seconds:shown:)`` says (on the check's grid, each step up at least
    /// half its time). The last step, dark, ends the check.
    private func showStripCheck(
        _ steps: ArraySlice<(step: StripCheck.Step, seconds: Double)>, generation: Int, start: NIODeadline,
        due: Duration
    ) {
        guard let (step, seconds) = steps.first else { return }
        if case .dark = step {
            endCheck(generation: generation)
            return
        }
        let current = state.withLock { state -> Bool in
            guard state.checkGeneration == generation, state.checking == .strip, !state.isShutDown else {
                return false
            }
            try? state.output.showCheck(.strip(step))
            return true
        }
        guard current else { return }
        publish(.off)  // a new generation: the pages draw the step's pixels
        tellWatchers()
        let shown = Duration.nanoseconds((eventLoop.now - start).nanoseconds)
        let next = StripCheck.nextStep(due: due, seconds: seconds, shown: shown)
        eventLoop.scheduleTask(deadline: start + TimeAmount(next.at)) { [self] in
            showStripCheck(steps.dropFirst(), generation: generation, start: start, due: next.due)
        }
    }

    /// Ends the check that `generation` started (nil: whichever runs).
    private func endCheck(generation: Int?) {
        let ended = state.withLock { state -> Bool in
            guard let _ = state.checking, generation == nil || generation == state.checkGeneration, !state.isShutDown
            else {
                return false
            }
            state.checking = nil
            try? state.output.showCheck(nil)
            return true
        }
        if ended {
            publish(.off)
            tellWatchers()
        }
    }

    private func publish(_ frame: LevelFrame) {
        var word = published.load(ordering: .relaxed)
        let generation = (word >> 24) &+ 1
        word = generation << 24 | UInt64(frame.treble) << 16 | UInt64(frame.mid) << 8 | UInt64(frame.bass)
        published.store(word, ordering: .relaxed)
    }

    /// `frame` with every level scaled to `percent` of full (100: unchanged).
    static func scale(_ frame: LevelFrame, percent: Int) -> LevelFrame {
        guard percent < 100 else { return frame }
        func scaled(_ level: UInt8) -> UInt8 { UInt8((Int(level) * percent + 50) / 100) }
        return LevelFrame(bass: scaled(frame.bass), mid: scaled(frame.mid), treble: scaled(frame.treble))
    }
}

/// A wiring check the receiver cannot do, in the words the page shows.
package struct LampCheckError: Error, CustomStringConvertible {
    package let description: String
}
