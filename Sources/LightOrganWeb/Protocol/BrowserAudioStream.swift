import LightOrganCore

/// The audio a browser streams on the page's `/audio` WebSocket, checked message by message.
///
/// The page sends a `start` text message first — the secret, its AudioContext's own sample rate
/// (8000…192000 Hz, never resampled on the way), one channel — then binary messages of
/// little-endian Float32 mono samples, ``minimumSamples``…``maximumSamples`` per message. The
/// stream may not run faster than real time for long: more than ``burstSeconds`` of audio ahead of
/// the wall clock closes it (a page cannot flood the analysis). Every violation is a
/// ``PageProtocolError`` with a close code and reason; the state is unchanged by a refused message.
public struct BrowserAudioStream: Sendable {
    /// What the page announced in its `start` message.
    public struct Start: Sendable, Equatable {
        /// The secret the page holds.
        public var key: String
        /// Samples per second of the stream: the browser's AudioContext rate.
        public var sampleRate: Int
        /// What the page captures: `microphone` or `tab` (shown as the sender's kind).
        public var source: String

        public init(key: String, sampleRate: Int, source: String) {
            (self.key, self.sampleRate, self.source) = (key, sampleRate, source)
        }
    }

    /// Sample rates accepted, Hz.
    public static let sampleRates = 8_000...192_000
    /// Fewest samples in one binary message (one AudioWorklet render quantum).
    public static let minimumSamples = 128
    /// Most samples in one binary message (about 0.17 s at 48 kHz).
    public static let maximumSamples = 8192
    /// How far the stream may run ahead of real time, in seconds of audio.
    public static let burstSeconds = 1.0

    /// The announced stream.
    public let start: Start
    /// Seconds of audio received so far.
    private var receivedSeconds = 0.0
    /// Monotonic seconds when the first block arrived.
    private var firstArrival: Double?

    /// Decodes the `start` message.
    ///
    /// - Throws: ``PageProtocolError``: 1007 for JSON that is not a start, 1008 for a sample rate
    ///   or channel count outside what is allowed.
    public static func begin(_ text: some Collection<UInt8>) throws(PageProtocolError) -> BrowserAudioStream {
        guard text.count <= PageRequest.maximumBytes else {
            throw PageProtocolError(
                .tooBig, "a start message of \(text.count) bytes; at most \(PageRequest.maximumBytes)")
        }
        let message = try PageJSON.decode(PageRequestWire.self, text)
        guard message.type == "start" else {
            throw PageProtocolError(.invalidData, "the first message must be `start`, not `\(message.type.prefix(32))`")
        }
        let key = try PageJSON.required(message.key, "key")
        let rate = try PageJSON.required(message.sampleRate, "sampleRate")
        guard rate.isFinite, rate == rate.rounded(), sampleRates.contains(Int(exactly: rate) ?? 0) else {
            throw PageProtocolError(
                .policyViolation,
                "sample rate \(rate) Hz is not allowed; allowed: \(sampleRates.lowerBound)…\(sampleRates.upperBound) Hz"
            )
        }
        let channels = message.channels ?? 1
        guard channels == 1 else {
            throw PageProtocolError(.policyViolation, "\(channels) channels; send one (mono)")
        }
        let source = message.source ?? "microphone"
        guard source == "microphone" || source == "tab" else {
            throw PageProtocolError(.invalidData, "source must be microphone or tab")
        }
        return BrowserAudioStream(start: Start(key: key, sampleRate: Int(rate), source: source))
    }

    private init(start: Start) { self.start = start }

    /// Decodes one binary message into `samples` (replaced), checking size, values and pace.
    ///
    /// - Parameters:
    ///   - bytes: the message: little-endian Float32 samples.
    ///   - now: monotonic seconds (any origin), for the pace check.
    /// - Throws: ``PageProtocolError``: 1009 too many samples, 1003 a length that is not whole
    ///   samples or too few, 1007 a sample that is not finite, 1008 faster than real time.
    public mutating func decode(_ bytes: some Collection<UInt8>, at now: Double, into samples: inout [Float])
        throws(PageProtocolError)
    {
        let count = bytes.count / 4
        guard count <= Self.maximumSamples else {
            throw PageProtocolError(.tooBig, "\(count) samples in one message; at most \(Self.maximumSamples)")
        }
        guard bytes.count % 4 == 0, count >= Self.minimumSamples else {
            throw PageProtocolError(
                .unsupportedData,
                "\(bytes.count) bytes is not \(Self.minimumSamples)…\(Self.maximumSamples) Float32 samples")
        }
        let seconds = Double(count) / Double(start.sampleRate)
        let origin = firstArrival ?? now
        if receivedSeconds + seconds - (now - origin) > Self.burstSeconds {
            throw PageProtocolError(
                .policyViolation, "audio arrives faster than \(start.sampleRate) samples per second")
        }
        samples.removeAll(keepingCapacity: true)
        samples.reserveCapacity(count)
        var iterator = bytes.makeIterator()
        for _ in 0..<count {
            var bits = UInt32(iterator.next()!)
            bits |= UInt32(iterator.next()!) << 8
            bits |= UInt32(iterator.next()!) << 16
            bits |= UInt32(iterator.next()!) << 24
            let sample = Float(bitPattern: bits)
            guard sample.isFinite else {
                samples.removeAll(keepingCapacity: true)
                throw PageProtocolError(.invalidData, "a sample that is not a finite number")
            }
            samples.append(max(-1, min(1, sample)))
        }
        firstArrival = origin
        receivedSeconds += seconds
    }
}
