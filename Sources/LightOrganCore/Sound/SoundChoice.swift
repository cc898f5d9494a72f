/// Where the receiver's own levels come from besides network senders and the page
/// (`receiver.sound`).
///
/// Written in settings as: `network` (none of its own: the default); `airplay`; `snapcast` or
/// `snapcast://HOST[:PORT]`; `pipe:PATH` (an
/// absolute path); `alsa:NAME` (any ALSA capture PCM by name), or an ALSA name written as is when it
/// looks like one (`hw:1,0`, `plughw:CARD=Device,DEV=0`, `default`, `sysdefault:…`, `dsnoop:…`).
public enum SoundChoice: Sendable, Equatable, CustomStringConvertible {
    /// Only what senders and pages send.
    case network
    /// The receiver is an AirPlay speaker: `shairport-sync` runs as its child and hands over its
    /// audio, which is played on `receiver.play` and analysed.
    case airplay
    /// The receiver is one room of a Snapcast house: Debian's `snapclient` runs as its child, joined to
    /// `server` (nil: the server the local network announces by DNS-SD, `_snapcast._tcp`), and hands over the
    /// room's share of the sound ahead of the server's time, which is played on `receiver.play` and analysed.
    /// The endpoint's port is nil for Snapcast's own, ``snapcastPort``.
    case snapcast(server: Endpoint?)
    /// The receiver is a Bluetooth speaker: a phone streams over A2DP to BlueZ and BlueALSA, whose sound is
    /// played on `receiver.play` and analysed.
    case bluetooth
    /// Raw S16LE 44.1 kHz stereo PCM from a FIFO the receiver makes at `path` (librespot's and
    /// shairport-sync's pipe backends), played and analysed.
    case pipe(path: String)
    /// An ALSA capture device (a USB microphone, a line-in HAT), analysed and not played.
    case capture(device: String)

    /// What the setting allows, for messages.
    public static let allowed =
        "network, airplay, bluetooth, snapcast (the server DNS-SD finds) or snapcast://HOST[:PORT] (1704), pipe:/absolute/path (a FIFO), or an ALSA capture device (hw:1,0, plughw:1,0, default, alsa:NAME)"

    /// The TCP port of a Snapcast server's audio stream when the setting names none.
    public static let snapcastPort = 1704

    /// Words that begin an ALSA PCM name written without `alsa:`.
    static let alsaPrefixes = ["hw:", "plughw:", "sysdefault:", "dsnoop:", "default:", "front:", "plug:", "dmix:"]
    /// Whole ALSA PCM names written without `alsa:`.
    static let alsaNames = ["default", "sysdefault", "dsnoop", "pulse", "pipewire", "hw", "plughw"]

    /// Reads the setting's text; nil when it is none of the allowed forms.
    public init?(parsing raw: String) {
        let text = raw.trimmingWhitespace()
        let lowered = text.lowercased()
        if lowered == "network" {
            self = .network
        } else if lowered == "airplay" {
            self = .airplay
        } else if lowered == "bluetooth" {
            self = .bluetooth
        } else if lowered == "snapcast" {
            self = .snapcast(server: nil)
        } else if lowered.hasPrefix("snapcast://") {
            var rest = String(text.dropFirst("snapcast://".count))
            if rest.hasSuffix("/") { rest.removeLast() }
            guard !rest.contains("/"), !rest.contains("@"), let server = Endpoint(parsing: rest) else { return nil }
            self = .snapcast(server: server)
        } else if lowered.hasPrefix("pipe:") {
            let path = String(text.dropFirst("pipe:".count))
            guard path.hasPrefix("/"), path.count > 1, !path.hasSuffix("/"),
                !path.contains(where: { $0.isNewline || $0 == "\0" })
            else { return nil }
            self = .pipe(path: path)
        } else if lowered.hasPrefix("alsa:") {
            let name = String(text.dropFirst("alsa:".count))
            guard !name.isEmpty, !name.contains(where: \.isWhitespace) else { return nil }
            self = .capture(device: name)
        } else if Self.alsaNames.contains(lowered)
            || Self.alsaPrefixes.contains(where: { lowered.hasPrefix($0) && lowered.count > $0.count })
        {
            guard !text.contains(where: \.isWhitespace) else { return nil }
            self = .capture(device: text)
        } else {
            return nil
        }
    }

    /// As written in settings (`pipe:/run/lightorgan/spotify`, `hw:1,0`).
    public var description: String {
        switch self {
        case .network: "network"
        case .airplay: "airplay"
        case .bluetooth: "bluetooth"
        case .snapcast(let server): server.map { "snapcast://\($0)" } ?? "snapcast"
        case .pipe(let path): "pipe:\(path)"
        case .capture(let device):
            Self.alsaNames.contains(device.lowercased())
                || Self.alsaPrefixes.contains { device.lowercased().hasPrefix($0) }
                ? device : "alsa:\(device)"
        }
    }

    /// What the page and the log call this sound (as its input does): `AirPlay`, `Snapcast`,
    /// `pipe /run/lightorgan/spotify`, `line-in hw:1,0`; empty for `network`.
    public var label: String {
        switch self {
        case .network: ""
        case .airplay: "AirPlay"
        case .bluetooth: "Bluetooth"
        case .snapcast: "Snapcast"
        case .pipe(let path): "pipe \(path)"
        case .capture(let device): "line-in \(device)"
        }
    }

    /// Whether the receiver plays this sound itself (on `receiver.play`): AirPlay, Bluetooth, Snapcast and pipes are
    /// heard nowhere else (a lights-only room of a Snapcast house says `receiver.play: none`); a microphone
    /// hears the room, which is playing already.
    public var isPlayed: Bool {
        switch self {
        case .airplay, .bluetooth, .snapcast, .pipe: true
        case .network, .capture: false
        }
    }
}

/// The ALSA device the receiver plays its own sound on (`receiver.play`): `default`, `hw:0,0` (a
/// Pi's 3.5 mm jack), `hdmi:…`, `plughw:CARD=Device` (a USB DAC), `file:'/tmp/out.raw',raw`, or
/// `none` to analyse without playing.
public enum PlayChoice: Sendable, Equatable, CustomStringConvertible {
    /// Not played: the lamps follow the sound, paced by its own clock, and nothing is heard here.
    case none
    /// An ALSA playback PCM by name.
    case device(String)

    public static let allowed = "none, or an ALSA playback device (default, hw:0,0, plughw:CARD=Headphones, hdmi:0…)"

    /// Reads the setting's text; nil when empty or holding white space.
    public init?(parsing raw: String) {
        let text = raw.trimmingWhitespace()
        guard !text.isEmpty, !text.contains(where: { $0.isWhitespace || $0.isNewline }) else { return nil }
        self = text.lowercased() == "none" ? .none : .device(text)
    }

    public var description: String {
        switch self {
        case .none: "none"
        case .device(let name): name
        }
    }
}
