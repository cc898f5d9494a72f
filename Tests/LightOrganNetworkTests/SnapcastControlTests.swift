import LightOrganCore
import LightOrganNetwork
import Synchronization
import Testing

#if canImport(Glibc)
import Glibc
#endif

@Suite("Snapcast control: what a room says when the server's control port does not answer")
struct SnapcastControlTests {
    @Test("a control port nobody listens on: refused, and the advice names snapserver and receiver.sound")
    func refused() throws {
        // A port the kernel just gave out and that nobody listens on any more.
        let probe = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        let port = try #require(bindToLoopback(probe))
        close(probe)
        let first = Mutex<SnapcastControl.Report?>(nil)
        let control = SnapcastControl(clientID: "kitchen", name: "Kitchen", server: { ("127.0.0.1", port) }) {
            report in first.withLock { if $0 == nil { $0 = report } }
        }
        control.start()
        defer { control.close() }
        let deadline = ContinuousClock.now + .seconds(5)
        while first.withLock({ $0 }) == nil, ContinuousClock.now < deadline { usleep(10_000) }
        let report = try #require(first.withLock { $0 })
        guard case .unreachable(let said) = report else {
            Issue.record("expected unreachable, got \(report)")
            return
        }
        #expect(said.hasPrefix("cannot connect to 127.0.0.1:\(port): connection refused; is snapserver running there"))
        #expect(said.contains("receiver.sound"))
        #expect(!said.contains("lightorgan receive"))
        #expect(!said.contains("sender.host"))
    }
}
