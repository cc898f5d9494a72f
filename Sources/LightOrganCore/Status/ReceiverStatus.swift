#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// What the page shows beside the lamps, sent to it as JSON twice a second.
///
/// Absent facts are `null` in the JSON (never left out), so the page can tell "nothing is
/// sending" from an old receiver. Times are seconds (``uptime``, ``Sender/since`` as Unix time),
/// frame ages milliseconds.
public struct ReceiverStatus: Sendable, Equatable, Encodable {
    /// One GPIO line of the receiver.
    public struct Line: Sendable, Equatable, Encodable {
        public var band: String
        /// The BCM line number.
        public var line: Int
        /// The physical pin of the 40-pin header, nil when the line is not on it.
        @NullWhenAbsent public var pin: Int?
        public init(band: Band, line: Int) {
            self.band = band.description
            self.line = line
            self.pin = RaspberryPiHeader.pin(forBCM: line)
        }
    }

    /// The strip wired to the receiver, as the page shows it.
    public struct Strip: Sendable, Equatable, Encodable {
        public var device: String
        public var pixels: Int
        public var type: String
        public var effect: String
        public init(_ strip: StripDescription) {
            (device, pixels, type, effect) = (strip.device, strip.pixels, strip.led.rawValue, strip.effect.rawValue)
        }
    }

    /// The receiver itself.
    public struct Receiver: Sendable, Equatable, Encodable {
        /// Its strip, nil (`null`) without one.
        @NullWhenAbsent public var strip: Strip?
        public var name: String
        public var port: Int
        public var output: String
        /// The GPIO chip as opened (`gpiochip0 (pinctrl-bcm2711)`), nil for other outputs.
        @NullWhenAbsent public var chip: String?
        public var mode: String
        public var lines: [Line]
        public init(name: String, port: Int, output: String, chip: String?, mode: String, lines: [Line]) {
            (self.name, self.port, self.output, self.chip, self.mode, self.lines) = (
                name, port, output, chip, mode, lines
            )
        }
    }

    /// Who drives the lamps.
    public struct Sender: Sendable, Equatable, Encodable {
        /// The kinds a sender is shown as.
        public enum Kind: String, Sendable, Encodable {
            /// `lightorgan send`, or any client that sends 30 frames a second or more.
            case lightorgan
            /// A client of the 2016 apps: about 10 frames a second (the Android app's rate).
            case legacy = "2016 app"
            /// A page's microphone or tab audio, analysed here.
            case browser
            /// The receiver's own sound (`receiver.sound`): AirPlay, a pipe, a microphone.
            case own = "own sound"
            /// Connected for less than a second: not told yet.
            case unknown
        }
        public var address: String
        @NullWhenAbsent public var port: Int?
        /// Its DNS-SD / mDNS name, when known.
        @NullWhenAbsent public var name: String?
        public var kind: Kind
        /// When it began to drive the lamps, Unix seconds.
        public var since: Double
        public init(address: String, port: Int?, name: String?, kind: Kind, since: Double) {
            (self.address, self.port, self.name, self.kind, self.since) = (address, port, name, kind, since)
        }
    }

    /// Time from a frame's arrival to the output having it, milliseconds.
    public struct FrameAge: Sendable, Equatable, Encodable {
        public var p50: Double
        public var p99: Double
        public init(p50: Double, p99: Double) { (self.p50, self.p99) = (p50, p99) }
    }

    /// One setting the page may change.
    public struct Setting: Sendable, Equatable, Encodable {
        public var key: String
        public var value: String
        public var allowed: String
        public var summary: String
        /// `default`, `file`, `page`, `environment` or `option`.
        public var source: String
        /// Why the page cannot change it (an option or variable sets it), nil when it can.
        @NullWhenAbsent public var locked: String?
        /// The value beneath the page's: the settings file's, or the default ("use the file's value").
        public var fileValue: String
        /// `file` or `default`: where ``fileValue`` comes from.
        public var fileSource: String
        public init(
            key: String, value: String, allowed: String, summary: String, source: String, locked: String?,
            fileValue: String, fileSource: String
        ) {
            (self.key, self.value, self.allowed, self.summary, self.source, self.locked) = (
                key, value, allowed, summary, source, locked
            )
            (self.fileValue, self.fileSource) = (fileValue, fileSource)
        }
    }

    public var version = LightOrganVersion.current
    /// The receiver's clock, Unix seconds: the page measures ``Sender/since`` against it (a Pi
    /// without network time may be far from the phone's clock).
    public var now: Double = 0
    /// Seconds since the receiver started.
    public var uptime: Double = 0
    public var receiver: Receiver
    @NullWhenAbsent public var sender: Sender?
    /// The receiver's own sound and what it does (`AirPlay: playing`, `AirPlay: idle`,
    /// `line-in hw:1,0`), nil with `receiver.sound: network`.
    @NullWhenAbsent public var sound: String?
    /// Frames applied per second, over the last second or so.
    public var framesPerSecond: Double = 0
    @NullWhenAbsent public var frameAge: FrameAge?
    /// Frames skipped since start because a newer one came in the same read.
    public var drops = 0
    /// Connections since start beyond the first (a sender that comes back counts once more).
    public var reconnects = 0
    /// Connections open now.
    public var connections = 0
    /// The line a wiring check lights, nil when none.
    @NullWhenAbsent public var checking: Line?
    /// Whether the strip's wiring check runs.
    public var checkingStrip = false
    /// The tempo the lights follow, beats per minute; 0 while none is held (a sender over the network, whose beat
    /// stays on its side of the wire, or music without a beat).
    public var bpm = 0
    /// 0, or the place in its bar (1…4) of the beat that falls on the frame shown now.
    public var beat = 0
    /// The place in its bar of the latest beat (1…4), 0 while no beat is held: with ``phase``, the page's beat
    /// indicator.
    public var place = 0
    /// Where the frame shown now lies between the latest beat (0) and the next (1).
    public var phase = 0.0
    public var settings: [Setting] = []

    public init(receiver: Receiver) { self.receiver = receiver }

    /// The JSON text sent to pages.
    public func json() -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return (try? String(decoding: encoder.encode(self), as: UTF8.self)) ?? #"{"type":"status"}"#
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode("status", forKey: .type)
        try container.encode(version, forKey: .version)
        try container.encode((now * 10).rounded() / 10, forKey: .now)
        try container.encode((uptime * 10).rounded() / 10, forKey: .uptime)
        try container.encode(receiver, forKey: .receiver)
        try container.encode(_sender, forKey: .sender)
        try container.encode(_sound, forKey: .sound)
        try container.encode((framesPerSecond * 10).rounded() / 10, forKey: .fps)
        try container.encode(_frameAge, forKey: .frameAge)
        try container.encode(drops, forKey: .drops)
        try container.encode(reconnects, forKey: .reconnects)
        try container.encode(connections, forKey: .connections)
        try container.encode(_checking, forKey: .checking)
        try container.encode(checkingStrip, forKey: .checkingStrip)
        try container.encode(bpm, forKey: .bpm)
        try container.encode(beat, forKey: .beat)
        try container.encode(place, forKey: .place)
        try container.encode((phase * 100).rounded() / 100, forKey: .phase)
        try container.encode(settings, forKey: .settings)
    }

    enum CodingKeys: CodingKey {
        case type, version, now, uptime, receiver, sender, sound, fps, frameAge, drops, reconnects, connections,
            checking, checkingStrip, bpm, beat, place, phase, settings
    }
}

/// An optional that JSON shows as `null` when absent (synthesized `Encodable` leaves a nil key
/// out, and the page tells "no sender" from "an old receiver" by the key being there).
@propertyWrapper
public struct NullWhenAbsent<Value: Encodable & Sendable & Equatable>: Encodable, Sendable, Equatable {
    public var wrappedValue: Value?

    public init(wrappedValue: Value?) { self.wrappedValue = wrappedValue }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        if let wrappedValue { try container.encode(wrappedValue) } else { try container.encodeNil() }
    }
}
