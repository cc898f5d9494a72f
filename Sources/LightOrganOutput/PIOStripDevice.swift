import Glibc
public import LightOrganCore

/// A strip on the Pi 5's RP1 PIO through Raspberry Pi's `ws2812-pio-rp1` driver
/// (`dtoverlay=ws2812-pio,gpio=N,num_leds=N[,rgbw]` gives `/dev/leds0`).
///
/// The driver's format (drivers/misc/ws2812-pio-rp1.c): a frame is `num_leds × 4` bytes, red,
/// green, blue, white a pixel (white ignored without `rgbw`), written at position 0 (`pwrite`:
/// the file position advances); the driver reorders to the wire's order and applies its own gamma,
/// so the renderer leaves gamma out; a 1-byte write sets the driver's brightness (0…255), which
/// carries `receiver.strip.brightness`. A short write is padded dark; a longer one is refused.
/// Not run on a kernel here: nothing emulates a Pi 5.
public final class PIOStripDevice: StripDevice, @unchecked Sendable {
    // @unchecked Sendable: `frame`, the only mutable state, is used by write(rgb:) alone, which the
    // strip's writer thread calls (the protocol's rule).
    public let path: String
    private let fd: Int32
    private let rgbw: Bool
    private var frame: [UInt8]
    public let notes: [String]
    public var appliesGamma: Bool { true }
    public var appliesBrightness: Bool { true }

    /// Opens `path` for `pixels` pixels, sets the driver's brightness to `brightness` percent.
    public init(path: String, pixels: Int, led: StripLED, brightness: Int) throws(StripError) {
        fd = try openCharacterDevice(path, isSPI: false)
        self.path = path
        rgbw = led.channels == 4
        frame = [UInt8](repeating: 0, count: 4 * pixels)
        notes = [
            "\(pixels) pixels on the Pi 5's PIO (\(path)): \(4 * pixels) bytes a frame, the driver's gamma and brightness"
        ]
        try setBrightness(percent: brightness)
    }

    /// The 4-byte pixels of `rgb` as the driver takes them.
    static func encode(rgb: [UInt8], rgbw: Bool, into frame: inout [UInt8]) {
        for pixel in 0..<min(rgb.count / 3, frame.count / 4) {
            var red = rgb[3 * pixel], green = rgb[3 * pixel + 1], blue = rgb[3 * pixel + 2], white: UInt8 = 0
            if rgbw {
                white = min(red, green, blue)
                red -= white
                green -= white
                blue -= white
            }
            frame[4 * pixel] = red
            frame[4 * pixel + 1] = green
            frame[4 * pixel + 2] = blue
            frame[4 * pixel + 3] = white
        }
    }

    /// The driver's brightness byte for `percent`.
    static func brightnessByte(percent: Int) -> UInt8 { UInt8((min(max(percent, 0), 100) * 255 + 50) / 100) }

    /// Sets the driver's brightness (a 1-byte write).
    public func setBrightness(percent: Int) throws(StripError) {
        var byte = Self.brightnessByte(percent: percent)
        guard pwrite(fd, &byte, 1, 0) == 1 else {
            throw StripError("cannot set the brightness of \(path): \(String(cString: strerror(errno)))")
        }
    }

    public func write(rgb: [UInt8]) throws(StripError) {
        Self.encode(rgb: rgb, rgbw: rgbw, into: &frame)
        let written = frame.withUnsafeBytes { pwrite(fd, $0.baseAddress, $0.count, 0) }
        guard written == frame.count else {
            throw StripError(
                "write to \(path) failed (\(written < 0 ? String(cString: strerror(errno)) : "\(written) of \(frame.count) bytes")): "
                    + "is num_leds in dtoverlay=ws2812-pio at least receiver.strip.pixels?")
        }
    }

    public func close() { Glibc.close(fd) }
}
