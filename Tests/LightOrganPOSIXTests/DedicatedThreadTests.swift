import LightOrganCore
import LightOrganPOSIX
import Synchronization
import Testing

#if canImport(Glibc)
import Glibc
#endif

@Suite struct DedicatedThreadTests {
    /// Raising a nice value is always allowed, so this runs unprivileged too.
    @Test func aThreadsNiceValueIsItsOwn() async throws {
        let before = getpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0)
        let seen = Mutex<(set: Bool, nice: CInt)?>(nil)
        DedicatedThread.start(named: "lightorgan test") {
            let set = DedicatedThread.setNice(before + 5)
            let nice = getpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0)
            seen.withLock { $0 = (set, nice) }
        }
        for _ in 0..<500 where seen.withLock({ $0 == nil }) { try await Task.sleep(for: .milliseconds(10)) }
        let result = try #require(seen.withLock { $0 })
        #expect(result.set && result.nice == before + 5)
        #expect(getpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0) == before)
    }
}
