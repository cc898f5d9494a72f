import LightOrganAudio
import LightOrganCore
import Testing

@Suite("SoundServer: a sink's latency in pactl's listing")
struct SoundServerTests {
    /// `pactl list sinks` for one sink, as PulseAudio prints it.
    func listing(state: String, latency: String, flags: String = "HARDWARE HW_MUTE_CTRL LATENCY") -> String {
        """
        Sink #1
        \tState: \(state)
        \tName: speakers
        \tDriver: module-alsa-card.c
        \tLatency: \(latency) usec, configured 20000 usec
        \tFlags: \(flags)
        Sink #2
        \tState: RUNNING
        \tName: other
        \tLatency: 5000 usec, configured 5000 usec
        \tFlags: HARDWARE
        """
    }

    @Test("a running sink's latency is read in microseconds")
    func running() throws {
        let (latency, isPipeWire) = try #require(
            SoundServer.latency(
                ofSink: "speakers",
                inListing: listing(
                    state: "RUNNING", latency: "43210.5")))
        #expect(latency.microseconds == 43210 && !isPipeWire)
    }

    @Test("PulseAudio's 0 for a sink that plays nothing is no reading: measured again once it runs")
    func idleZero() {
        #expect(SoundServer.latency(ofSink: "speakers", inListing: listing(state: "SUSPENDED", latency: "0")) == nil)
        #expect(SoundServer.latency(ofSink: "speakers", inListing: listing(state: "IDLE", latency: "0")) == nil)
        #expect(SoundServer.latency(ofSink: "speakers", inListing: listing(state: "RUNNING", latency: "0")) != nil)
        #expect(
            SoundServer.latency(
                ofSink: "speakers", inListing: listing(state: "RUNNING", latency: "0", flags: "NETWORK"))
                == nil, "a tunnel's 0 before it has timed its far end")
    }

    @Test("a sink neither HARDWARE nor NETWORK is virtual: its latency is unknown")
    func virtualSink() throws {
        let (latency, _) = try #require(
            SoundServer.latency(
                ofSink: "speakers",
                inListing: listing(
                    state: "RUNNING", latency: "20000", flags: "DECIBEL_VOLUME LATENCY")))
        #expect(latency.microseconds == nil)
        let (idle, _) = try #require(
            SoundServer.latency(
                ofSink: "speakers", inListing: listing(state: "SUSPENDED", latency: "0", flags: "DECIBEL_VOLUME")),
            "a virtual sink is virtual whether it plays or not")
        #expect(idle.microseconds == nil)
    }
}
