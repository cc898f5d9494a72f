/// The knobs of ``BandAnalyzer``: crossovers, envelope times, the response and its gates.
///
/// Levels are handled in dBFS (0 dB = a full-scale peak). The defaults suit music played at any
/// level from about −45 dBFS to 0 dBFS.
public struct AnalysisParameters: Sendable, Hashable {
    /// How band envelopes become lamp levels (the `analysis.response` setting).
    public enum Response: String, Sendable, CaseIterable, CustomStringConvertible {
        /// Each lamp flashes on the onsets of its band and is dark between them (``DanceResponse``).
        case dance
        /// Each lamp follows the loudness of its band under an automatic gain (``AutomaticGain``):
        /// calmer, for `receiver.mode: bar` (a meter) or for those who prefer it.
        case level

        public var description: String { rawValue }
    }

    /// How envelopes become levels.
    public var response = Response.dance
    /// The knobs of the dance response.
    public var dance = DanceParameters()
    /// Bass/mid crossover, Hz.
    public var bassMidCrossover: Double = 250
    /// Mid/treble crossover, Hz.
    public var midTrebleCrossover: Double = 4000
    /// Envelope attack time constant, seconds.
    public var attack: Double = 0.001
    /// Envelope release time constant, seconds.
    public var release: Double = 0.060
    // The level response (``AutomaticGain``).

    /// Span of the lamp below the running peak, dB: `dynamicRange` dB below the peak shows 0.
    public var dynamicRange: Double = 30
    /// How fast the running peak of a band falls when the music gets quieter, dB per second.
    public var peakFallRate: Double = 6
    /// Time constant with which the running peak rises to a louder level, seconds: a transient
    /// (a kick, an onset from silence) overshoots it and flashes to full brightness, a sustained
    /// note settles just below full.
    public var peakRiseTime: Double = 0.25
    /// Full brightness lies this far above the running peak, dB: a sustained level shows about
    /// 90 % brightness, leaving the top for transients.
    public var headroom: Double = 3
    /// The running peak never falls below this, dBFS: near-silence is not amplified to full brightness.
    public var minimumPeak: Double = -50
    // Both responses.

    /// Anything below this is off, dBFS: hiss and hum in silence stay dark.
    public var noiseGate: Double = -60
    /// A band more than this many dB below the loudest band's running peak is off, so one band's
    /// gain never pumps the leakage of a loud neighbour up to brightness.
    public var crossBandFloor: Double = 36
    /// The lamp's span never shrinks below this, dB: a band whose running peak is only a few dB
    /// above its floor (a click's leakage, a faint band next to a loud one) stays dim instead of
    /// being stretched to full brightness.
    public var minimumSpan: Double = 20
    // What the lights show without music (``LightLook``, on the receiver).

    /// The look after ``idleAfter`` seconds of silence or of sound without a beat (`analysis.idle`).
    public var idle = IdleLook.dark
    /// Seconds without music before the idle look (`analysis.idle_after`).
    public var idleAfter: Double = 10

    public init() {}

    /// The defaults.
    public static let standard = AnalysisParameters()
}
