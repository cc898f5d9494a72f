/// An Art-Net node as its ArtPollReply describes it: where it is, its names, and the
/// port-addresses (universes) its outputs show.
///
/// Art-Net 4: a controller broadcasts ArtPoll (OpCode 0x2000) to UDP 6454; every node answers with
/// an ArtPollReply (OpCode 0x2100) to port 6454 of the poller, and is then sent ArtDmx unicast for
/// the universes it outputs.
public struct ArtNetNode: Sendable, Equatable, Hashable {
    /// The node's IPv4 address, as it states it (`10.0.0.60`).
    public var address: String
    /// Its short name (up to 17 characters) and long name (up to 63).
    public var shortName: String
    public var longName: String
    /// Port-addresses (0…32767) of its DMX outputs (network to DMX: what lightorgan drives).
    public var outputUniverses: [Int]

    public init(address: String, shortName: String, longName: String, outputUniverses: [Int]) {
        self.address = address
        self.shortName = shortName
        self.longName = longName
        self.outputUniverses = outputUniverses
    }

    /// Art-Net's UDP port, for polls, replies and data.
    public static let port = 6454

    /// An ArtPoll: `Art-Net\0`, OpCode 0x2000 (little-endian), protocol 14, flags 0 (reply to
    /// polls only, no diagnostics), diagnostics priority 0. Art-Net 4 nodes accept this 14-byte
    /// form of the packet.
    public static let poll: [UInt8] = Array("Art-Net".utf8) + [0, 0x00, 0x20, 0, 14, 0, 0]

    /// Reads an ArtPollReply; nil for anything else (another OpCode, too short, not Art-Net).
    ///
    /// - Parameter sender: the datagram's source address, used when the packet's own is 0.0.0.0.
    public init?(reply bytes: [UInt8], sender: String) {
        guard bytes.count >= 174, bytes.starts(with: Array("Art-Net".utf8) + [0]), bytes[8] == 0x00, bytes[9] == 0x21
        else {
            return nil
        }
        let stated = bytes[10..<14].map(String.init).joined(separator: ".")
        address = stated == "0.0.0.0" ? sender : stated
        func text(_ range: Range<Int>) -> String {
            String(decoding: bytes[range].prefix { $0 != 0 }, as: UTF8.self).trimmingWhitespace()
        }
        shortName = text(26..<44)
        longName = text(44..<108)
        outputUniverses = []
        // Ports: NumPorts (172…173), PortTypes (174…177, bit 7: outputs DMX), SwOut (190…193).
        let ports = min(4, Int(bytes[173]))
        guard bytes.count >= 194 else { return }
        let net = Int(bytes[18] & 0x7f)
        let subnet = Int(bytes[19] & 0x0f)
        for port in 0..<ports where bytes[174 + port] & 0x80 != 0 {
            let universe = net << 8 | subnet << 4 | Int(bytes[190 + port] & 0x0f)
            if !outputUniverses.contains(universe) { outputUniverses.append(universe) }
        }
    }

    /// Whether it outputs any of `universes` (a node that says nothing of its outputs is taken to
    /// output everything, as some small nodes answer).
    public func outputs(anyOf universes: [Int]) -> Bool {
        outputUniverses.isEmpty || universes.contains { outputUniverses.contains($0) }
    }
}
