import LightOrganCore
import Testing

/// `milliseconds` after the schedule's start, as its time line.
private func at(_ milliseconds: Int) -> Duration { .seconds(100) + .milliseconds(milliseconds) }

private let lit = LevelFrame(bass: 200, mid: 0, treble: 0)
private let brighter = LevelFrame(bass: 250, mid: 10, treble: 0)

/// A schedule at 40 packets a second (slots 25 ms apart, 6.25 ms early allowed), let go after 2 s.
private func schedule() -> LightingSchedule {
    LightingSchedule(rate: 40, releaseAfter: .seconds(2), now: at(0))
}

/// Shows `frame` at `milliseconds`; when the schedule says so, it is sent there as its caller would.
@discardableResult
private func show(_ frame: LevelFrame, _ schedule: inout LightingSchedule, at milliseconds: Int)
    -> LightingSchedule.ShowDecision
{
    let decision = schedule.show(frame, lit: !frame.isOff, at: at(milliseconds))
    if decision.sendNow { schedule.sent(repeated: false, at: at(milliseconds)) }
    return decision
}

/// Lit frames at 0, 1 and 2 ms: all three go at once (a start leaves credit for two more), the
/// next slot is at 25 ms.
private func started() -> LightingSchedule {
    var schedule = schedule()
    for milliseconds in 0..<3 { #expect(show(lit, &schedule, at: milliseconds).sendNow) }
    return schedule
}

@Suite("Lighting schedule: pacing, repeats, keep-alives and release, with time passed in")
struct LightingScheduleTests {
    @Test("nothing goes out before the first lit frame; that one goes at once and wakes the thread")
    func firstLitFrame() {
        var schedule = schedule()
        #expect(show(.off, &schedule, at: 0) == .ignored)
        #expect(schedule.isReleased)
        let first = show(lit, &schedule, at: 10)
        #expect(first.sendNow && first.wakeThread && !first.litAgain)
        #expect(!schedule.isReleased && schedule.hasStreamed)
    }

    @Test("slots 25 ms apart: a frame inside its slot waits, a newer one replaces it, the next slot sends it")
    func pacing() {
        var schedule = started()
        let early = show(brighter, &schedule, at: 10)
        #expect(!early.sendNow && !early.wakeThread, "a flowing stream never wakes the thread")
        #expect(schedule.pending == brighter)
        show(lit, &schedule, at: 15)
        #expect(schedule.pending == lit, "newest wins")
        // 18.75 ms: the slot at 25 ms, a quarter interval early.
        #expect(show(brighter, &schedule, at: 19).sendNow)
        #expect(schedule.pending == nil)
    }

    @Test("the thread sends a kept frame only when no newer one came within 60 ms")
    func flush() {
        var schedule = started()
        show(brighter, &schedule, at: 5)
        #expect(schedule.takePendingDue(at: at(30)) == nil, "its slot has come, but a newer frame may follow")
        #expect(schedule.takePendingDue(at: at(65)) == brighter)
        #expect(schedule.pending == nil)
    }

    @Test("a late packet leaves credit for two more at once, not more")
    func credit() {
        var schedule = started()
        // A busy machine: three frames bunched up 500 ms later.
        #expect(show(brighter, &schedule, at: 500).sendNow)
        #expect(show(lit, &schedule, at: 501).sendNow)
        #expect(show(brighter, &schedule, at: 502).sendNow)
        #expect(!show(lit, &schedule, at: 503).sendNow)
    }

    @Test("an unchanged frame goes again after 100 ms, twice, then every 800 ms")
    func repeatsAndKeepAlives() {
        var schedule = schedule()
        show(lit, &schedule, at: 0)
        #expect(schedule.holdAction(at: at(99)) == .nothing)
        #expect(schedule.holdAction(at: at(100)) == .repeatLast)
        schedule.sent(repeated: true, at: at(100))
        #expect(schedule.holdAction(at: at(200)) == .repeatLast)
        schedule.sent(repeated: true, at: at(200))
        // Three packets of it: now a keep-alive every 800 ms.
        #expect(schedule.holdAction(at: at(999)) == .nothing)
        #expect(schedule.holdAction(at: at(1000)) == .repeatLast)
        #expect(schedule.threadSleeps(resolveAt: at(60_000)) == at(1000))
    }

    @Test("dark for releaseAfter: let go, then nothing until a lamp lights, which says the lamps lit again")
    func release() {
        var schedule = schedule()
        show(lit, &schedule, at: 0)
        show(.off, &schedule, at: 40)
        #expect(
            schedule.holdAction(at: at(1999)) != .release, "dark since 40 ms, lit at 0: 2 s from the last lit frame")
        #expect(schedule.holdAction(at: at(2000)) == .release)
        #expect(schedule.letGo() == LightingSchedule.Release(flushFirst: nil))
        #expect(schedule.isReleased)
        #expect(schedule.letGo() == nil, "once")
        #expect(schedule.holdAction(at: at(10_000)) == .nothing, "no keep-alives while released")
        #expect(show(.off, &schedule, at: 3000) == .ignored)
        let again = show(lit, &schedule, at: 4000)
        #expect(again.sendNow && again.wakeThread && again.litAgain)
    }

    @Test("letting go sends a kept lit frame first: the last frame made is never lost")
    func releaseFlushes() {
        var schedule = started()
        show(brighter, &schedule, at: 5)
        #expect(schedule.letGo() == LightingSchedule.Release(flushFirst: brighter))
        #expect(schedule.pending == nil)
    }

    @Test("a frame that darkens wakes a thread asleep past its flush; a lit frame never does")
    func darkeningWakesTheThread() {
        var schedule = schedule()
        show(lit, &schedule, at: 0)
        schedule.sent(repeated: true, at: at(100))
        schedule.sent(repeated: true, at: at(200))
        // Asleep until the keep-alive at 1000 ms.
        #expect(schedule.threadSleeps(resolveAt: at(60_000)) == at(1000))
        // Two lit frames take the credit the quiet time left; neither wakes the thread.
        let brighterDecision = show(brighter, &schedule, at: 210)
        #expect(brighterDecision.sendNow && !brighterDecision.wakeThread && !brighterDecision.litAgain)
        #expect(!show(lit, &schedule, at: 211).wakeThread)
        let dark = show(.off, &schedule, at: 212)
        #expect(!dark.sendNow && dark.wakeThread, "kept for its slot: the thread must flush it within 60 ms")
        // The thread, awake, plans its next wake: the flush of the dark frame, 60 ms after it was kept.
        schedule.threadWoke()
        #expect(schedule.threadSleeps(resolveAt: at(60_000)) == at(272))
    }

    @Test("the thread's wake-up: the earliest of its name resolution, a flush, a repeat and the release")
    func deadline() {
        var schedule = schedule()
        #expect(schedule.threadSleeps(resolveAt: at(30_000)) == at(30_000), "released: only the resolution")
        show(lit, &schedule, at: 0)
        #expect(schedule.threadSleeps(resolveAt: at(30_000)) == at(100))
        #expect(schedule.threadSleeps(resolveAt: at(50)) == at(50))
        show(.off, &schedule, at: 30)
        schedule.sent(repeated: true, at: at(1900))
        schedule.sent(repeated: true, at: at(1950))
        #expect(schedule.threadSleeps(resolveAt: at(30_000)) == at(2000), "the release, 2 s after the last lit frame")
    }
}
