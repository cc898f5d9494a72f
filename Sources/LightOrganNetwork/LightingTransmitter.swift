import Dispatch
public import LightOrganCore
public import Logging

#if canImport(Glibc)
import Glibc
#endif
#if os(Linux)
import FoundationEssentials
import Glibc
#else
import Foundation
#endif

/// Drives one lighting target (an sACN or Art-Net node, a WLED strip) over UDP: the newest frame
/// at most ``LightingTarget/rate`` times a second, kept alive while the lamps are lit, let go when
/// they have been dark for a while.
///
/// ``show(_:)`` never waits on the network: it renders and sends at once when the target's rate
/// allows (one `sendto(2)` per universe or DDP packet, on the caller's thread), else it keeps the
/// frame for the next caller, whose newer frame replaces it (newest wins: what goes out is always
/// the frame just made). Only when no frame follows within ``flushAfter`` does the transmitter's
/// own thread send the kept one, so frames that keep coming cost that thread no wake-up. It also
/// resolves the device's name (DNS and DNS-SD may block it, never the caller or another target),
/// repeats the last frame when nothing new comes — twice ``repeatGap`` apart, then every
/// ``keepAlive`` (E1.31 §6.6.1: three packets of unchanged data before a source slows down,
/// then a keep-alive within every second; WLED gives up realtime mode after 2.5 s of silence, an
/// E1.31 receiver declares data loss after 2.5 s) — and, after `releaseAfter` of dark frames,
/// lets the target go: sACN streams are terminated (three packets with the stream-terminated
/// option, E1.31 §6.2.6) so receivers drop the source at once, and nothing more is sent until a
/// lamp lights again. Nothing is sent before the first lit frame. ``stop()`` sends a dark frame
/// and terminates the streams on the caller's thread at once, whatever the transmitter's own
/// thread is doing (a name that takes seconds to resolve never delays the dark).
///
/// An unreachable or unresolvable device costs its own thread a retry every second and nothing
/// else; a full socket buffer drops the packet (counted).
public final class LightingTransmitter: Sendable {
    /// The longest the last frame goes unrepeated while the target is held, once it has gone out
    /// three times: 800 ms, inside E1.31's one second with margin for a busy machine.
    public static let keepAlive: Int64 = 800_000_000
    /// How soon an unchanged frame is sent again, twice, before the keep-alives: longer than the
    /// gap between a sender's frames, so a flowing stream never wakes the thread for a repeat.
    static let repeatGap: Int64 = 100_000_000
    /// Packets of the same frame before the transmitter slows down to ``keepAlive``.
    static let sendsBeforeKeepAlive = 3
    /// How long ``stop()`` waits for the transmitter's own thread to end; one blocked in DNS is
    /// left to end by itself (it sends nothing more).
    public static let stopWait: Int64 = 50_000_000
    /// How long a frame kept for its slot waits for a newer one before the thread sends it
    /// itself: frames that keep coming are sent by their own callers, the thread stays asleep.
    static let flushAfter: Int64 = 60_000_000
    /// How often a device that cannot be resolved is tried again.
    static let retryResolve: Int64 = 1_000_000_000
    /// How often a resolved name is resolved again (a device that changed address is followed).
    static let refreshResolve: Int64 = 30_000_000_000
    /// How often a discovered target asks its locator again (nodes come and go).
    static let refreshDiscovered: Int64 = 3_000_000_000

    /// Where it sends, and what.
    public let patch: LightingPatch
    private let condition: MonotonicCondition<State>
    private let finished = DispatchSemaphore(value: 0)
    private let interval: Int64
    private let slack: Int64
    private let releaseAfter: Int64
    private let locate: @Sendable () -> [String]
    private let logger: Logger

    private struct State {
        var renderer: FixtureRenderer
        var packetizer: LightingPacketizer
        var socket: LightingSocket?
        /// The hosts the socket was resolved from, and when to resolve again.
        var resolvedHosts: [String] = []
        var nextResolve: Int64 = 0
        /// The newest frame not sent yet, and since when one has been waiting.
        var pending: LevelFrame?
        var pendingSince: Int64 = 0
        /// When the thread wakes next by itself.
        var threadDeadline: Int64 = .max
        var lastShown = LevelFrame.off
        /// The earliest time the next packet may go (slots `interval` apart).
        var nextSlot: Int64 = 0
        var lastSendAt: Int64 = 0
        /// How many packets in a row carried ``lastShown`` (repeats and keep-alives included).
        var sendsOfLast = 0
        /// The patch check's step shown instead of the levels (``check(_:)``), if any.
        var checkStep: PatchCheck.Step?
        /// When a lamp was last lit (or the transmitter started).
        var litAt: Int64
        /// Let go after darkness (and before the first lit frame): nothing is sent until a lamp lights.
        var released = true
        /// A lamp has been lit since the start.
        var hasStreamed = false
        var stopping = false
        var sent = 0
        var dropped = 0
        var failed = 0
        var reportedSent = 0
        var reportedDropped = 0
        var reportedFailed = 0
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
        condition = MonotonicCondition(
            State(renderer: renderer, packetizer: packetizer, litAt: MonotonicClock.nanoseconds()))
        interval = 1_000_000_000 / Int64(patch.target.rate)
        slack = interval / 4
        self.releaseAfter = Int64(releaseAfter / .nanoseconds(1))
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

    /// Shows `frame` on the target: sent now if the rate allows, else kept for the next slot
    /// (replacing any frame kept before). Never waits for the network.
    public func show(_ frame: LevelFrame) {
        let wake = condition.withLock { state -> Bool in
            guard !state.stopping else { return false }
            let now = MonotonicClock.nanoseconds()
            let previous = state.lastShown
            state.lastShown = frame
            if !frame.isOff || state.checkStep != nil { state.litAt = now }
            var resumed = false
            if state.released {
                guard !frame.isOff else { return false }
                state.released = false
                resumed = true  // the thread sleeps without keep-alives while released: wake it
                if state.hasStreamed { logger.info("\(patch.target): lamps lit again; streaming") }
                state.hasStreamed = true
            }
            let darkens = frame.isOff && !(state.pending ?? previous).isOff
            // The thread keeps the release timer; a long sleep would overshoot it.
            let releaseDue = darkens && state.threadDeadline > now + releaseAfter
            if now >= state.nextSlot - slack {
                send(frame, in: &state, now: now)
                state.pending = nil
                return resumed || releaseDue
            }
            if state.pending == nil { state.pendingSince = now }
            state.pending = frame
            // While frames flow, the next one sends (or replaces) this one; the thread flushes it
            // only if none follows within ``flushAfter``, or at the next keep-alive. It is woken
            // only for a frame that turns the lamps dark (a receiver's last frame before silence).
            return resumed || releaseDue || (darkens && state.threadDeadline > now + Self.flushAfter)
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
        endStop(waitingUntil: MonotonicClock.nanoseconds() + Self.stopWait)
    }

    /// The first half of ``stop()``: dark and terminated now (a few `sendto`s, never a wait), the
    /// thread told to end. Stopping several targets, begin them all, then end them.
    public func beginStop() {
        let first = condition.withLock { state -> Bool in
            guard !state.stopping else { return false }
            state.stopping = true
            letGo(&state, now: MonotonicClock.nanoseconds())
            return true
        }
        if first { condition.signal() }
    }

    /// The second half of ``stop()``: waits for the thread to end, until `deadline` (monotonic ns)
    /// at the latest; a thread still blocked then (resolving a name) ends by itself later.
    public func endStop(waitingUntil deadline: Int64) {
        let left = max(0, deadline - MonotonicClock.nanoseconds())
        _ = finished.wait(timeout: .now() + .nanoseconds(Int(left)))
    }

    /// Packets sent, dropped and failed since the last call, and the problem now, if any:
    /// `sacn://10.0.0.9:5568 sent 440, dropped 0`.
    public func takeStatistics() -> String {
        condition.withLock { state in
            defer {
                state.reportedSent = state.sent
                state.reportedDropped = state.dropped
                state.reportedFailed = state.failed
            }
            var line =
                "\(patch.target.address) sent \(state.sent - state.reportedSent), dropped \(state.dropped - state.reportedDropped)"
            if state.failed > state.reportedFailed { line += ", failed \(state.failed - state.reportedFailed)" }
            if state.released { line += " (released: lamps dark)" }
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
                state.stopping || MonotonicClock.nanoseconds() < state.nextResolve ? nil : locate()
            }
            if let hosts = wanted { resolve(hosts) }
            let stop = condition.withLock { state -> Bool in
                while true {
                    let now = MonotonicClock.nanoseconds()
                    if state.stopping { return true }  // dark and terminated by stop() already
                    if now >= state.nextResolve { return false }
                    if let frame = state.pending,
                        now >= max(state.nextSlot - slack, state.pendingSince + Self.flushAfter)
                    {
                        state.pending = nil
                        send(frame, in: &state, now: now)
                    }
                    if !state.released {
                        if state.lastShown.isOff, now - state.litAt >= releaseAfter {
                            letGo(&state, now: now)
                            logger.info(
                                "\(patch.target): lamps dark for \(Double(releaseAfter) / 1e9) s; let go until they light again"
                            )
                        } else if state.pending == nil, now >= repeatDue(state) {
                            send(state.lastShown, in: &state, now: now, repeated: true)
                        }
                    }
                    var deadline = state.nextResolve
                    if state.pending != nil {
                        deadline = min(deadline, max(state.nextSlot - slack, state.pendingSince + Self.flushAfter))
                    }
                    if !state.released {
                        if state.pending == nil { deadline = min(deadline, repeatDue(state)) }
                        if state.lastShown.isOff { deadline = min(deadline, state.litAt + releaseAfter) }
                    }
                    state.threadDeadline = deadline
                    condition.waitWhileLocked(untilNanoseconds: deadline)
                    state.threadDeadline = .max
                }
            }
            if stop { return }
        }
    }

    /// When the last frame is due again: ``repeatGap`` after it went out until it has gone out
    /// ``sendsBeforeKeepAlive`` times, then ``keepAlive``.
    private func repeatDue(_ state: State) -> Int64 {
        state.lastSendAt
            + (state.sendsOfLast < Self.sendsBeforeKeepAlive ? max(Self.repeatGap, interval) : Self.keepAlive)
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
            let now = MonotonicClock.nanoseconds()
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

    /// Renders and sends `frame` (every universe, or every DDP packet); `repeated`: the same
    /// frame again (a repeat or keep-alive).
    private func send(
        _ frame: LevelFrame, in state: inout State, now: Int64, terminated: Bool = false, repeated: Bool = false
    ) {
        if let step = state.checkStep, !frame.isOff {
            state.renderer.render(step)
        } else {
            state.renderer.render(frame)
        }
        state.packetizer.encode(state.renderer, terminated: terminated)
        state.sendsOfLast = repeated ? state.sendsOfLast + 1 : 1
        state.lastSendAt = now
        // Slots `interval` apart; a late frame leaves credit for up to two more at once, so frames
        // bunched by a busy machine (or a timer) are not lost while the long-run rate stays within
        // `rate`.
        state.nextSlot = max(state.nextSlot, now - 2 * interval) + interval
        guard let socket = state.socket else { return }
        let multicast = patch.target.host == LightingTarget.multicast
        for index in 0..<state.packetizer.packetCount {
            let packet = state.packetizer.packets[index]
            switch socket.send(packet.bytes, multicastUniverse: multicast ? packet.universe : nil) {
            case .sent: state.sent += 1
            case .dropped: state.dropped += 1
            case .failed(let code):
                state.failed += 1
                let problem =
                    "cannot send to \(socket.addressText):\(patch.target.port): \(NetworkError.errnoText(code))"
                if state.lastProblem != problem {
                    logger.warning("\(patch.target): \(problem)")
                    state.lastProblem = problem
                }
            }
        }
    }

    /// Dark now, and for sACN three stream-terminated packets; then nothing until a lamp lights.
    private func letGo(_ state: inout State, now: Int64) {
        guard !state.released else { return }
        // A frame still waiting for its slot is shown first: the last frame made is never lost.
        if let frame = state.pending, !frame.isOff { send(frame, in: &state, now: now) }
        state.pending = nil
        send(.off, in: &state, now: now)
        if patch.target.kind == .sacn {
            for _ in 0..<3 { send(.off, in: &state, now: now, terminated: true) }
        }
        state.released = true
    }
}
