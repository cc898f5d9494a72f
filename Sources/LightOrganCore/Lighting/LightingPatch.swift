/// A lighting target with its fixtures placed on its channels: which universe and channels each
/// fixture's channels land on, checked so that none runs past a universe or onto another.
///
/// Invariants: every span lies within its universe (1…512 channels) or, for DDP, within the
/// device's byte space; no two spans of a target share a channel; universes are within the
/// protocol's range.
public struct LightingPatch: Sendable, Equatable {
    /// Where a run of a fixture's channels lands.
    public struct Span: Sendable, Equatable {
        /// Index of the fixture in ``LightingPatch/fixtures``.
        public var fixture: Int
        /// The universe (0 for DDP).
        public var universe: Int
        /// First channel in the universe, 0-based (DDP: byte offset).
        public var channel: Int
        /// Channels in the run.
        public var count: Int
        /// Index of the run's first channel among the fixture's own channels.
        public var fixtureChannel: Int
    }

    /// What is wrong with a fixture's placement, for a message naming its setting.
    public struct Problem: Error, Sendable, Equatable {
        /// The fixture's name.
        public var fixture: String
        /// The setting at fault: `universe`, `address` or `pixels`.
        public var field: String
        public var text: String
    }

    public let target: LightingTarget
    public let fixtures: [Fixture]
    public let spans: [Span]
    /// Universes used, ascending (`[0]` for DDP).
    public let universes: [Int]

    /// DDP: bytes of one pixel, 4 when every fixture is rgbw (DDP data type RGBW), else 3 (RGB).
    public var ddpPixelBytes: Int { fixtures.allSatisfy { $0.layout == .rgbw } ? 4 : 3 }

    /// Places `fixtures` on `target`.
    ///
    /// - Throws: ``Problem`` for a universe out of range, a fixture past the end of its universe
    ///   (or of the last universe), or two fixtures on the same channels.
    public init(target: LightingTarget, fixtures: [Fixture]) throws(Problem) {
        self.target = target
        self.fixtures = fixtures
        var spans: [Span] = []
        for (index, fixture) in fixtures.enumerated() {
            spans += try Self.place(fixture, index: index, on: target.kind)
        }
        // A DDP packet says one pixel format for all its bytes: RGB (3 bytes) or RGBW (4).
        if target.kind == .ddp, let rgbw = fixtures.first(where: { $0.layout == .rgbw }),
            let other = fixtures.first(where: { $0.layout != .rgbw })
        {
            throw Problem(
                fixture: other.name, field: "layout",
                text:
                    "puts \(other.layout) (3-byte pixels) beside \(rgbw.name)'s rgbw (4-byte pixels) on \(target.address), "
                    + "but a DDP device reads one pixel format; allowed: rgbw for every fixture on it, or none")
        }
        // Two fixtures on the same channels of a universe.
        for (i, span) in spans.enumerated() {
            for other in spans[..<i]
            where other.universe == span.universe && other.fixture != span.fixture
                && other.channel < span.channel + span.count && span.channel < other.channel + other.count
            {
                let fixture = fixtures[span.fixture]
                let first = fixtures[other.fixture]
                let place = target.kind == .ddp ? "bytes" : "channels"
                let universe = target.kind == .ddp ? "" : " of universe \(span.universe)"
                throw Problem(
                    fixture: fixture.name, field: "address",
                    text:
                        "puts \(place) \(span.channel + 1)…\(span.channel + span.count)\(universe) on \(target.address), "
                        + "which \(first.name) already uses (\(other.channel + 1)…\(other.channel + other.count)); "
                        + "move one of them (address, universe) or shorten it")
            }
        }
        self.spans = spans
        universes = Array(Set(spans.map(\.universe))).sorted()
    }

    /// The runs of one fixture: one run, or for a strip on sACN/Art-Net whole pixels continuing in
    /// the next universes (170 RGB pixels each, as WLED reads them).
    private static func place(_ fixture: Fixture, index: Int, on kind: LightingProtocol) throws(Problem) -> [Span] {
        let count = fixture.channelCount
        guard let universes = kind.universes else {
            let limit = LightingProtocol.ddpChannels
            guard (1...limit).contains(fixture.address) else {
                throw Problem(
                    fixture: fixture.name, field: "address", text: "is out of range 1…\(limit) (DDP: the first byte)")
            }
            let pixelBytes = fixture.layout == .rgbw ? 4 : 3
            guard (fixture.address - 1) % pixelBytes == 0 else {
                let starts =
                    pixelBytes == 4
                    ? "1, 5, 9, … (pixel n starts at byte 4n+1)" : "1, 4, 7, … (pixel n starts at byte 3n+1)"
                throw Problem(
                    fixture: fixture.name, field: "address",
                    text:
                        "is not where a pixel starts: DDP pixels are \(pixelBytes) bytes\(pixelBytes == 4 ? " (rgbw)" : ""); allowed: \(starts)"
                )
            }
            guard fixture.address - 1 + count <= limit else {
                throw Problem(
                    fixture: fixture.name, field: "pixels",
                    text: "runs past byte \(limit) of the DDP device (address \(fixture.address) + \(count) bytes)")
            }
            return [Span(fixture: index, universe: 0, channel: fixture.address - 1, count: count, fixtureChannel: 0)]
        }
        let size = LightingProtocol.channelsPerUniverse
        guard universes.contains(fixture.universe) else {
            throw Problem(
                fixture: fixture.name, field: "universe",
                text: "is out of range \(universes.lowerBound)…\(universes.upperBound) (\(kind.displayName))")
        }
        guard (1...size).contains(fixture.address) else {
            throw Problem(fixture: fixture.name, field: "address", text: "is out of range 1…\(size)")
        }
        guard fixture.layout.isStrip else {
            let last = fixture.address + count - 1
            guard last <= size else {
                throw Problem(
                    fixture: fixture.name, field: "address",
                    text:
                        "puts the \(fixture.layout) layout's \(count) channels at \(fixture.address)…\(last), past channel \(size); "
                        + "allowed: 1…\(size - count + 1) for \(fixture.layout)")
            }
            return [
                Span(
                    fixture: index, universe: fixture.universe, channel: fixture.address - 1, count: count,
                    fixtureChannel: 0)
            ]
        }
        // A strip: whole pixels per universe, the first from `address`, the others from channel 1.
        var spans: [Span] = []
        var remaining = fixture.pixels
        var universe = fixture.universe
        var channel = fixture.address - 1
        var pixel = 0
        while remaining > 0 {
            let fits = (size - channel) / 3
            if fits > 0 {
                let taken = min(fits, remaining)
                spans.append(
                    Span(
                        fixture: index, universe: universe, channel: channel, count: 3 * taken,
                        fixtureChannel: 3 * pixel))
                remaining -= taken
                pixel += taken
            }
            if remaining > 0 {
                universe += 1
                channel = 0
                guard universes.contains(universe) else {
                    throw Problem(
                        fixture: fixture.name, field: "pixels",
                        text: "runs past universe \(universes.upperBound), the last of \(kind.displayName)")
                }
            }
        }
        return spans
    }
}
