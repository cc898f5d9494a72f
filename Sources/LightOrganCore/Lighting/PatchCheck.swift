/// The patch check of `lightorgan test-leds --hosts …`: every fixture of a target, or every part
/// of it, lit at full on its own in turn, so that a technician sees which light answers to which
/// entry.
///
/// Dimmers light channel by channel (bass, mid, treble), a `segments` strip segment by segment;
/// an rgb or rgbw fixture and a `blend` strip light whole. "Full" is every channel of the part at
/// 255, whatever the palette and gamma, so that nothing of the patch is hidden by a colour.
public struct PatchCheck: Sendable, Equatable {
    /// One step: a run of one fixture's own channels, lit alone.
    public struct Step: Sendable, Equatable, CustomStringConvertible {
        /// Index of the fixture in ``LightingPatch/fixtures``.
        public var fixture: Int
        /// The fixture's own channels lit, 0-based (`0..<3` for a whole dimmer fixture).
        public var channels: Range<Int>
        /// What a person reads: `wash bass: sACN universe 1, channel 1 at 10.0.0.60`.
        public var label: String

        public var description: String { label }
    }

    /// The steps, fixture by fixture in the patch's order.
    public let steps: [Step]

    /// The steps for every fixture of `patch`.
    public init(_ patch: LightingPatch) {
        var steps: [Step] = []
        for (index, fixture) in patch.fixtures.enumerated() {
            let count = fixture.channelCount
            // The fixture a bare target implies is named by the target: the place says that already.
            let name = fixture.name == patch.target.address ? "" : fixture.name
            var parts: [(name: String, channels: Range<Int>)] = []
            switch fixture.layout {
            case .dimmers:
                parts = Band.allCases.map { ("\(name) \($0)", $0.rawValue..<$0.rawValue + 1) }
            case .segments:
                // The renderer's thirds: pixel p belongs to band min(2, 3p / pixels).
                parts = Band.allCases.compactMap { band in
                    let pixels = (0..<fixture.pixels).filter { min(2, $0 * 3 / fixture.pixels) == band.rawValue }
                    guard let first = pixels.first, let last = pixels.last else { return nil }
                    return ("\(name) \(band) segment", 3 * first..<3 * (last + 1))
                }
            case .rgb, .rgbw, .blend, .scroll, .energy, .flash:
                parts = [(name.isEmpty ? "all" : name, 0..<count)]
            }
            for part in parts {
                steps.append(
                    Step(
                        fixture: index, channels: part.channels,
                        label:
                            "\(part.name.trimmingWhitespace()): \(Self.place(of: part.channels, fixture: index, in: patch))"
                    ))
            }
        }
        self.steps = steps
    }

    /// `sACN universe 1, channels 1–3 at 10.0.0.60`, or `DDP bytes 1–90 (pixels 0–29) at wled.local`
    /// (pixels numbered from 0, as WLED numbers its LEDs).
    static func place(of channels: Range<Int>, fixture: Int, in patch: LightingPatch) -> String {
        var runs: [(universe: Int, first: Int, last: Int)] = []
        for span in patch.spans where span.fixture == fixture {
            let lower = max(channels.lowerBound, span.fixtureChannel)
            let upper = min(channels.upperBound, span.fixtureChannel + span.count)
            guard lower < upper else { continue }
            let first = span.channel + lower - span.fixtureChannel + 1
            runs.append((span.universe, first, first + upper - lower - 1))
        }
        let target = patch.target
        let host = target.isDiscovered ? "\(target.kind)://auto" : target.host
        func range(_ first: Int, _ last: Int) -> String { first == last ? "\(first)" : "\(first)–\(last)" }
        guard target.kind != .ddp else {
            let run = runs.first ?? (0, 1, 1)
            let size = patch.ddpPixelBytes
            return "DDP bytes \(range(run.first, run.last)) (pixel\(run.last - run.first + 1 > size ? "s" : "") "
                + "\(range((run.first - 1) / size, (run.last - 1) / size))) at \(host)"
        }
        let parts = runs.map { run in
            "universe \(run.universe), channel\(run.first == run.last ? "" : "s") \(range(run.first, run.last))"
        }
        return "\(target.kind.displayName) \(parts.joined(separator: "; ")) at \(host)"
    }
}
