#if canImport(Glibc)
import Glibc
#endif
import Dispatch
#if os(Linux)
import FoundationEssentials
import Glibc
#else
import Foundation
#endif
public import LightOrganCore
public import Logging

/// Drives one lighting target (an sACN or Art-Net node, a WLED strip) over UDP: the newest frame
/// at most ``LightingTarget/rate`` times a second, kept alive while the lamps are lit, let go when
/// they have been dark for a while.
///
/// ``show(_:)`` never waits on the network: it renders and sends at once when the target's rate
/// allows (one `sendto(2)` per universe or DDP packet, on the caller's thread), else it keeps the
/// frame for the next caller, whose newer frame replaces it (newest wins: what goes out is always
/// the frame just made). Only when no frame follows within ``flushAfter`` does the transmitter's
/// own thread send the kept one, so frames that keep coming cost that thread no wake-up. It also resolves the device's name (DNS and
/// DNS-SD may block it, never the caller or another target), resends the last frame every
/// ``keepAlive`` while nothing new comes (WLED gives up realtime mode after 2.5 s of silence, an
/// E1.31 receiver declares data loss after 2.5 s), and, after `releaseAfter` of dark frames,
/// lets the target go: sACN streams are terminated (three packets with the stream-terminated
/// option, E1.31 §6.2.6) so receivers drop the source at once, and nothing more is sent until a
/// lamp lights again. Nothing is sent before the first lit frame. ``stop()`` sends a dark frame,
/// terminates the streams and ends the thread.
///
/// An unreachable or unresolvable device costs its own thread a retry every second and nothing
/// else; a full socket buffer drops the packet (counted).
public final class LightingTransmitter: Sendable {
    /// The longest the last frame goes unrepeated while the target is held.
    public static let keepAlive: Int64 = 1_000_000_000
    /// How long a frame kept for its slot waits for a newer one before the thread sends it
    /// itself: frames that keep coming are sent by their own callers, the thread stays asleep.
    static let flushAfter: Int64 = 60_000_000
    /// How often a device that cannot be resolved is tried again.
    static let retryResolve: Int64 = 1_000_000_000
    /// How often a resolved name is resolved again (a device that changed address is followed).
    static let refreshResolve: Int64 = 30_000_000_000

    /// Where it sends, and what.
    public let patch: LightingPatch
    private let condition: MonotonicCondition<State>
    private let finished = DispatchSemaphore(value: 0)
    private let interval: Int64
    private let slack: Int64
    private let releaseAfter: Int64
    private let locate: @Sendable () -> String?
    private let logger: Logger

    private struct State {
        var renderer: FixtureRenderer
        var packetizer: LightingPacketizer
        var socket: LightingSocket?
        /// The host the socket was resolved from, and when to resolve again.
        var resolvedHost: String?
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
    ///   - locate: the host to send to now (the target's own, or the WLED device DNS-SD chose);
    ///     nil while there is none. Called on the transmitter's thread.
    public init(
        patch: LightingPatch, source: LightingSource, releaseAfter: Duration, logger: Logger,
        locate: (@Sendable () -> String?)? = nil
    ) {
        self.patch = patch
        let renderer = FixtureRenderer(patch: patch)
        let packetizer = LightingPacketizer(for: renderer, source: source, priority: patch.target.priority)
        condition = MonotonicCondition(State(renderer: renderer, packetizer: packetizer, litAt: MonotonicClock.nanoseconds()))
        interval = 1_000_000_000 / Int64(patch.target.rate)
        slack = interval / 4
        self.releaseAfter = Int64(releaseAfter / .nanoseconds(1))
        let host = patch.target.host == LightingTarget.multicast ? "239.255.0.1"
            : patch.target.host == LightingTarget.broadcast ? "255.255.255.255" : patch.target.host
        self.locate = locate ?? { host }
        self.logger = logger
        let universes = patch.target.kind == .ddp ? "" : ", universe\(patch.universes.count > 1 ? "s" : "") \(patch.universes.map(String.init).joined(separator: ", "))"
        logger.info(
            "\(patch.target.kind.displayName) \(patch.target): \(patch.fixtures.count) fixture\(patch.fixtures.count > 1 ? "s" : "") (\(patch.fixtures.map { "\($0.layout)" }.joined(separator: ", "))\(universes)), at most \(patch.target.rate) packets/s")
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
            if !frame.isOff { state.litAt = now }
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

    /// Turns the target's lamps dark, terminates its streams and ends its thread; waits for that
    /// (a few ms). Later frames are ignored.
    public func stop() {
        let first = condition.withLock { state -> Bool in
            defer { state.stopping = true }
            return !state.stopping
        }
        guard first else { return }
        condition.signal()
        finished.wait()
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
            var line = "\(patch.target.address) sent \(state.sent - state.reportedSent), dropped \(state.dropped - state.reportedDropped)"
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
            let wanted = condition.withLock { state -> String?? in
                state.stopping || MonotonicClock.nanoseconds() < state.nextResolve ? .none : .some(locate())
            }
            if case .some(let host) = wanted { resolve(host) }
            let stop = condition.withLock { state -> Bool in
                while true {
                    let now = MonotonicClock.nanoseconds()
                    if state.stopping {
                        letGo(&state, now: now)
                        return true
                    }
                    if now >= state.nextResolve { return false }
                    if let frame = state.pending, now >= max(state.nextSlot - slack, state.pendingSince + Self.flushAfter) {
                        state.pending = nil
                        send(frame, in: &state, now: now)
                    }
                    if !state.released {
                        if state.lastShown.isOff, now - state.litAt >= releaseAfter {
                            letGo(&state, now: now)
                            logger.info("\(patch.target): lamps dark for \(Double(releaseAfter) / 1e9) s; let go until they light again")
                        } else if now - state.lastSendAt >= Self.keepAlive {
                            send(state.lastShown, in: &state, now: now)
                        }
                    }
                    var deadline = state.nextResolve
                    if state.pending != nil {
                        deadline = min(deadline, max(state.nextSlot - slack, state.pendingSince + Self.flushAfter))
                    }
                    if !state.released {
                        deadline = min(deadline, state.lastSendAt + Self.keepAlive)
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

    /// Opens a socket to `host` (nil: none known yet), logging changes once.
    private func resolve(_ host: String?) {
        var socket: LightingSocket?
        var problem: String?
        if let host {
            do {
                socket = try LightingSocket(host: host, port: patch.target.port)
            } catch {
                problem = "\(error)"
            }
        } else {
            problem = "no WLED device found yet (DNS-SD _wled._tcp)"
        }
        condition.withLock { state in
            let now = MonotonicClock.nanoseconds()
            if let socket {
                if state.resolvedHost != host || state.socket?.addressText != socket.addressText {
                    let shown = host == socket.addressText ? host! : "\(host!) (\(socket.addressText))"
                    logger.info("\(patch.target): sending to \(shown):\(patch.target.port)")
                }
                state.socket = socket
                state.resolvedHost = host
                state.lastProblem = nil
                state.nextResolve = now + Self.refreshResolve
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

    /// Renders and sends `frame` (every universe, or every DDP packet).
    private func send(_ frame: LevelFrame, in state: inout State, now: Int64, terminated: Bool = false) {
        state.renderer.render(frame)
        state.packetizer.encode(state.renderer, terminated: terminated)
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
                let problem = "cannot send to \(socket.addressText):\(patch.target.port): \(NetworkError.errnoText(code))"
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
