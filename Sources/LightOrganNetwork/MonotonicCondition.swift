#if canImport(Glibc)
import Glibc
#endif

/// A mutex with a condition variable whose timed waits run on CLOCK_MONOTONIC (a wall-clock jump
/// never stretches or cuts a wait), guarding a value of type `Value`.
///
/// `@unchecked Sendable`: `value` is only reached inside ``withLock(_:)``,
/// which hold the pthread mutex
/// (``waitWhileLocked(untilNanoseconds:)`` releases it only inside `pthread_cond_wait`).
final class MonotonicCondition<Value>: @unchecked Sendable {
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let condition = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
    private var value: Value

    init(_ value: Value) {
        self.value = value
        pthread_mutex_init(mutex, nil)
        var attributes = pthread_condattr_t()
        pthread_condattr_init(&attributes)
        pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC)
        pthread_cond_init(condition, &attributes)
        pthread_condattr_destroy(&attributes)
    }

    deinit {
        pthread_cond_destroy(condition)
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
        condition.deallocate()
    }

    /// Runs `body` with the value, under the lock.
    func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(&value)
    }

    /// Sleeps until `deadline` (CLOCK_MONOTONIC nanoseconds; nil: until signalled) or a signal;
    /// only from inside ``withLock(_:)``'s body, whose lock it releases while sleeping.
    func waitWhileLocked(untilNanoseconds deadline: Int64?) {
        if let deadline {
            guard deadline > MonotonicNanoseconds.now() else { return }
            var time = timespec(tv_sec: Int(deadline / 1_000_000_000), tv_nsec: Int(deadline % 1_000_000_000))
            pthread_cond_timedwait(condition, mutex, &time)
        } else {
            pthread_cond_wait(condition, mutex)
        }
    }

    /// Wakes the thread in ``loop(_:)``.
    func signal() { pthread_cond_signal(condition) }
}

/// CLOCK_MONOTONIC in nanoseconds.
enum MonotonicNanoseconds {
    static func now() -> Int64 {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return Int64(now.tv_sec) * 1_000_000_000 + Int64(now.tv_nsec)
    }
}
