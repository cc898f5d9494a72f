#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// CLOCK_MONOTONIC: the clock of the stdout lines (shared by every process of the machine, so
/// scripts can compare), of the PWM deadlines and frame grids, and of every deadline our own
/// threads wait for (`ThreadCondition`, `ChildProcess`'s time limit, the lighting transmitters).
public enum MonotonicClock {
    /// Now, seconds.
    public static func seconds() -> Double {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
    }

    /// Now, as whole seconds and nanoseconds (0…999,999,999).
    public static func now() -> (seconds: Int, nanoseconds: Int) {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return (Int(now.tv_sec), Int(now.tv_nsec))
    }

    /// Now, nanoseconds (exact: the frame grids and audio clocks count in these).
    public static func nanoseconds() -> Int64 {
        let now = now()
        return Int64(now.seconds) * 1_000_000_000 + Int64(now.nanoseconds)
    }

    /// Now, as the time since the clock's zero (the instants of ``LightingSchedule``).
    public static func elapsed() -> Duration {
        .nanoseconds(nanoseconds())
    }

    /// `duration` in whole nanoseconds (rounded down; the deadlines of `ThreadCondition`-style
    /// waits).
    public static func nanoseconds(_ duration: Duration) -> Int64 {
        let (seconds, attoseconds) = duration.components
        return seconds * 1_000_000_000 + attoseconds / 1_000_000_000
    }

    /// Sleeps until `deadline` (seconds on this clock), through signals.
    public static func sleep(until deadline: Double) {
        sleep(untilNanoseconds: Int64(deadline * 1e9))
    }

    /// Sleeps until `deadline` (nanoseconds on this clock, ≥ 0), through signals.
    public static func sleep(untilNanoseconds deadline: Int64) {
        var time = timespec(tv_sec: Int(deadline / 1_000_000_000), tv_nsec: Int(deadline % 1_000_000_000))
        while clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &time, nil) == EINTR {}
    }
}
