import Glibc
import LightOrganCore

/// Where a strip's pixels go: spidev (``SPIStripDevice``), the Pi 5's ws2812-pio
/// (``PIOStripDevice``), or nowhere (``VirtualStripDevice``).
///
/// ``write(rgb:)`` is called from the strip's writer thread only, one frame at a time, and may
/// block for the frame's time on the wire.
public protocol StripDevice: AnyObject, Sendable {
    /// The device as set (`/dev/spidev0.0`), for messages.
    var path: String { get }
    /// Sends one frame, 3 bytes a pixel (red, green, blue), as one write.
    func write(rgb: [UInt8]) throws(StripError)
    /// Closes the device (after the last write).
    func close()
    /// What the log should say of the device once it is open (its clock, the frame rate its
    /// wire time allows), one line each.
    var notes: [String] { get }
    /// Whether the device applies its own gamma (the renderer then leaves it out).
    var appliesGamma: Bool { get }
    /// Whether the device applies the brightness limit itself (``setBrightness(percent:)``).
    var appliesBrightness: Bool { get }
    /// Sets the device's own brightness, where it has one.
    func setBrightness(percent: Int) throws(StripError)
}

extension StripDevice {
    public var appliesBrightness: Bool { false }
    public func setBrightness(percent: Int) throws(StripError) {}
}

/// A strip failure a Pi user can meet, in one line with what to do.
public struct StripError: Error, CustomStringConvertible {
    public let description: String

    init(_ description: String) {
        self.description = description
    }

    /// How to turn SPI on, for the messages that need it.
    static let enableSPI =
        "add dtparam=spi=on to /boot/firmware/config.txt (or run sudo raspi-config nonint do_spi 0) and reboot"

    /// The failure of opening `path` with `code` (errno).
    static func opening(_ path: String, code: Int32, isSPI: Bool) -> StripError {
        switch code {
        case ENOENT, ENODEV, ENXIO:
            return isSPI
                ? StripError("no SPI device \(path): SPI is not enabled; \(enableSPI)")
                : StripError(
                    "no strip device \(path): the Pi 5's ws2812-pio overlay is not loaded; add "
                        + "dtoverlay=ws2812-pio,gpio=18,num_leds=N to /boot/firmware/config.txt and reboot, or use /dev/spidev0.0"
                )
        case EACCES, EPERM:
            let group = isSPI ? "spi" : "video"
            return StripError(
                "no permission to open \(path); add the user to the \(group) group (sudo usermod -aG \(group) $USER, "
                    + "then log in again), or give the service SupplementaryGroups=\(group)")
        case EBUSY:
            return StripError("\(path) is busy: another program drives the strip; stop it (lsof \(path) names it)")
        default:
            return StripError("cannot open the strip device \(path): \(String(cString: strerror(code)))")
        }
    }

    /// The device exists but is a plain file (a write as root while SPI was off made it).
    static func notADevice(_ path: String, isSPI: Bool) -> StripError {
        StripError(
            "\(path) is a plain file, not a device"
                + (isSPI
                    ? " (something wrote to it while SPI was off): SPI is not enabled; delete the file (sudo rm \(path)), \(enableSPI)"
                    : ": the ws2812-pio overlay is not loaded; delete the file and add dtoverlay=ws2812-pio,… to /boot/firmware/config.txt")
        )
    }
}

/// A strip only on the page and in the status (`receiver.strip.device: virtual`): to choose an
/// effect before a strip is wired. Writes nothing.
public final class VirtualStripDevice: StripDevice {
    public let path = StripSettings.virtualDevice
    public var notes: [String] { ["virtual strip: pixels only on the page"] }
    public var appliesGamma: Bool { false }

    public init() {}

    public func write(rgb: [UInt8]) throws(StripError) {}

    public func close() {}
}

/// Opens `path` without ever creating it (as root, a write to a missing `/dev/spidev0.0` would make
/// a plain file) and checks that it is a character device; the open descriptor.
func openCharacterDevice(_ path: String, isSPI: Bool) throws(StripError) -> Int32 {
    let fd = open(path, O_RDWR | O_CLOEXEC | O_NOCTTY)
    guard fd >= 0 else { throw StripError.opening(path, code: errno, isSPI: isSPI) }
    var status = stat()
    guard fstat(fd, &status) == 0, status.st_mode & S_IFMT == S_IFCHR else {
        Glibc.close(fd)
        throw StripError.notADevice(path, isSPI: isSPI)
    }
    return fd
}
