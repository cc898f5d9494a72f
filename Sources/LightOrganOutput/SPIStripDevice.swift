import CSPIShim
import FoundationEssentials
import Glibc
public import LightOrganCore

/// A WS2812B/SK6812 strip on spidev (`/dev/spidev0.0`: SPI0, MOSI on GPIO 10, header pin 19; on
/// every Pi from the 3 to the 5): each frame is encoded by ``WS2812Encoding`` and sent as ONE
/// SPI transfer, never in chunks (a gap between chunks would latch half a frame).
///
/// spidev refuses a transfer larger than its `bufsiz` (4096 bytes unless the kernel command line
/// says `spidev.bufsiz=`): a strip whose frame does not fit is refused when it opens, with the
/// setting that fixes it.
public final class SPIStripDevice: StripDevice, @unchecked Sendable {
    // @unchecked Sendable: `spi`, the only mutable state, is used by write(rgb:) alone, which the
    // strip's writer thread calls (the protocol's rule).
    public let path: String
    private let fd: Int32
    private let order: ColorOrder
    private var spi: [UInt8]
    public let notes: [String]
    public var appliesGamma: Bool { false }

    /// Where spidev states its transfer limit, bytes.
    static let bufsizFile = "/sys/module/spidev/parameters/bufsiz"

    /// Opens `path` for `pixels` pixels of `led` in `order`.
    public init(path: String, pixels: Int, led: StripLED, order: ColorOrder) throws(StripError) {
        let bytes = WS2812Encoding.frameBytes(pixels: pixels, channels: led.channels)
        let limit = Self.transferLimit()
        // Checked before the device is opened: the message then says the same with or without SPI.
        if let limit, bytes > limit {
            throw Self.tooLarge(pixels: pixels, bytes: bytes, limit: limit, led: led)
        }
        fd = try openCharacterDevice(path, isSPI: true)
        guard lightorgan_spi_configure(fd, UInt32(WS2812Encoding.clockHz)) == 0 else {
            let code = errno
            Glibc.close(fd)
            throw StripError(
                "\(path) refuses SPI mode 0 at \(WS2812Encoding.clockHz) Hz (\(String(cString: strerror(code)))); is it an SPI device?"
            )
        }
        self.path = path
        self.order = order
        spi = [UInt8](repeating: 0, count: bytes)
        let seconds = WS2812Encoding.wireSeconds(pixels: pixels, channels: led.channels)
        var notes = [
            "\(pixels) \(led) pixels: \(bytes) bytes a frame at \(Double(WS2812Encoding.clockHz) / 1e6) MHz (\((seconds * 1000).formatted(decimals: 1)) ms on the wire)"
        ]
        if seconds > 0.01 {
            notes.append(
                "\(pixels) pixels take \((seconds * 1000).formatted(decimals: 1)) ms a frame: the strip shows at most \(Int(1 / seconds)) frames a second (100 needs at most \(Self.pixelsAt100(led)) pixels)"
            )
        }
        self.notes = notes
    }

    public func write(rgb: [UInt8]) throws(StripError) {
        Self.encode(rgb: rgb, order: order, into: &spi)
        let sent = spi.withUnsafeBufferPointer {
            lightorgan_spi_write(fd, $0.baseAddress, $0.count, UInt32(WS2812Encoding.clockHz))
        }
        guard sent >= 0 else {
            let code = errno
            if code == EMSGSIZE {
                let limit = Self.transferLimit() ?? 4096
                throw Self.tooLarge(pixels: rgb.count / 3, bytes: spi.count, limit: limit, led: nil)
            }
            throw StripError("SPI write to \(path) failed: \(String(cString: strerror(code)))")
        }
    }

    public func close() { Glibc.close(fd) }

    /// The frame's SPI bytes, reset included: ``WS2812Encoding``'s, RGB strips through the C encoder
    /// (NEON on arm64, 16 pixels at a time: the strip writer's main work), RGBW through the core's.
    public static func encode(rgb: [UInt8], order: ColorOrder, into spi: inout [UInt8]) {
        let channels = order.channels
        guard channels.count == 3 else {
            WS2812Encoding.encode(rgb: rgb, order: order, into: &spi)
            return
        }
        precondition(spi.count == WS2812Encoding.frameBytes(pixels: rgb.count / 3, channels: 3), "one frame's bytes")
        rgb.withUnsafeBufferPointer { rgb in
            spi.withUnsafeMutableBufferPointer { spi in
                let pixelBytes = 9 * (rgb.count / 3)
                lightorgan_ws2812_encode_rgb(
                    rgb.baseAddress, rgb.count / 3, UInt32(channels[0]), UInt32(channels[1]), UInt32(channels[2]),
                    spi.baseAddress)
                (spi.baseAddress! + pixelBytes).update(repeating: 0, count: spi.count - pixelBytes)
            }
        }
    }

    /// spidev's transfer limit, bytes (nil when the module does not say: spidev not loaded).
    static func transferLimit() -> Int? {
        guard let text = try? String(contentsOfFile: bufsizFile, encoding: .utf8) else { return nil }
        return Int(text.trimmingWhitespace())
    }

    /// Pixels whose frame fits in `limit` bytes.
    static func pixelsFitting(_ limit: Int, channels: Int) -> Int {
        max(0, (limit - WS2812Encoding.resetBytes) / (channels * WS2812Encoding.bitsPerLEDBit))
    }

    /// Pixels whose frame takes at most 10 ms on the wire.
    static func pixelsAt100(_ led: StripLED) -> Int {
        let bits = 0.01 * Double(WS2812Encoding.clockHz) - Double(WS2812Encoding.resetBytes * 8)
        return Int(bits / Double(8 * led.channels * WS2812Encoding.bitsPerLEDBit))
    }

    static func tooLarge(pixels: Int, bytes: Int, limit: Int, led: StripLED?) -> StripError {
        let fewer =
            led.map { ", or set receiver.strip.pixels to at most \(pixelsFitting(limit, channels: $0.channels))" } ?? ""
        return StripError(
            "a frame of \(pixels) pixels is \(bytes) bytes on SPI, more than spidev's limit of \(limit) bytes (\(bufsizFile)); "
                + "add spidev.bufsiz=\(max(32768, bytes)) to the kernel command line (/boot/firmware/cmdline.txt) and reboot\(fewer)"
        )
    }
}

extension Double {
    /// The number with `decimals` decimals, without Foundation's formatter.
    func formatted(decimals: Int) -> String {
        var scale = 1.0
        for _ in 0..<decimals { scale *= 10 }
        let whole = (self * scale).rounded() / scale
        let text = String(whole)
        guard decimals > 0, let dot = text.firstIndex(of: ".") else { return text }
        let fraction = text[text.index(after: dot)...]
        return String(text[..<dot]) + "." + String(fraction.prefix(decimals))
            + String(repeating: "0", count: max(0, decimals - fraction.count))
    }
}
