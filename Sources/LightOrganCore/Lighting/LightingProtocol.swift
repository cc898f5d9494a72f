/// A protocol that lighting on the LAN listens to: DMX over IP for stage fixtures and LED
/// controllers, and DDP for pixel strips (WLED).
public enum LightingProtocol: String, Sendable, CaseIterable, CustomStringConvertible {
    /// E1.31 (streaming ACN, "sACN"): UDP 5568, unicast or multicast 239.255.hi.lo per universe,
    /// 512 channels a universe, universes 1…63999.
    case sacn
    /// Art-Net 4 ArtDmx: UDP 6454, unicast or broadcast, 512 channels a universe, universes
    /// (15-bit port-addresses) 0…32767.
    case artnet
    /// Distributed Display Protocol as WLED reads it: UDP 4048, one flat byte space of RGB pixels
    /// addressed by byte offset, up to 1440 bytes a packet, the last packet of a frame pushed.
    case ddp

    /// The UDP port its receivers listen on.
    public var defaultPort: Int {
        switch self {
        case .sacn: 5568
        case .artnet: 6454
        case .ddp: 4048
        }
    }

    /// Packets per second sent by default: DMX512 refreshes at most about 44 times a second, so
    /// a DMX node gains nothing from more; WLED takes up to 100.
    public var defaultRate: Int {
        switch self {
        case .sacn, .artnet: 44
        case .ddp: 100
        }
    }

    /// The universes the protocol can address; nil for DDP, which has none.
    public var universes: ClosedRange<Int>? {
        switch self {
        case .sacn: 1...63999
        case .artnet: 0...32767
        case .ddp: nil
        }
    }

    /// Channels (bytes) in one universe; DDP has one byte space of at most ``ddpChannels``.
    public static let channelsPerUniverse = 512

    /// The largest byte space this project addresses on a DDP device (WLED drives at most a few
    /// thousand pixels).
    public static let ddpChannels = 3 * 10_000

    /// The protocol's name as people write it in a target: `sacn`, `artnet`, `ddp`.
    public var description: String { rawValue }

    /// The name shown in logs: `sACN`, `Art-Net`, `DDP`.
    public var displayName: String {
        switch self {
        case .sacn: "sACN"
        case .artnet: "Art-Net"
        case .ddp: "DDP"
        }
    }
}
