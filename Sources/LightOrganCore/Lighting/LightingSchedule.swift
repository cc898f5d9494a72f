/// When a lighting target (an sACN or Art-Net node, a WLED strip) gets a packet: the decisions of a
/// ``LightingTarget``'s transmitter, with the time passed in and no I/O.
///
/// - **Pacing.** Packets go in slots ``interval`` apart (the target's rate). A frame shown when its
///   slot has come (within ``slack``) is sent at once by its caller; else it is kept, and a newer
///   frame replaces it (newest wins). A kept frame is sent by the transmitter's thread only when no
///   newer one followed within ``flushAfter`` and its slot has come: frames that keep coming are
///   sent by their callers and cost the thread no wake-up. A late packet leaves credit for up to two
///   more at once, so frames bunched by a busy machine are not lost while the long-run rate stays
///   within the target's.
/// - **Repeats and keep-alives.** While the target is held, the last frame goes out again
///   ``repeatGap`` after it went out until it has gone out ``sendsBeforeKeepAlive`` times, then
///   every ``keepAlive`` (E1.31 §6.6.1: three packets of unchanged data before a source slows
///   down, then a keep-alive within every second; WLED leaves realtime mode after 2.5 s of
///   silence).
/// - **Release.** After ``releaseAfter`` of dark frames the target is let go: dark, its streams
///   terminated, then nothing until a lamp lights again. Nothing is sent before the first lit
///   frame.
///
/// Time is a `Duration` since the zero of the caller's monotonic clock (``MonotonicClock/elapsed()``).
/// Invariant: a frame is ``pending`` only while the target is held.
public struct LightingSchedule: Sendable {
    /// The longest the last frame goes unrepeated while the target is held, once it has gone out
    /// ``sendsBeforeKeepAlive`` times: inside E1.31's one second with margin for a busy machine.
    public static let keepAlive = Duration.milliseconds(800)
    /// How soon an unchanged frame is sent again, twice, before the keep-alives: longer than the
    /// gap between a sender's frames, so a flowing stream never wakes the thread for a repeat.
    public static let repeatGap = Duration.milliseconds(100)
    /// Packets of the same frame before the repeats slow down to ``keepAlive``.
    public static let sendsBeforeKeepAlive = 3
    /// How long a kept frame waits for a newer one before the transmitter's thread sends it.
    public static let flushAfter = Duration.milliseconds(60)

    /// Time between packet slots: one over the target's rate.
    public let interval: Duration
    /// How early in its slot a packet may go: a quarter of ``interval`` (timers and senders jitter).
    public let slack: Duration
    /// How long dark frames keep the target held before it is let go.
    public let releaseAfter: Duration

    /// The newest frame not sent yet.
    public private(set) var pending: LevelFrame?
    /// The last frame shown (sent or kept): what repeats and keep-alives carry.
    public private(set) var lastShown = LevelFrame.off
    /// Let go after darkness (and before the first lit frame): nothing is sent until a lamp lights.
    public private(set) var isReleased = true
    /// A lamp has been lit since the start.
    public private(set) var hasStreamed = false
    /// When the oldest frame kept for its slot was kept.
    private var pendingSince = Duration.zero
    /// The earliest time the next packet may go.
    private var nextSlot = Duration.zero
    private var lastSendAt = Duration.zero
    /// Packets in a row that carried ``lastShown`` (repeats and keep-alives included).
    private var sendsOfLast = 0
    /// When a lamp was last lit (or the schedule started).
    private var litAt: Duration
    /// When the transmitter's thread wakes by itself; nil while it is awake (or sleeps for good).
    private var threadWakesAt: Duration?

    /// A schedule for a target of `rate` packets a second, started at `now`.
    public init(rate: Int, releaseAfter: Duration, now: Duration) {
        precondition(rate > 0, "a target's rate is at least one packet a second")
        interval = .seconds(1) / rate
        slack = interval / 4
        self.releaseAfter = releaseAfter
        litAt = now
    }

    /// What the caller of ``show(_:lit:at:)`` does.
    public struct ShowDecision: Equatable, Sendable {
        /// Send the frame now (its slot has come); else it is kept as ``pending``.
        public var sendNow: Bool
        /// Wake the transmitter's thread: its sleep would miss what this frame asks (a release
        /// timer, the flush of a darkening frame) or it slept released.
        public var wakeThread: Bool
        /// The lamps lit again after the target was let go (not the first lit frame).
        public var litAgain: Bool

        /// Nothing to send or wake: a dark frame while released.
        public static let ignored = ShowDecision(sendNow: false, wakeThread: false, litAgain: false)
    }

    /// A frame made at `now`; `lit`: the frame lights a lamp (a level above zero, or the patch
    /// check's step). When ``ShowDecision/sendNow``, the caller sends it and calls
    /// ``sent(repeated:at:)``.
    public mutating func show(_ frame: LevelFrame, lit: Bool, at now: Duration) -> ShowDecision {
        let previous = lastShown
        lastShown = frame
        if lit { litAt = now }
        var resumed = false
        var litAgain = false
        if isReleased {
            guard !frame.isOff else { return .ignored }
            isReleased = false
            resumed = true  // the thread sleeps without keep-alives while released
            litAgain = hasStreamed
            hasStreamed = true
        }
        let darkens = frame.isOff && !(pending ?? previous).isOff
        // The thread keeps the release timer: a longer sleep would overshoot it.
        let releaseDue = darkens && sleepsPast(now + releaseAfter)
        if now >= nextSlot - slack {
            pending = nil
            return ShowDecision(sendNow: true, wakeThread: resumed || releaseDue, litAgain: litAgain)
        }
        if pending == nil { pendingSince = now }
        pending = frame
        // Woken only for a frame that turns the lamps dark (a receiver's last frame before
        // silence): while frames flow, the next one sends or replaces this one.
        let flushDue = darkens && sleepsPast(now + Self.flushAfter)
        return ShowDecision(sendNow: false, wakeThread: resumed || releaseDue || flushDue, litAgain: litAgain)
    }

    /// A packet of a frame went out at `now`; `repeated`: the same frame again (a repeat or a
    /// keep-alive). Takes its slot.
    public mutating func sent(repeated: Bool, at now: Duration) {
        sendsOfLast = repeated ? sendsOfLast + 1 : 1
        lastSendAt = now
        nextSlot = max(nextSlot, now - interval * 2) + interval
    }

    /// The kept frame, taken, when the thread should send it at `now`: its slot has come and no
    /// newer frame followed within ``flushAfter``.
    public mutating func takePendingDue(at now: Duration) -> LevelFrame? {
        guard let frame = pending, now >= flushTime else { return nil }
        pending = nil
        return frame
    }

    /// What holding the target asks of the thread at `now`.
    public enum HoldAction: Equatable, Sendable {
        case nothing
        /// Send ``LightingSchedule/lastShown`` again (a repeat or keep-alive).
        case repeatLast
        /// Dark long enough: let the target go (``letGo()``).
        case release
    }

    /// The repeat or release due at `now`, if any.
    public func holdAction(at now: Duration) -> HoldAction {
        guard !isReleased else { return .nothing }
        if lastShown.isOff, now - litAt >= releaseAfter { return .release }
        if pending == nil, now >= repeatDue { return .repeatLast }
        return .nothing
    }

    /// What letting the target go sends: the kept frame first if it lights a lamp (the last frame
    /// made is never lost), then dark (and for sACN the stream-terminated packets).
    public struct Release: Equatable, Sendable {
        public var flushFirst: LevelFrame?

        public init(flushFirst: LevelFrame?) {
            self.flushFirst = flushFirst
        }
    }

    /// Lets the target go: nothing is sent after the release's packets until a lamp lights. Nil
    /// when it was let go already.
    public mutating func letGo() -> Release? {
        guard !isReleased else { return nil }
        let flush = pending.flatMap { $0.isOff ? nil : $0 }
        pending = nil
        isReleased = true
        return Release(flushFirst: flush)
    }

    /// When the thread should wake by itself after `now`, at `resolveAt` at the latest (its next
    /// name resolution); the schedule remembers it to decide later wake-ups
    /// (``ShowDecision/wakeThread``) until ``threadWoke()``.
    public mutating func threadSleeps(resolveAt: Duration) -> Duration {
        var deadline = resolveAt
        if pending != nil { deadline = min(deadline, flushTime) }
        if !isReleased {
            if pending == nil { deadline = min(deadline, repeatDue) }
            if lastShown.isOff { deadline = min(deadline, litAt + releaseAfter) }
        }
        threadWakesAt = deadline
        return deadline
    }

    /// The thread is awake again.
    public mutating func threadWoke() {
        threadWakesAt = nil
    }

    /// When the kept frame is sent by the thread: its slot, and ``flushAfter`` after it was kept.
    private var flushTime: Duration { max(nextSlot - slack, pendingSince + Self.flushAfter) }

    /// When the last frame is due again.
    private var repeatDue: Duration {
        lastSendAt + (sendsOfLast < Self.sendsBeforeKeepAlive ? max(Self.repeatGap, interval) : Self.keepAlive)
    }

    /// Whether the thread sleeps (or would, awake) past `time` by its own deadline: an awake
    /// thread computes its deadline afresh before it sleeps, so it counts as sleeping for ever.
    private func sleepsPast(_ time: Duration) -> Bool {
        threadWakesAt.map { $0 > time } ?? true
    }
}
