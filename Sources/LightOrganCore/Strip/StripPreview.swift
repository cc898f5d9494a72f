/// The strip as the page draws it: at most ``maximumPixels`` pixels, each the average of the
/// strip's pixels it stands for (a phone shows no more; a long strip's frame stays small).
public enum StripPreview {
    /// Pixels the page gets at most.
    public static let maximumPixels = 150

    /// `rgb` (3 bytes a pixel) reduced to at most ``maximumPixels`` pixels by averaging runs.
    public static func reduce(_ rgb: [UInt8]) -> [UInt8] {
        let pixels = rgb.count / 3
        guard pixels > maximumPixels else { return rgb }
        var out = [UInt8](repeating: 0, count: 3 * maximumPixels)
        for shown in 0..<maximumPixels {
            let first = shown * pixels / maximumPixels
            let end = max(first + 1, (shown + 1) * pixels / maximumPixels)
            for channel in 0..<3 {
                var sum = 0
                for pixel in first..<end { sum += Int(rgb[3 * pixel + channel]) }
                out[3 * shown + channel] = UInt8((sum + (end - first) / 2) / (end - first))
            }
        }
        return out
    }
}
