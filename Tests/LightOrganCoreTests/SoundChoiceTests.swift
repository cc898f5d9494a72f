import LightOrganCore
import Testing

@Suite struct SoundChoiceTests {
    @Test(arguments: [
        ("network", SoundChoice.network, "network"),
        ("AirPlay", .airplay, "airplay"),
        ("Bluetooth", .bluetooth, "bluetooth"),
        ("snapcast", .snapcast(server: nil), "snapcast"),
        (
            "snapcast://house.local", .snapcast(server: Endpoint(host: "house.local", port: nil)),
            "snapcast://house.local"
        ),
        (
            "snapcast://192.168.1.5:1804/", .snapcast(server: Endpoint(host: "192.168.1.5", port: 1804)),
            "snapcast://192.168.1.5:1804"
        ),
        (
            "snapcast://[fd00::5]:1704", .snapcast(server: Endpoint(host: "fd00::5", port: 1704)),
            "snapcast://[fd00::5]:1704"
        ),
        ("pipe:/run/lightorgan/spotify", .pipe(path: "/run/lightorgan/spotify"), "pipe:/run/lightorgan/spotify"),
        ("hw:1,0", .capture(device: "hw:1,0"), "hw:1,0"),
        ("alsa:mic", .capture(device: "mic"), "alsa:mic"),
    ])
    func readsAndWritesEachForm(text: String, choice: SoundChoice, written: String) {
        #expect(SoundChoice(parsing: text) == choice)
        #expect(choice.description == written)
        #expect(SoundChoice(parsing: written) == choice)
    }

    @Test(arguments: [
        "", "snapcast:", "snapcast://", "snapcast://house.local:0", "snapcast://house.local:70000",
        "snapcast://user@house.local", "snapcast://house.local/stream", "snapcast://a b", "pipe:relative",
        "spotify",
    ])
    func refusesWhatIsNoneOfTheForms(text: String) {
        #expect(SoundChoice(parsing: text) == nil)
    }

    @Test func snapcastIsPlayedLikeAirPlayAndAMicrophoneIsNot() {
        #expect(SoundChoice.snapcast(server: nil).isPlayed)
        #expect(SoundChoice.airplay.isPlayed)
        #expect(SoundChoice.bluetooth.isPlayed)
        #expect(!SoundChoice.capture(device: "hw:1,0").isPlayed)
        #expect(!SoundChoice.network.isPlayed)
    }
}
