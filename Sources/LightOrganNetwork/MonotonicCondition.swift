import LightOrganCore
import LightOrganPOSIX

#if canImport(Glibc)
import Glibc
#endif

/// A ``ThreadCondition`` guarding a value of type `Value`: timed waits on CLOCK_MONOTONIC (a
/// wall-clock jump never stretches or cuts a wait).
///
/// `@unchecked Sendable`: `value` is only reached inside ``withLock(_:)``, which holds the lock
/// (``waitWhileLocked(untilNanoseconds:)`` releases it only inside the condition's wait).
final class MonotonicCondition<Value>: @unchecked Sendable {
    private let condition = ThreadCondition()
    private var value: Value

    init(_ value: Value) { self.value = value }

    /// Runs `body` with the value, under the lock.
    func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        try condition.withLock { try body(&value) }
    }

    /// Sleeps until `deadline` (CLOCK_MONOTONIC nanoseconds; nil: until signalled) or a signal;
    /// only from inside ``withLock(_:)``'s body, whose lock it releases while sleeping.
    func waitWhileLocked(untilNanoseconds deadline: Int64?) {
        if let deadline { condition.wait(untilNanoseconds: deadline) } else { condition.wait() }
    }

    /// Wakes the thread waiting in ``waitWhileLocked(untilNanoseconds:)``.
    func signal() { condition.signal() }
}
