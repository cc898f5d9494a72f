/// A strip's frame as SPI bytes: each LED bit becomes 3 SPI bits at ``clockHz`` (1 → `110`,
/// 0 → `100`, most significant first), so SPI's MOSI line draws the WS2812B waveform.
///
/// At 2.4 MHz a LED bit is 1.25 µs with 0.42 µs high for a 0 and 0.83 µs for a 1 (datasheet:
/// 0.4 and 0.8 µs, ± 150 ns); the Pi's SPI divides its core clock by an even number, so the clock it
/// runs is a little lower (2.36 MHz from 250 MHz), still within the datasheet. After the pixels
/// come ``resetBytes`` zero bytes: a low of 300 µs that latches the frame. A frame is one SPI
/// transfer: chunks would leave gaps that the strip reads as a latch in mid-frame.
public enum WS2812Encoding {
    /// The SPI clock asked of the driver, Hz.
    public static let clockHz = 2_400_000
    /// SPI bits per LED bit.
    public static let bitsPerLEDBit = 3
    /// Zero bytes after the pixels: 90 × 8 bits at 2.4 MHz = 300 µs low.
    public static let resetBytes = 90

    /// The 3 SPI bytes of each LED byte as they lie in memory, then a zero byte: stored as one
    /// 4-byte word, the first three are the LED byte's and the fourth is overwritten by the next
    /// (or is the first reset byte, zero anyway).
    static let table: [UInt32] = (0...255).map { value in
        var bits: UInt32 = 0
        for bit in (0..<8).reversed() { bits = bits << 3 | (value >> bit & 1 == 1 ? 0b110 : 0b100) }
        let inMemoryOrder = (bits >> 16) | (bits >> 8 & 0xFF) << 8 | (bits & 0xFF) << 16
        return inMemoryOrder.littleEndian
    }

    /// SPI bytes of one frame of `pixels` pixels of `channels` colours each, reset included.
    public static func frameBytes(pixels: Int, channels: Int) -> Int {
        pixels * channels * bitsPerLEDBit + resetBytes
    }

    /// Seconds the frame takes on the wire at `clockHz`.
    public static func wireSeconds(pixels: Int, channels: Int, clockHz: Int = clockHz) -> Double {
        Double(frameBytes(pixels: pixels, channels: channels) * 8) / Double(clockHz)
    }

    /// Writes the SPI bytes of `rgb` (3 bytes a pixel, red, green, blue) in `order` into `spi`
    /// (``frameBytes(pixels:channels:)`` long), the reset zeros included. With a white channel in
    /// `order`, white takes what red, green and blue share. Raw buffers: this runs for every frame
    /// on every byte of the strip.
    public static func encode(rgb: [UInt8], order: ColorOrder, into spi: inout [UInt8]) {
        let pixels = rgb.count / 3
        let channels = order.channels.count
        let wire = (order.channels[0], order.channels[1], order.channels[2], channels == 4 ? order.channels[3] : 0)
        precondition(spi.count == frameBytes(pixels: pixels, channels: channels), "one frame's bytes")
        table.withUnsafeBufferPointer { table in
            rgb.withUnsafeBufferPointer { rgb in
                spi.withUnsafeMutableBytes { spi in
                    let rgb = rgb.baseAddress!, table = table.baseAddress!
                    var out = spi.baseAddress!
                    /// Puts the 3 SPI bytes of `value` at `out` (and a zero after them, which the
                    /// next value or the reset covers: the reset is never empty).
                    @inline(__always) func put(_ value: UInt8) {
                        out.storeBytes(of: table[Int(value)], as: UInt32.self)
                        out += 3
                    }
                    if channels == 3 {
                        // Each pixel's bytes straight from the wire order's offsets.
                        var pixel = rgb
                        for _ in 0..<pixels {
                            put(pixel[wire.0])
                            put(pixel[wire.1])
                            put(pixel[wire.2])
                            pixel += 3
                        }
                    }
                    for pixel in 0..<(channels == 4 ? pixels : 0) {
                        let red = rgb[3 * pixel], green = rgb[3 * pixel + 1], blue = rgb[3 * pixel + 2]
                        let white = min(red, green, blue)
                        let colors = (red - white, green - white, blue - white, white)
                        func color(_ channel: Int) -> UInt8 {
                            switch channel {
                            case 0: colors.0
                            case 1: colors.1
                            case 2: colors.2
                            default: colors.3
                            }
                        }
                        put(color(wire.0))
                        put(color(wire.1))
                        put(color(wire.2))
                        put(color(wire.3))
                    }
                    let end = spi.baseAddress! + spi.count
                    out.initializeMemory(as: UInt8.self, repeating: 0, count: end - out)
                }
            }
        }
    }
}
