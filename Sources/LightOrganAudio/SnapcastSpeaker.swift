import FoundationEssentials
public import LightOrganCore
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// The receiver as one room of a Snapcast house (`receiver.sound: snapcast`): Debian's `snapclient` runs as its
/// child, joined to the server as a client whose id is the receiver's name, and its file player hands the room's
/// share of the sound over on its standard output (raw S16LE, 48 kHz, stereo, resampled by snapclient from
/// whatever the server streams, the Snapcast volume applied).
///
/// **Time.** snapclient's file player hands over one block every 50 ms, each as if it were heard 10 ms later;
/// told `--latency L` it hands everything over L earlier. So the first sample of a block read is due to leave
/// the room's speakers ``leadNanoseconds`` (L + 10 ms) after it arrived: ``lastReadDueNanoseconds``. The
/// receiver plays it then (L is its own output latency) or, with nothing to play on, shows its frames then; every
/// room does the same against the server's clock, so the rooms' sound and lights stay in step.
///
/// **Silence.** snapclient writes silence while nothing plays; once ``idleAfterNanoseconds`` of it has come
/// (digital zeros: a pause, the end of a playlist), it is not handed on, so the stream pauses (`Snapcast: idle`,
/// the lamps dark) as it does for AirPlay. Shorter silence (between two songs, a break in one) goes on as sound.
///
/// **What it says.** Its log lines go to the receiver's log, tidied (its own time stamps dropped, "No chunks
/// available" while idle left out); the server it reached, the server's buffer and the offset of the server's
/// clock are kept for the status (``state``).
public final class SnapcastSpeaker: OwnSoundInput, Sendable {
    /// What snapclient is told to resample to, whatever the server streams.
    public static let format = AudioFormat(sampleRate: 48_000, channels: 2)
    /// The file player's block, and how long after handing a block over it takes it to be heard, nanoseconds.
    public static let blockNanoseconds: Int64 = 50_000_000
    public static let playerOffsetNanoseconds: Int64 = 10_000_000
    /// Silence this long is the stream pausing, nanoseconds.
    public static let idleAfterNanoseconds: Int64 = 2_000_000_000
    /// Samples no louder than this are silence (−78 dBFS).
    static let silenceLevel = 4

    public var format: AudioFormat { Self.format }
    public var label: String { "Snapcast" }
    /// The server (nil: the one DNS-SD finds) and the client id the server knows this room by.
    public let server: Endpoint?
    public let clientID: String
    /// How long before its first sample is due each block arrives, nanoseconds (`--latency` + 10 ms).
    public let leadNanoseconds: Int64

    /// What snapclient said of its connection.
    public struct State: Sendable, Equatable {
        /// The server it has joined (as snapclient names it; joined: the server answered with its settings), nil
        /// while not joined.
        public var connectedTo: String?
        /// The server's buffer, milliseconds, from its settings.
        public var bufferMilliseconds: Int?
        /// The server's clock less this machine's, milliseconds, as snapclient last measured it.
        public var offsetMilliseconds: Double?
        /// What the server's control API says of this room (its group, the stream), nil before it has said.
        public var room: SnapcastRoom?
        /// The failure the log told of since the server last answered; nil while joined.
        var trouble: String?
        /// Where snapclient's last connection went (its host or address), answered or not.
        var reached: String?
        /// What the last look at the control API found wrong, told once.
        var controlTrouble: String?
        /// This machine's MAC address as snapclient gives it to the server.
        var mac: String?
        /// Whether another machine was seen under this room's id (told once).
        var toldNameTaken = false
        /// snapclient's version (`0.26.0`), from its first line.
        package var clientVersion: String?
        /// Whether what answers at the server's address speaks no Snapcast this snapclient knows: told once, and
        /// its reconnections kept out of the log, until a server's settings arrive.
        package var speaksAnotherProtocol = false

        /// Nothing said yet.
        package init() {}
    }

    private let program: SoundProgram
    private let shared = Shared()
    private let log: @Sendable (String) -> Void
    /// Closed with the speaker (its look at the server's control API).
    private let companions = Mutex<[@Sendable () -> Void]>([])
    /// The reading thread's own: when the last block read is due, the frames read into the block under way and
    /// when that block's first bytes came, and since when (monotonic nanoseconds) only silence has come (nil:
    /// sound came last).
    private let reading = Mutex<(due: Int64?, leftover: Int, blockArrived: Int64, silentSince: Int64?)>((nil, 0, 0, 0))

    /// Checks that snapclient is there and starts nothing yet (the child starts with the first read).
    /// `latencyMilliseconds`: how much earlier than the room snapclient hands the sound over (the receiver's
    /// own output latency; with nothing to play on, the time the lamps' frames wait to be shown). `log` gets
    /// snapclient's messages, one line each.
    ///
    /// - Throws: ``AudioInputError``, one line that says what to do.
    public init(
        server: Endpoint?, name: String, latencyMilliseconds: Int, log: @escaping @Sendable (String) -> Void
    ) throws {
        guard let path = SoundProgram.find("snapclient") else {
            throw AudioInputError(
                "receiver.sound = snapcast needs snapclient: sudo apt install snapclient (its own service may stay disabled: sudo systemctl disable --now snapclient)"
            )
        }
        self.server = server
        self.log = log
        clientID = ServiceName.slug(name)
        leadNanoseconds = Int64(latencyMilliseconds) * 1_000_000 + Self.playerOffsetNanoseconds
        let shared = shared
        var arguments = [
            // The channels stay the stream's (snapclient resamples the rate only): stereo, Snapcast's default.
            "--hostID", clientID, "--player", "file:filename=stdout", "--sampleformat",
            "\(Int(Self.format.sampleRate)):16:*", "--latency", String(latencyMilliseconds),
            "--logsink", "stderr",
        ]
        if let server {
            arguments = ["--host", server.host, "--port", String(server.port ?? SoundChoice.snapcastPort)] + arguments
        }
        program = SoundProgram(
            name: "snapclient", program: path, arguments: arguments, channels: Self.format.channels, log: log
        ) { line in
            let said = SnapclientLine(line)
            return shared.state.withLock { said.told(&$0) }
        }
    }

    /// What snapclient has said of its connection so far.
    public var state: State { shared.state.withLock { $0 } }

    /// `server 192.168.1.5, group "Upstairs", stream default: playing, its clock +0.005 ms`, or `not
    /// connected to a server`.
    public var details: String? {
        let state = state
        if state.speaksAnotherProtocol {
            return "what answers at the server's address does not speak the Snapcast protocol"
        }
        guard let server = state.connectedTo else { return "not connected to a server" }
        let room = state.room.map { ", \($0.description)" } ?? ""
        let offset = state.offsetMilliseconds.map { ", its clock \(String(cFormat: "%+.3f", $0)) ms" } ?? ""
        return "server \(server)\(room)\(offset)"
    }

    /// Where the server's control API is: the server's host (as set, or as snapclient found it) and the stream's
    /// port + 1 (Snapcast's own 1704 and 1705); nil before the server is known.
    public var controlAddress: (host: String, port: Int)? {
        let port = (server?.port ?? SoundChoice.snapcastPort) + 1
        if let server { return (server.host, port) }
        return state.connectedTo.map { ($0, port) }
    }

    /// What a look at the control API found: the room (nil: the server does not list it) or what went wrong,
    /// told in the log once.
    public func controlSaid(room: SnapcastRoom?, trouble: String?) {
        let (told, neighbours, taken) = shared.state.withLock { state -> (String?, [String], String?) in
            let before = state.room?.neighbours ?? []
            if let room { state.room = room }
            let neighbours = room.map { $0.neighbours.filter { !before.contains($0) } } ?? []
            // The server shows the room on another machine: a receiver elsewhere took this name too.
            var taken: String?
            if let room, let mac = state.mac, !room.mac.isEmpty, room.mac != mac, !state.toldNameTaken {
                state.toldNameTaken = true
                taken = room.mac
            }
            guard state.controlTrouble != trouble else { return (nil, neighbours, taken) }
            state.controlTrouble = trouble
            return (trouble, neighbours, taken)
        }
        if let taken {
            log(
                "Snapcast: another machine (\(taken)) joined the server as \"\(clientID)\" too: the two take turns as one room; give this receiver another receiver.name"
            )
        }
        if let told { log("Snapcast: cannot read the server's status: \(told); the sound and the lamps go on") }
        if !neighbours.isEmpty {
            log(
                "Snapcast: another client plays on this machine too (\(neighbours.joined(separator: ", "))), most likely Debian's snapclient.service, on the default device: sudo systemctl disable --now snapclient"
            )
        }
    }

    /// `close` is called with the speaker's own close.
    public func closes(with close: @escaping @Sendable () -> Void) {
        companions.withLock { $0.append(close) }
    }

    public func read(frames: Int, timeoutMilliseconds: Int) throws -> [Int16]? {
        let deadline = MonotonicClock.nanoseconds() + Int64(timeoutMilliseconds) * 1_000_000
        let channels = Self.format.channels
        let blockFrames = Int(Self.format.sampleRate) * Int(Self.blockNanoseconds / 1_000_000) / 1000
        while true {
            let left = max(0, Int((deadline - MonotonicClock.nanoseconds()) / 1_000_000))
            guard let samples = try program.read(frames: frames, timeoutMilliseconds: left) else { return nil }
            if samples.isEmpty {
                reading.withLock { $0 = (nil, 0, 0, 0) }  // ended, or started again: blocks start afresh
                return samples
            }
            let now = MonotonicClock.nanoseconds()
            let count = samples.count / channels
            // Where in its block this read starts (a block may come in two reads, microseconds apart) and when
            // the block's first bytes came: its first sample is due the lead after that.
            let (position, blockArrived) = reading.withLock { state -> (Int, Int64) in
                if state.leftover == 0 { state.blockArrived = now }
                defer { state.leftover = (state.leftover + count) % blockFrames }
                return (state.leftover, state.blockArrived)
            }
            let due =
                blockArrived + leadNanoseconds + Int64(position) * 1_000_000_000 / Int64(Self.format.sampleRate)
            // Silence: digital zeros, or the ±1 that snapclient's resampler leaves of them.
            let silent = samples.allSatisfy { abs(Int($0)) <= Self.silenceLevel }
            let idle = reading.withLock { state -> Bool in
                if !silent {
                    state.silentSince = nil
                } else if state.silentSince == nil {
                    state.silentSince = now
                }
                let idle = state.silentSince.map { now - $0 >= Self.idleAfterNanoseconds } ?? false
                if !idle { state.due = due }
                return idle
            }
            if idle {
                guard MonotonicClock.nanoseconds() < deadline else { return nil }
                continue
            }
            return samples
        }
    }

    public var lastReadDueNanoseconds: Int64? { reading.withLock { $0.due } }

    public func close() {
        program.close()
        for close in companions.withLock({ $0 }) { close() }
    }
}

/// The state snapclient's log thread and the status share.
private final class Shared: Sendable {
    let state = Mutex(SnapcastSpeaker.State())
}

/// One line of snapclient's log (`2026-11-28 23-19-23.840 [Info] (Controller) ServerSettings - buffer: 1000, …`):
/// what it tells of the connection, and what of it the receiver's log shows.
package struct SnapclientLine {
    /// The level (`Info`, `Notice`, `Error`…), the tag (`Controller`) and the message.
    package let level: String
    package let tag: String
    package let message: String

    package init(_ line: String) {
        // The time stamp, then [Level], then (Tag): each optional.
        var rest = Substring(line)
        if let open = rest.firstIndex(of: "["), let close = rest[open...].firstIndex(of: "]") {
            level = String(rest[rest.index(after: open)..<close])
            rest = rest[rest.index(after: close)...].drop { $0 == " " }
        } else {
            level = ""
        }
        if rest.hasPrefix("("), let close = rest.firstIndex(of: ")") {
            tag = String(rest[rest.index(after: rest.startIndex)..<close])
            rest = rest[rest.index(after: close)...].drop { $0 == " " }
        } else {
            tag = ""
        }
        message = String(rest)
    }

    /// Takes what the line tells into `state` and returns what the receiver's log shows of it: nil for the
    /// chatter of an idle stream, the start's details and a retry's repeated failure (one line an outage).
    package func told(_ state: inout SnapcastSpeaker.State) -> String? {
        if message.hasPrefix("Version ") {
            state.clientVersion = String(message.dropFirst("Version ".count))
            return nil
        }
        // Joined is when the server answered the hello with its settings; a peer that takes the connection
        // and answers nothing or something else is not a server, however often snapclient connects to it.
        if message.hasPrefix("Connected to ") {
            state.reached = String(message.dropFirst("Connected to ".count))
            return nil
        }
        if message.hasPrefix("unknown message type received") || message.hasPrefix("Failed to send hello request") {
            state.connectedTo = nil
            if state.speaksAnotherProtocol { return nil }
            state.speaksAnotherProtocol = true
            state.trouble = message
            let version = state.clientVersion.map { " \($0)" } ?? ""
            return
                "what answers at \(state.reached ?? "the server's address") does not speak the Snapcast protocol of snapclient\(version) (\(message)): is it snapserver, of a version from the last years, and is the port its stream port (1704; 1705 is its control, 1780 its web page)?"
        }
        if message.hasPrefix("My MAC: \""), let mac = message.split(separator: "\"").dropFirst().first {
            state.mac = String(mac)
            return nil
        }
        if let value = Self.number(after: "diff to server [ms]:", in: message) {
            state.offsetMilliseconds = value
            return nil
        }
        if message.hasPrefix("ServerSettings"), let buffer = Self.number(after: "buffer:", in: message) {
            state.bufferMilliseconds = Int(buffer)
            state.connectedTo = state.reached ?? "the server"
            state.speaksAnotherProtocol = false
            state.trouble = nil
            return "connected to the Snapcast server at \(state.connectedTo!); \(message)"
        }
        if message.hasPrefix("Codec") { return message }
        if message.hasPrefix("Sampleformat:"), let stream = message.split(separator: " ").last,
            let channels = stream.split(separator: ":").last, channels != "2"
        {
            return
                "the server streams \(stream) (\(channels) channels); the receiver reads stereo only: set the stream's sampleformat to …:2 in snapserver.conf"
        }
        if message.hasPrefix("Snapclient terminated") || message.hasPrefix("Received signal") { return nil }
        // Not snapclient's log (the loader's, a wrapper's "setpriv: …"): said as it is, it may be why it ends.
        if level.isEmpty, tag.isEmpty { return message.isEmpty ? nil : message }
        guard level == "Error" || level == "Warning" || level == "Notice" || level == "Fatal" else { return nil }
        if message.hasPrefix("No chunks available") || message.hasPrefix("Exception: Not enough frames") { return nil }
        if level == "Error" {
            state.connectedTo = nil
            // One line an outage: the first failure says it, the retries' echoes (the controller's, the
            // socket's shutdown) and repeats stay out until the server has answered again.
            if state.trouble != nil { return nil }
            if message.hasPrefix("Failed to connect to host") {
                state.trouble = message
                let reason = message.split(separator: ",").last.map { $0.trimmingWhitespace() } ?? message
                return
                    "cannot reach the Snapcast server (\(reason.replacing("error: ", with: ""))); snapclient retries every second (is snapserver running there, and its stream port open?)"
            }
            state.trouble = message
        }
        return message
    }

    /// The number that follows `label` in `text`, up to a comma or the end.
    static func number(after label: String, in text: String) -> Double? {
        guard let range = text.firstRange(of: label) else { return nil }
        return Double(text[range.upperBound...].prefix { $0 != "," }.trimmingWhitespace())
    }
}
