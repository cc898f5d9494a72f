import LightOrganAudio
import Testing

@Suite("snapclient's log, as the receiver's log tells it")
struct SnapclientLineTests {
    /// The line snapclient logs when the server answered its hello.
    static let settings = "ServerSettings - buffer: 1000, latency: 0, volume: 100, muted: 0"

    /// What the receiver's log shows of `lines` (snapclient 0.26's own, time stamps and all), and the state after.
    static func told(_ lines: [String]) -> ([String], SnapcastSpeaker.State) {
        var state = SnapcastSpeaker.State()
        let shown = lines.compactMap { SnapclientLine($0).told(&state) }
        return (shown, state)
    }

    @Test("a peer that is no snapserver, answering each retry, gets one line that says what to check")
    func anotherProtocol() {
        let retry = [
            "2026-11-29 02-49-46.281 [Notice] (Connection) Connected to 127.0.0.1",
            "2026-11-29 02-49-46.281 [Info] (Connection) My MAC: \"02:fc:00:00:00:01\", socket: 8",
            "2026-11-29 02-49-46.321 [Error] (Connection) unknown message type received: Unknown, size: 168653939",
            "2026-11-29 02-49-48.321 [Error] (Controller) Failed to send hello request, error: Connection timed out",
            "2026-11-29 02-49-48.321 [Error] (Controller) Time sync request failed: Connection timed out",
        ]
        let (shown, state) = Self.told(
            ["2026-11-29 02-49-46.281 [Info] (Snapclient) Version 0.26.0"] + retry + retry + retry)
        #expect(shown.count == 1, "\(shown)")
        #expect(shown.last?.contains("at 127.0.0.1 does not speak the Snapcast protocol of snapclient 0.26.0") == true)
        #expect(shown.last?.contains("stream port (1704") == true)
        #expect(state.speaksAnotherProtocol && state.clientVersion == "0.26.0" && state.connectedTo == nil)
    }

    @Test("a peer that takes the connection and never answers the hello: the same one line")
    func noAnswer() {
        let retry = [
            "2026-11-29 02-51-20.000 [Notice] (Connection) Connected to 127.0.0.1",
            "2026-11-29 02-51-22.000 [Error] (Controller) Failed to send hello request, error: Connection timed out",
            "2026-11-29 02-51-22.000 [Error] (Controller) Time sync request failed: Connection timed out",
        ]
        let (shown, _) = Self.told(retry + retry + retry)
        #expect(shown.count == 1, "\(shown)")
        #expect(shown.first?.contains("does not speak the Snapcast protocol") == true)
    }

    @Test("…and when a real server answers there, the log says it joined, with the server's settings")
    func aRealServerAfterwards() {
        let (shown, state) = Self.told([
            "2026-11-29 02-49-46.281 [Notice] (Connection) Connected to 127.0.0.1",
            "2026-11-29 02-49-46.321 [Error] (Connection) unknown message type received: Unknown, size: 168653939",
            "2026-11-29 02-49-50.281 [Notice] (Connection) Connected to 127.0.0.1",
            "2026-11-29 02-49-50.300 [Info] (Controller) \(Self.settings)",
        ])
        #expect(shown.count == 2, "\(shown)")
        #expect(shown.last == "connected to the Snapcast server at 127.0.0.1; \(Self.settings)")
        #expect(!state.speaksAnotherProtocol && state.bufferMilliseconds == 1000 && state.connectedTo == "127.0.0.1")
    }

    @Test("a server that goes away costs one line, whatever snapclient's retries, and the next join one more")
    func oneLineAnOutage() {
        let failed =
            "2026-11-29 02-50-01.000 [Error] (Connection) Failed to connect to host '127.0.0.1', error: Connection refused"
        let settings = "2026-11-29 02-50-00.100 [Info] (Controller) \(Self.settings)"
        let (shown, state) = Self.told([
            "2026-11-29 02-50-00.000 [Notice] (Connection) Connected to 127.0.0.1", settings,
            failed, failed, failed,
            "2026-11-29 02-50-04.000 [Notice] (Connection) Connected to 127.0.0.1", settings,
        ])
        #expect(shown.count == 3, "\(shown)")
        #expect(shown[0].hasPrefix("connected to the Snapcast server at 127.0.0.1; ServerSettings"))
        #expect(shown[1].hasPrefix("cannot reach the Snapcast server (Connection refused)"))
        #expect(state.connectedTo == "127.0.0.1")
    }

    @Test("a line that is not snapclient's log (the loader's, a wrapper's) is said as it is")
    func notItsLog() {
        let loader = "snapclient: error while loading shared libraries: libsoxr.so.0: cannot open shared object file"
        let (shown, _) = Self.told([loader, ""])
        #expect(shown == [loader])
    }
}
