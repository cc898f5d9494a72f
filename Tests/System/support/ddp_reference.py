"""An independent DDP decoder and sender for tests of lightorgan's DDP output: python-led-ddp.

python-led-ddp 1.0.1 (PyPI, MIT, pure Python, no dependencies, Python >= 3.10; import name `ddp`) is
a translation of the Rust crate ddp-rs. Its own README warns that it is machine translated and
untested, so a disagreement with it is a lead to check against the DDP spec
(http://www.3waylabs.com/ddp/), not a verdict. What it offers:

- a parser: `ddp.Packet.from_bytes(data)` -> `Packet(header, data, parsed)`, where `header` is a
  `ddp.Header(packet_type, sequence_number, pixel_config, id, offset, length, time_code)` and
  `packet_type` a `ddp.PacketType(version, timecode, storage, reply, query, push)`. It reads a
  10-byte header (14 with the timecode flag 0x10), takes everything after the header as `data`
  (it does not compare `length` with what is there) and returns an all-default packet instead of
  failing when the packet is too short; `parse` below raises instead.
- a sender: `await ddp.DDPConnection.create("HOST:PORT", PixelConfig, ID, local_addr="IP:PORT")`,
  then `await connection.write(pixels)` / `write_offset(pixels, byte_offset)`: it cuts the bytes
  into packets of at most 1440 bytes, sets push (0x01) on the last packet of each write only,
  numbers packets 1, 2, … 15, 1, … (per packet, not per frame; 0 = unused is never sent),
  version 1 (flags 0x40), id 1, offset in bytes, big-endian offset (4 bytes) and length (2).
- its data-type byte (header byte 2, `PixelConfig`: bit 7 customer defined, bits 5-3 type, bits
  2-0 size) defaults to 0x0D (RGB, "24 bits"), where WLED and the spec's "bits per pixel element"
  mean 0x0B (RGB, 8 bits a channel) and WLED reads only the type bits. `reference_packets` takes
  the byte to send, so a comparison can be about the layout.

Pinned in Tests/System/requirements.txt: the suite's venv has it.
"""
import asyncio
import socket

import ddp


def parse(packet: bytes) -> dict:
    """The fields of one DDP packet as python-led-ddp decodes them:
    {flags, version, timecode_flag, storage, reply, query, push, sequence, data_type, pixel_type,
    pixel_size, customer_defined, id, offset, length, timecode, data}. `flags` and `data_type`
    are the library's decoded header re-encoded (reserved bits are dropped); `data` is every byte
    after the header; ValueError for a packet shorter than its header."""
    packet = bytes(packet)
    header_size = 14 if len(packet) >= 1 and packet[0] & 0x10 else 10
    if len(packet) < header_size:
        raise ValueError(f"{len(packet)} bytes: shorter than a {header_size}-byte DDP header")
    decoded = ddp.Packet.from_bytes(packet)
    header, kind, pixels = decoded.header, decoded.header.packet_type, decoded.header.pixel_config
    return {
        "flags": kind.to_byte(), "version": kind.version, "timecode_flag": kind.timecode,
        "storage": kind.storage, "reply": kind.reply, "query": kind.query, "push": kind.push,
        "sequence": header.sequence_number, "data_type": pixels.to_byte(),
        "pixel_type": pixels.data_type.name, "pixel_size": pixels.data_size.name,
        "customer_defined": pixels.customer_defined, "id": int(header.id), "offset": header.offset,
        "length": header.length, "timecode": header.time_code.value, "data": bytes(decoded.data),
    }


def reference_packets(frames, offset=0, data_type=None, timeout=1.0):
    """The UDP payloads python-led-ddp sends for `frames` (pixel bytes, or a list of them sent one
    after the other on one connection, so sequence numbers continue), captured on a loopback
    socket. `offset`: byte offset of each write (write_offset); `data_type`: header byte 2 to
    send (None: the library's default 0x0D; 0x0B is WLED's RGB 8-bit)."""
    if isinstance(frames, (bytes, bytearray)):
        frames = [frames]
    config = ddp.PixelConfig.default() if data_type is None else ddp.PixelConfig.from_byte(data_type)
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as receiver:
        receiver.bind(("127.0.0.1", 0))
        receiver.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4 << 20)
        port = receiver.getsockname()[1]

        async def send():
            connection = await ddp.DDPConnection.create(f"127.0.0.1:{port}", config, ddp.ID.DEFAULT,
                                                        local_addr="127.0.0.1:0")
            try:
                for frame in frames:
                    if offset:
                        await connection.write_offset(bytes(frame), offset)
                    else:
                        await connection.write(bytes(frame))
            finally:
                await connection.close()

        asyncio.run(send())
        packets = []
        receiver.settimeout(timeout)
        expected = sum(max(1, -(-len(frame) // 1440)) if len(frame) else 0 for frame in frames)
        while len(packets) < expected:
            try:
                packets.append(receiver.recv(65536))
            except socket.timeout:
                break
        return packets
