public import LightOrganCore
import LightOrganPOSIX

/// The receiver's own sound from an ALSA capture device (`receiver.sound: hw:1,0`): a USB
/// microphone or a line-in HAT, analysed and not played (the room plays it already). Reads block
/// for the device's periods; the audio never pauses.
public final class CaptureSoundInput: OwnSoundInput, @unchecked Sendable {
    // @unchecked Sendable: the capture is read by one thread; `close` only sets a flag it checks.
    public var format: AudioFormat { capture.format }
    public let label: String
    private let capture: ALSACapture
    private let closed = ThreadCondition()
    private var isClosed = false

    /// Opens `device` for capture (see ``ALSACapture``).
    public init(device: String) throws {
        do {
            capture = try ALSACapture(name: device, preferredRate: 44_100)
        } catch {
            throw AudioInputError("receiver.sound = \(device): \(error)")
        }
        label = "line-in \(device)"
    }

    public func read(frames: Int, timeoutMilliseconds: Int) throws -> [Int16]? {
        guard !closed.withLock({ isClosed }) else { return [] }
        let samples = try capture.read(frames: min(frames, capture.periodFrames * 2))
        return samples.map { Int16((max(-1, min(1, $0)) * 32767).rounded()) }
    }

    public func close() {
        closed.withLock { isClosed = true }
    }
}
