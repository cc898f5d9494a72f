import Foundation
import LightOrganCore

/// Known signals for tests: sines, silence, bursts.
struct ToneSource: AudioSource {
    let format: AudioFormat
    /// Frequency, Hz.
    let frequency: Double
    /// Peak amplitude, full scale 1.
    let amplitude: Double
    private var index = 0

    init(frequency: Double, amplitude: Double = 0.5, sampleRate: Double = 44_100, channels: Int = 1) {
        self.format = AudioFormat(sampleRate: sampleRate, channels: channels)
        self.frequency = frequency
        self.amplitude = amplitude
    }

    mutating func read(frames: Int) -> [Float] {
        var samples: [Float] = []
        samples.reserveCapacity(frames * format.channels)
        for _ in 0..<frames {
            let value = Float(amplitude * sin(2 * .pi * frequency * Double(index) / format.sampleRate))
            samples.append(contentsOf: repeatElement(value, count: format.channels))
            index += 1
        }
        return samples
    }
}

/// Runs `source` through a ``FrameProducer`` at `fps` for `seconds` of audio with `response`;
/// returns every frame.
func analyse(
    _ source: any AudioSource, seconds: Double, fps: Int = 100, response: AnalysisParameters.Response = .dance
) throws -> [LevelFrame] {
    var parameters = AnalysisParameters.standard
    parameters.response = response
    var producer = FrameProducer(source: source, parameters: parameters)
    return try (1...Int(seconds * Double(fps))).compactMap { try producer.frame(upTo: Double($0) / Double(fps)) }
}
