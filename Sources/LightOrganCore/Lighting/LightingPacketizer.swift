/// Puts a target's rendered channels into the packets its protocol sends, keeping each stream's
/// sequence numbers. One packetizer per target; ``encode(_:terminated:)`` reuses its buffers.
///
/// - sACN (ANSI E1.31-2018): one data packet per universe — root layer (preamble 0x0010, ACN
///   packet identifier `ASC-E1.17`, vector 4, the source's CID), framing layer (vector 2, source
///   name, priority, sync address 0, sequence, options, universe), DMP layer (vector 2, 0xA1,
///   first address 0, increment 1, count, start code 0, the channels). Options bit 0x40 marks
///   stream-terminated packets, sent three times on stop so receivers let go at once. With a
///   synchronization universe (``LightingTarget/syncUniverse``) the data packets carry it and each
///   frame ends with an E1.31 synchronization packet (root vector 8, framing vector 1, its own
///   sequence, the universe, 49 bytes), on which receivers show every universe of the frame at once.
/// - Art-Net 4: one ArtDmx per universe (`Art-Net\0`, OpCode 0x5000 little-endian, protocol 14,
///   sequence 1…255, physical 0, SubUni and Net of the 15-bit port-address, big-endian length).
/// - DDP: the byte space in packets of at most ``ddpPacketData`` bytes, each with the 10-byte
///   header (flags version 1 and, on the last packet of a frame, push; sequence 1…15, packet by packet; data type
///   RGB 8-bit; destination 1, the display; big-endian byte offset and length).
public struct LightingPacketizer: Sendable {
    /// The most data bytes in one DDP packet (480 RGB pixels), as WLED and LedFx send them.
    public static let ddpPacketData = 1440
    /// sACN: bytes before the channels.
    static let e131Header = 126
    /// Art-Net: bytes before the channels.
    static let artDmxHeader = 18
    /// DDP: bytes before the data.
    static let ddpHeader = 10

    /// sACN: bytes of a synchronization packet.
    static let e131SyncLength = 49

    /// The packets of the last ``encode(_:terminated:)``, each with its universe (for sACN
    /// multicast groups; 0 for DDP), the synchronization packet last. Only the first
    /// ``packetCount`` are meaningful.
    public private(set) var packets: [(universe: Int, bytes: [UInt8])]
    /// How many of ``packets`` the last encode filled.
    public private(set) var packetCount = 0
    private let kind: LightingProtocol
    private var sequences: [UInt8]
    private var ddpSequence: UInt8 = 0
    private var syncSequence: UInt8 = 0
    /// Whether the last of ``packets`` is an E1.31 synchronization packet.
    private let synchronized: Bool

    /// A packetizer for what `renderer` renders, sent as `source` with sACN `priority`.
    public init(for renderer: FixtureRenderer, source: LightingSource, priority: Int) {
        kind = renderer.patch.target.kind
        synchronized = kind == .sacn && renderer.patch.target.syncUniverse != nil
        sequences = [UInt8](repeating: 0, count: renderer.patch.universes.count)
        switch kind {
        case .sacn:
            let sync = renderer.patch.target.syncUniverse
            packets = zip(renderer.patch.universes, renderer.slotCounts).map { universe, slots in
                (
                    universe,
                    Self.e131Template(
                        universe: universe, slots: slots, source: source, priority: priority, sync: sync ?? 0)
                )
            }
            if let sync { packets.append((sync, Self.e131SyncTemplate(sync: sync, source: source))) }
        case .artnet:
            packets = zip(renderer.patch.universes, renderer.slotCounts).map { universe, slots in
                (universe, Self.artDmxTemplate(universe: universe, slots: slots))
            }
        case .ddp:
            let total = renderer.slotCounts.first ?? 0
            let count = max(1, (total + Self.ddpPacketData - 1) / Self.ddpPacketData)
            packets = (0..<count).map { index in
                let offset = index * Self.ddpPacketData
                var bytes = Self.ddpTemplate(
                    offset: offset, length: min(Self.ddpPacketData, total - offset),
                    pixelBytes: renderer.patch.ddpPixelBytes)
                if index == count - 1 { bytes[0] |= 0x01 }  // push: show the frame
                return (0, bytes)
            }
        }
    }

    /// Fills ``packets`` with the renderer's channels; `terminated` (sACN) marks the stream's end.
    public mutating func encode(_ renderer: FixtureRenderer, terminated: Bool = false) {
        switch kind {
        case .sacn:
            let data = packets.count - (synchronized ? 1 : 0)
            for index in 0..<data {
                sequences[index] &+= 1
                let buffer = renderer.buffers[index]
                packets[index].bytes.withUnsafeMutableBufferPointer { bytes in
                    bytes[111] = sequences[index]
                    bytes[112] = terminated ? 0x40 : 0
                    for channel in 0..<renderer.slotCounts[index] { bytes[Self.e131Header + channel] = buffer[channel] }
                }
            }
            // The frame's synchronization packet, after its data; none after a terminated stream.
            if synchronized && !terminated {
                syncSequence &+= 1
                packets[data].bytes[44] = syncSequence
            }
            packetCount = terminated ? data : packets.count
        case .artnet:
            for index in packets.indices {
                // 0 means "no sequence" to Art-Net receivers: count 1…255.
                sequences[index] = sequences[index] == 255 ? 1 : sequences[index] + 1
                let buffer = renderer.buffers[index]
                packets[index].bytes.withUnsafeMutableBufferPointer { bytes in
                    bytes[12] = sequences[index]
                    for channel in 0..<renderer.slotCounts[index] {
                        bytes[Self.artDmxHeader + channel] = buffer[channel]
                    }
                }
            }
            packetCount = packets.count
        case .ddp:
            let buffer = renderer.buffers.first ?? []
            for index in packets.indices {
                // Every packet its own number, 1…15 (0 means unnumbered): receivers may drop a
                // packet that repeats the one before (the DDP specification; WLED does).
                ddpSequence = ddpSequence % 15 + 1
                let offset = index * Self.ddpPacketData
                packets[index].bytes.withUnsafeMutableBufferPointer { bytes in
                    bytes[1] = ddpSequence
                    for byte in 0..<(bytes.count - Self.ddpHeader) {
                        bytes[Self.ddpHeader + byte] = buffer[offset + byte]
                    }
                }
            }
            packetCount = packets.count
        }
    }

    /// An E1.31 data packet for `slots` channels of `universe`, sequence 0, all channels 0,
    /// synchronized on universe `sync` (0: not synchronized).
    static func e131Template(universe: Int, slots: Int, source: LightingSource, priority: Int, sync: Int = 0) -> [UInt8]
    {
        var bytes = e131Root(count: e131Header + slots, vector: 0x04, source: source)  // VECTOR_ROOT_E131_DATA
        func put16(_ value: Int, at offset: Int) {
            bytes[offset] = UInt8(value >> 8 & 0xff)
            bytes[offset + 1] = UInt8(value & 0xff)
        }
        // Framing layer.
        put16(0x7000 | (bytes.count - 38), at: 38)
        bytes[43] = 0x02  // VECTOR_E131_DATA_PACKET (40…43)
        // Source name: 44…107, NUL-terminated.
        for (index, byte) in source.name.utf8.prefix(63).enumerated() { bytes[44 + index] = byte }
        bytes[108] = UInt8(priority)
        put16(sync, at: 109)  // synchronization address; 111 sequence, 112 options
        put16(universe, at: 113)
        // DMP layer.
        put16(0x7000 | (bytes.count - 115), at: 115)
        bytes[117] = 0x02  // VECTOR_DMP_SET_PROPERTY
        bytes[118] = 0xa1  // address type and data type
        put16(0x0000, at: 119)  // first property address
        put16(0x0001, at: 121)  // address increment
        put16(slots + 1, at: 123)  // property value count: the start code and the channels
        bytes[125] = 0x00  // DMX512 start code
        return bytes
    }

    /// An E1.31 synchronization packet for universe `sync`, sequence 0 (E1.31-2018 §6.3).
    static func e131SyncTemplate(sync: Int, source: LightingSource) -> [UInt8] {
        var bytes = e131Root(count: e131SyncLength, vector: 0x08, source: source)  // VECTOR_ROOT_E131_EXTENDED
        bytes[38] = 0x70  // flags and length of the framing layer: 11 bytes
        bytes[39] = UInt8(e131SyncLength - 38)
        bytes[43] = 0x01  // VECTOR_E131_EXTENDED_SYNCHRONIZATION (40…43); 44 sequence
        bytes[45] = UInt8(sync >> 8 & 0xff)
        bytes[46] = UInt8(sync & 0xff)
        return bytes  // 47…48 reserved, 0
    }

    /// `count` bytes starting with an E1.31 root layer of `vector` from `source`.
    private static func e131Root(count: Int, vector: UInt8, source: LightingSource) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: count)
        bytes[1] = 0x10  // preamble size 0x0010; postamble size (2…3) stays 0
        for (index, byte) in "ASC-E1.17".utf8.enumerated() { bytes[4 + index] = byte }  // 4…15, zero-padded
        bytes[16] = UInt8(0x70 | (count - 16) >> 8)  // flags and length of everything from byte 16
        bytes[17] = UInt8((count - 16) & 0xff)
        bytes[21] = vector  // 18…21
        for (index, byte) in source.cid.enumerated() { bytes[22 + index] = byte }  // 22…37
        return bytes
    }

    /// An ArtDmx packet for `slots` (even, 2…512) channels of port-address `universe`.
    static func artDmxTemplate(universe: Int, slots: Int) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: artDmxHeader + slots)
        for (index, byte) in "Art-Net".utf8.enumerated() { bytes[index] = byte }  // 0…7, NUL-terminated
        bytes[8] = 0x00  // OpDmx 0x5000, little-endian
        bytes[9] = 0x50
        bytes[10] = 0  // protocol version 14, big-endian
        bytes[11] = 14
        // 12 sequence, 13 physical port 0.
        bytes[14] = UInt8(universe & 0xff)  // SubUni: sub-net and universe nibbles
        bytes[15] = UInt8(universe >> 8 & 0x7f)  // Net
        bytes[16] = UInt8(slots >> 8)
        bytes[17] = UInt8(slots & 0xff)
        return bytes
    }

    /// A DDP packet carrying `length` bytes from byte `offset`, of pixels of `pixelBytes` (3 or 4)
    /// bytes; the last of a frame is pushed.
    static func ddpTemplate(offset: Int, length: Int, pixelBytes: Int = 3) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: ddpHeader + max(0, length))
        bytes[0] = 0x40  // version 1; push is set below on the frame's last packet
        // Data type: bits 5…3 the pixel (1 RGB, 3 RGBW), bits 2…0 the size of a channel (3: 8 bits).
        bytes[2] = pixelBytes == 4 ? 0x1b : 0x0b
        bytes[3] = 0x01  // destination: the default output device (the display)
        bytes[4] = UInt8(offset >> 24 & 0xff)
        bytes[5] = UInt8(offset >> 16 & 0xff)
        bytes[6] = UInt8(offset >> 8 & 0xff)
        bytes[7] = UInt8(offset & 0xff)
        bytes[8] = UInt8(length >> 8 & 0xff)
        bytes[9] = UInt8(length & 0xff)
        return bytes
    }
}

/// Who sends: the sACN component identifier (CID) and source name receivers show and merge by.
public struct LightingSource: Sendable, Equatable {
    /// 16 bytes, a UUID: the same across restarts of the same command on the same machine.
    public var cid: [UInt8]
    /// Shown by receivers (up to 63 bytes of UTF-8), e.g. `lightorgan send on laptop`.
    public var name: String

    public init(cid: [UInt8], name: String) {
        precondition(cid.count == 16, "a CID is 16 bytes")
        self.cid = cid
        self.name = name
    }

    /// A CID that stays the same for the same `machine` identity (`/etc/machine-id`) and `role`
    /// (`send`, `receive`): a name-based UUID (version 8) over both, so a restart keeps it and two
    /// machines or roles do not share it.
    public static func stableIdentifier(machine: String, role: String) -> [UInt8] {
        // Two 64-bit FNV-1a hashes with different offsets: not cryptographic, stable and spread.
        func fnv(_ text: String, offset: UInt64) -> UInt64 {
            var hash = offset
            for byte in text.utf8 {
                hash ^= UInt64(byte)
                hash = hash &* 0x0000_0100_0000_01b3
            }
            return hash
        }
        let text = "lightorgan\u{0}\(machine)\u{0}\(role)"
        let high = fnv(text, offset: 0xcbf2_9ce4_8422_2325)
        let low = fnv(text, offset: 0x84222325_cbf29ce4)
        var bytes =
            (0..<8).map { UInt8(high >> (56 - 8 * UInt64($0)) & 0xff) }
            + (0..<8).map { UInt8(low >> (56 - 8 * UInt64($0)) & 0xff) }
        bytes[6] = bytes[6] & 0x0f | 0x80  // version 8: custom
        bytes[8] = bytes[8] & 0x3f | 0x80  // RFC 4122 variant
        return bytes
    }
}
