/// The last `capacity` values of a signal, newest first, in one contiguous run of memory.
///
/// Each value is written twice, at `p` and `p + capacity` of a ring of `2 × capacity`, with `p` moving backwards:
/// the `capacity` newest values then always lie in order, newest first, from ``start`` on, so that a loop over the
/// lags of an autocorrelation or the window of a cumulative score reads memory forwards without wrapping.
/// Fixed size: nothing is allocated after `init`.
struct NewestFirstHistory: Sendable {
    /// How many values are kept.
    let capacity: Int
    /// The ring; `storage[start + age]` is the value `age` steps old (0 = newest) for `age < capacity`.
    private(set) var storage: [Float]
    /// Index of the newest value in ``storage``.
    private(set) var start: Int

    /// Creates a history of `capacity` zeros.
    init(capacity: Int) {
        precondition(capacity > 0, "a history holds at least one value")
        self.capacity = capacity
        storage = [Float](repeating: 0, count: 2 * capacity)
        start = 0
    }

    /// Adds `value` as the newest; the oldest falls out.
    @inline(__always)
    mutating func push(_ value: Float) {
        start = start == 0 ? capacity - 1 : start - 1
        storage[start] = value
        storage[start + capacity] = value
    }

    /// The value `age` steps old (0 = the newest), `age < capacity`.
    @inline(__always)
    subscript(age: Int) -> Float { storage[start + age] }

    /// Sets every value to zero, in place.
    mutating func clear() {
        for index in storage.indices { storage[index] = 0 }
    }
}
