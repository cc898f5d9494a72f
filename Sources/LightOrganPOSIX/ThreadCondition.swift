import LightOrganCore
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A mutex with a condition variable, for threads of our own (``DedicatedThread``): lock, wait,
/// signal. Timed waits run on CLOCK_MONOTONIC, so a wall-clock jump never stretches or cuts one.
///
/// `@unchecked Sendable`: the pthread objects live at fixed addresses for the object's lifetime
/// and pthread makes every operation on them thread-safe.
public final class ThreadCondition: @unchecked Sendable {
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let condition = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)

    public init() {
        pthread_mutex_init(mutex, nil)
        var attributes = pthread_condattr_t()
        pthread_condattr_init(&attributes)
        #if canImport(Glibc)
        pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC)
        #endif
        pthread_cond_init(condition, &attributes)
        pthread_condattr_destroy(&attributes)
    }

    deinit {
        pthread_cond_destroy(condition)
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
        condition.deallocate()
    }

    public func lock() { pthread_mutex_lock(mutex) }

    public func unlock() { pthread_mutex_unlock(mutex) }

    /// Runs `body` with the lock held.
    public func withLock<Result>(_ body: () throws -> Result) rethrows -> Result {
        lock()
        defer { unlock() }
        return try body()
    }

    /// Sleeps until signalled (or woken spuriously: callers wait in a loop over their own state);
    /// only with the lock held, which it releases while asleep.
    public func wait() { pthread_cond_wait(condition, mutex) }

    /// Sleeps until `deadline` (CLOCK_MONOTONIC nanoseconds) or a signal, whichever comes first;
    /// returns at once when the deadline has passed. Only with the lock held.
    public func wait(untilNanoseconds deadline: Int64) {
        guard deadline > MonotonicClock.nanoseconds() else { return }
        var time = timespec(tv_sec: Int(deadline / 1_000_000_000), tv_nsec: Int(deadline % 1_000_000_000))
        pthread_cond_timedwait(condition, mutex, &time)
    }

    /// Wakes one waiting thread.
    public func signal() { pthread_cond_signal(condition) }

    /// Wakes every waiting thread (each then checks its own state under the lock).
    public func broadcast() { pthread_cond_broadcast(condition) }
}
