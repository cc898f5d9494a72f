/// Converts interleaved 16-bit sample frames from one rate to another by linear interpolation between
/// neighbouring frames, block after block with no seam: a phone's Bluetooth stream at 48 kHz into the receiver's
/// 44.1 kHz sound path (BlueALSA's ALSA plugin would otherwise renegotiate the codec with the phone, which drops
/// the phone's stream).
///
/// Linear interpolation keeps the level and the bands the lamps see; it dulls the top octave of what is played a
/// little (−1.3 dB at 10 kHz, −2.9 dB at 15 kHz, 48 → 44.1 kHz) and folds back a little of what lies above the
/// output's Nyquist frequency.
public struct RateConverter: Sendable {
    /// Frames per second in and out.
    public let inputRate: Double
    public let outputRate: Double
    public let channels: Int
    /// Where the next output frame lies, in input frames from the first frame of the next block (−1…0: between
    /// the previous block's last frame, ``previous``, and the next block's first).
    private var position = 0.0
    private var previous: [Int16]

    public init(inputRate: Double, outputRate: Double, channels: Int) {
        (self.inputRate, self.outputRate, self.channels) = (inputRate, outputRate, channels)
        previous = [Int16](repeating: 0, count: channels)
    }

    /// The frames of `block` (interleaved, `channels` to a frame) at ``outputRate``.
    public mutating func convert(_ block: [Int16]) -> [Int16] {
        let frames = block.count / channels
        guard frames > 0 else { return [] }
        let step = inputRate / outputRate
        var output: [Int16] = []
        output.reserveCapacity(Int(Double(frames) / step + 2) * channels)
        while position < Double(frames - 1) {
            let index = Int(position.rounded(.down))
            let fraction = position - Double(index)
            for channel in 0..<channels {
                let from = index < 0 ? Double(previous[channel]) : Double(block[index * channels + channel])
                let to = Double(block[(index + 1) * channels + channel])
                output.append(Int16((from + (to - from) * fraction).rounded()))
            }
            position += step
        }
        position -= Double(frames)
        previous = Array(block[(frames - 1) * channels..<frames * channels])
        return output
    }
}
