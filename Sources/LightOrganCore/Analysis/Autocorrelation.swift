#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A running (exponentially windowed) autocorrelation of a signal, updated one sample at a time:
/// `r[L] ← λ·r[L] + x[n]·x[n − L]` for every lag `L` in `0…maxLag`, with `λ = exp(−1 / (timeConstant · rate))`.
///
/// One multiply-add per lag and sample, no window to recompute: a pulse train with period `P` samples builds
/// peaks at `P, 2P, 3P…`; after a change, the old peaks fade with the time constant while the new ones grow.
/// Fixed size: nothing is allocated after `init`.
struct Autocorrelation: Sendable {
    /// The longest lag, samples.
    let maxLag: Int
    /// λ, the weight each sample's products keep per later sample.
    let decay: Float
    /// r[0…maxLag].
    private(set) var values: [Float]

    /// Creates one for lags up to `maxLag` samples that forgets with `timeConstant` seconds at `rate` samples/s.
    init(maxLag: Int, timeConstant: Double, rate: Double) {
        self.maxLag = maxLag
        decay = Float(exp(-1 / (timeConstant * rate)))
        values = [Float](repeating: 0, count: maxLag + 1)
    }

    /// Adds the newest sample of `history` (which holds at least `maxLag + 1` samples).
    mutating func add(_ history: NewestFirstHistory) {
        precondition(history.capacity > maxLag, "the history is shorter than the longest lag")
        let newest = history[0]
        let decay = decay
        let maxLag = maxLag
        history.storage.withUnsafeBufferPointer { storage in
            let past = storage.baseAddress! + history.start
            values.withUnsafeMutableBufferPointer { r in
                for lag in 0...maxLag { r[lag] = decay * r[lag] + newest * past[lag] }
            }
        }
    }

    /// r at lag 0: the signal's power.
    var power: Float { values[0] }

    /// Sets r to `other`'s values at the lags both have, and to 0 beyond.
    mutating func copy(from other: Autocorrelation) {
        for index in values.indices { values[index] = index <= other.maxLag ? other.values[index] : 0 }
    }
}
