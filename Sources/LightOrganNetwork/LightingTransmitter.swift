import Dispatch
public import LightOrganCore
import LightOrganPOSIX
public import Logging

#if canImport(Glibc)
import Glibc
#endif

/// Drives one lighting target (an sACN or Art-Net node, a WLED strip) over UDP: sends what its
/// ``LightingSchedule`` decides (pacing, repeats and keep-alives, release), resolves the device's
/// name, and counts what went out.
///
/// ``show(_:)`` never waits on the network: it renders and sends at once when the schedule says
/// the frame's slot has come (one `sendto(2)` per universe or DDP packet, on the caller's thread),
/// else the schedule keeps it for a newer frame to replace. The transmitter's own thread sends a
/// kept frame no newer one followed, the repeats and keep-alives, and the release: dark, then for
/// sACN three packets with the stream-terminated option (E1.31 §6.2.6) so receivers drop the
/// source at once. It also resolves the device's name (DNS and DNS-SD may block it, never the caller
/// or another target). ``stop()`` sends a dark frame and terminates the streams on the caller's
/// thread at once, whatever the transmitter's own thread is doing (a name that takes seconds to
/// resolve never delays the dark).
///
/// An unreachable or unresolvable device costs its own thread a retry every second and nothing
/// else; a full socket buffer drops the packet (counted).
public final class LightingTransmitter: Sendable {
    /// How long ``stop()`` waits for the transmitter's own thread to end; one blocked in DNS is
    /// left to end by itself (it sends nothing more).
    public static let stopWait = Duration.milliseconds(50)
    /// How often a device that cannot be resolved is tried again.
    static let retryResolve = Duration.seconds(1)
    /// How often a resolved name is resolved again (a device that changed address is followed).
    static let refreshResolve = Duration.seconds(30)
    /// How often a discovered target asks its locator again (nodes come and go).
    static let refreshDiscovered = Duration.seconds(3)

    /// Where it sends, and what.
    public let patch: LightingPatch
    private let condition: MonotonicCondition<State>
    private let finished = DispatchSemaphore(value: 0)
    private let locate: @Sendable () -> [String]
    private let logger: Logger

    private struct State {
        var schedule: LightingSchedule
        var renderer: FixtureRenderer
        var packetizer: LightingPacketizer
        var socket: LightingSocket?
        /// The hosts the socket was resolved from, and when to resolve again.
        var resolvedHosts: [String] = []
        var nextResolve = Duration.zero
        /// The patch check's step shown instead of the levels (``check(_:)``), if any.
        var checkStep: PatchCheck.Step?
        var stopping = false
        /// Packets sent, dropped and failed, and the totals the last statistics line gave.
        var counts = DeliveryCounts()
        var report = DeliveryReport()
        var lastProblem: String?
    }

    /// Starts driving `patch`'s target, sending as `source`.
    ///
    /// - Parameters:
    ///   - releaseAfter: how long all-dark frames keep the target held before it is let go.
    ///   - locate: the hosts to send to now (the target's own, the WLED device DNS-SD chose, the
    ///     Art-Net nodes that answered ArtPoll); empty while there is none. Called on the
    ///     transmitter's thread.
    public init(
        patch: LightingPatch, source: LightingSource, releaseAfter: Duration, logger: Logger,
        locate: (@Sendable () -> [String])? = nil
    ) {
        self.patch = patch
        let renderer = FixtureRenderer(patch: patch)
        let packetizer = LightingPacketizer(for: renderer, source: source, priority: patch.target.priority)
        let schedule = LightingSchedule(
            rate: patch.target.rate, releaseAfter: releaseAfter, now: MonotonicClock.elapsed())
        condition = MonotonicCondition(State(schedule: schedule, renderer: renderer, packetizer: packetizer))
        // Multicast: a placeholder group, replaced by each packet's universe's.
        let host = patch.target.host == LightingTarget.multicast ? "239.255.0.1" : patch.target.host
        self.locate = locate ?? { [host] }
        self.logger = logger
        let universes =
            patch.target.kind == .ddp
            ? ""
            : ", universe\(patch.universes.count > 1 ? "s" : "") \(patch.universes.map(String.init).joined(separator: ", "))"
        logger.info(
            "\(patch.target.kind.displayName) \(patch.target): \(patch.fixtures.count) fixture\(patch.fixtures.count > 1 ? "s" : "") (\(patch.fixtures.map { "\($0.layout)" }.joined(separator: ", "))\(universes)), at most \(patch.target.rate) packets/s"
        )
        DedicatedThread.start(named: "lighting \(patch.target.kind)") { [self] in run() }
    }

    /// Shows `frame` on the target: sent now if its slot has come, else kept for a newer frame
    /// to replace. Never waits for the network.
    public func show(_ frame: LevelFrame) {
        let wake = condition.withLock { state -> Bool in
            guard !state.stopping else { return false }
            let now = MonotonicClock.elapsed()
            let decision = state.schedule.show(frame, lit: !frame.isOff || state.checkStep != nil, at: now)
            if decision.litAgain { logger.info("\(patch.target): lamps lit again; streaming") }
            if decision.sendNow { send(frame, in: &state, now: now) }
            return decision.wakeThread
        }
        if wake { condition.signal() }
    }

    /// The patch check: shows `step` (its channels at full, every other dark) until the next
    /// call; nil turns it dark and goes back to showing levels.
    public func check(_ step: PatchCheck.Step?) {
        condition.withLock { $0.checkStep = step }
        show(step == nil ? .off : LevelFrame(bass: 255, mid: 255, treble: 255))
    }

    /// Turns the target's lamps dark and terminates its streams now, on the caller's thread, then
    /// lets its thread end (waiting for that at most ``stopWait``). Later frames are ignored.
    public func stop() {
        beginStop()
        endStop(waitingUntil: MonotonicClock.elapsed() + Self.stopWait)
    }

    /// The first half of ``stop()``: dark and terminated now (a few `sendto`s, never a wait), the
    /// thread told to end. Stopping several targets, begin them all, then end them.
    public func beginStop() {
        let first = condition.withLock { state -> Bool in
            guard !state.stopping else { return false }
            state.stopping = true
            letGo(&state, now: MonotonicClock.elapsed())
            return true
        }
        if first { condition.signal() }
    }

    /// The second half of ``stop()``: waits for the thread to end, until `deadline` (on
    /// ``MonotonicClock/elapsed()``'s time line) at the latest; a thread still blocked then
    /// (resolving a name) ends by itself later.
    public func endStop(waitingUntil deadline: Duration) {
        let left = max(.zero, deadline - MonotonicClock.elapsed())
        _ = finished.wait(timeout: .now() + .nanoseconds(Int(MonotonicClock.nanoseconds(left))))
    }

    /// Packets sent, dropped and failed since the last call, and the problem now, if any:
    /// `sacn://10.0.0.9:5568 sent 440, dropped 0`.
    public func takeStatistics() -> String {
        condition.withLock { state in
            let change = state.report.takeChange(to: state.counts)
            var line = "\(patch.target.address) sent \(change.sent), dropped \(change.dropped)"
            if change.failed > 0 { line += ", failed \(change.failed)" }
            if state.schedule.isReleased { line += " (released: lamps dark)" }
            if let problem = state.lastProblem { line += " (\(problem))" }
            return line
        }
    }

    // MARK: - The transmitter's thread

    private func run() {
        defer { finished.signal() }
        while true {
            // Resolving may block: never under the lock.
            let wanted = condition.withLock { state -> [String]? in
                state.stopping || MonotonicClock.elapsed() < state.nextResolve ? nil : locate()
            }
            if let hosts = wanted { resolve(hosts) }
            let stop = condition.withLock { state -> Bool in
                while true {
                    let now = MonotonicClock.elapsed()
                    if state.stopping { return true }  // dark and terminated by stop() already
                    if now >= state.nextResolve { return false }
                    if let frame = state.schedule.takePendingDue(at: now) { send(frame, in: &state, now: now) }
                    switch state.schedule.holdAction(at: now) {
                    case .release:
                        letGo(&state, now: now)
                        logger.info(
                            "\(patch.target): lamps dark for \(Double(MonotonicClock.nanoseconds(state.schedule.releaseAfter)) / 1e9) s; let go until they light again"
                        )
                    case .repeatLast:
                        send(state.schedule.lastShown, in: &state, now: now, repeated: true)
                    case .nothing:
                        break
                    }
                    let deadline = state.schedule.threadSleeps(resolveAt: state.nextResolve)
                    condition.waitWhileLocked(untilNanoseconds: MonotonicClock.nanoseconds(deadline))
                    state.schedule.threadWoke()
                }
            }
            if stop { return }
        }
    }

    /// Opens a socket to `hosts` (empty: none known yet), logging changes once.
    private func resolve(_ hosts: [String]) {
        var socket: LightingSocket?
        var problem: String?
        if !hosts.isEmpty {
            do {
                socket = try LightingSocket(hosts: hosts, port: patch.target.port, interface: patch.target.interface)
            } catch {
                problem = "\(error)"
            }
        } else {
            problem =
                patch.target.kind == .artnet
                ? "no Art-Net node answered ArtPoll yet" : "no WLED device found yet (DNS-SD _wled._tcp)"
        }
        condition.withLock { state in
            let now = MonotonicClock.elapsed()
            if let socket {
                if state.resolvedHosts != hosts || state.socket?.addressText != socket.addressText {
                    logger.info("\(patch.target): sending to \(destinationText(hosts: hosts, socket: socket))")
                }
                state.socket = socket
                state.resolvedHosts = hosts
                state.lastProblem = nil
                state.nextResolve = now + (patch.target.isDiscovered ? Self.refreshDiscovered : Self.refreshResolve)
            } else {
                if state.lastProblem != problem, let problem {
                    logger.warning("\(patch.target): \(problem); retrying every second")
                }
                state.lastProblem = problem
                // A name that resolved before keeps its last address until it resolves again.
                state.nextResolve = now + Self.retryResolve
            }
        }
    }

    /// Where the packets go, as the log says it: `239.255.0.1, 239.255.0.2 (the groups of
    /// universes 1, 2) on eth1`, `10.0.0.255 (broadcast) on eth1`, `wled.local (10.0.0.7):4048`.
    private func destinationText(hosts: [String], socket: LightingSocket) -> String {
        let link = socket.interface.isEmpty ? "" : " on \(socket.interface)"
        let target = patch.target
        if target.host == LightingTarget.multicast {
            let universes = patch.universes + (target.syncUniverse.map { [$0] } ?? [])
            let groups = universes.map { "239.255.\($0 >> 8).\($0 & 0xff)" }
            let which = universes.count > 1 ? "the groups of universes" : "the group of universe"
            let sync = target.syncUniverse.map { ", synchronized on \($0)" } ?? ""
            return
                "\(groups.joined(separator: ", ")):\(target.port) (\(which) \(universes.map(String.init).joined(separator: ", "))\(sync))"
                + (link.isEmpty ? " by the default route's link" : link)
        }
        if target.host == LightingTarget.broadcast {
            return "\(socket.addressText):\(target.port) (broadcast)"
                + (link.isEmpty ? " by the default route's link" : link)
        }
        let shown =
            hosts.joined(separator: ", ") == socket.addressText
            ? socket.addressText : "\(hosts.joined(separator: ", ")) (\(socket.addressText))"
        return "\(shown):\(target.port)\(link)"
    }

    /// Renders and sends `frame` (every universe, or every DDP packet), taking its slot in the
    /// schedule; `repeated`: the same frame again (a repeat or keep-alive).
    private func send(
        _ frame: LevelFrame, in state: inout State, now: Duration, terminated: Bool = false, repeated: Bool = false
    ) {
        if let step = state.checkStep, !frame.isOff {
            state.renderer.render(step)
        } else {
            state.renderer.render(frame)
        }
        state.packetizer.encode(state.renderer, terminated: terminated)
        state.schedule.sent(repeated: repeated, at: now)
        guard let socket = state.socket else { return }
        let multicast = patch.target.host == LightingTarget.multicast
        for index in 0..<state.packetizer.packetCount {
            let packet = state.packetizer.packets[index]
            switch socket.send(packet.bytes, multicastUniverse: multicast ? packet.universe : nil) {
            case .sent: state.counts.sent += 1
            case .dropped: state.counts.dropped += 1
            case .failed(let code):
                state.counts.failed += 1
                let problem =
                    "cannot send to \(socket.addressText):\(patch.target.port): \(NetworkError.errnoText(code))"
                if state.lastProblem != problem {
                    logger.warning("\(patch.target): \(problem)")
                    state.lastProblem = problem
                }
            }
        }
    }

    /// Dark now, and for sACN three stream-terminated packets; then nothing until a lamp lights
    /// (the schedule's release).
    private func letGo(_ state: inout State, now: Duration) {
        guard let release = state.schedule.letGo() else { return }
        if let frame = release.flushFirst { send(frame, in: &state, now: now) }
        send(.off, in: &state, now: now)
        if patch.target.kind == .sacn {
            for _ in 0..<3 { send(.off, in: &state, now: now, terminated: true) }
        }
    }
}
