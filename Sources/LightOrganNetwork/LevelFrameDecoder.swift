public import NIOCore
public import LightOrganCore

/// Cuts the receiver's byte stream into 3-byte ``LevelFrame``s.
///
/// TCP delivers bytes, not frames: a read may hold half a frame or several frames. The decoder
/// buffers until three bytes are there, so any split of the stream yields the same frames.
/// Bytes left over when the connection closes (fewer than three) are dropped, never shown.
public struct LevelFrameDecoder: ByteToMessageDecoder, Sendable {
    public typealias InboundOut = LevelFrame

    public init() {}

    public mutating func decode(context: ChannelHandlerContext, buffer: inout ByteBuffer) throws -> DecodingState {
        guard let bytes = buffer.readBytes(length: LevelFrame.byteCount) else { return .needMoreData }
        context.fireChannelRead(wrapInboundOut(LevelFrame(bass: bytes[0], mid: bytes[1], treble: bytes[2])))
        return .continue
    }

    public mutating func decodeLast(
        context: ChannelHandlerContext, buffer: inout ByteBuffer, seenEOF: Bool
    ) throws -> DecodingState {
        while try decode(context: context, buffer: &buffer) == .continue {}
        buffer.moveReaderIndex(to: buffer.writerIndex)  // a partial frame at the end is dropped
        return .needMoreData
    }
}

extension ByteBuffer {
    /// Appends `frame` as its three wire bytes.
    public mutating func writeLevelFrame(_ frame: LevelFrame) {
        writeBytes([frame.bass, frame.mid, frame.treble])
    }
}
