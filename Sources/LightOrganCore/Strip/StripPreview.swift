/// The strip as the page draws it: at most ``maximumPixels`` pixels, each channel the brightest of
/// the strip's pixels it stands for (a phone shows no more; a long strip's frame stays small; one
/// lit pixel, as the wiring check's runner, stays as bright as it is).
public enum StripPreview {
    /// Pixels the page gets at most.
    public static let maximumPixels = 150

    /// `rgb` (3 bytes a pixel) reduced to at most ``maximumPixels`` pixels, each the brightest of its run.
    public static func reduce(_ rgb: [UInt8]) -> [UInt8] {
        let pixels = rgb.count / 3
        guard pixels > maximumPixels else { return rgb }
        var out = [UInt8](repeating: 0, count: 3 * maximumPixels)
        for shown in 0..<maximumPixels {
            let first = shown * pixels / maximumPixels
            let end = max(first + 1, (shown + 1) * pixels / maximumPixels)
            for channel in 0..<3 {
                var brightest: UInt8 = 0
                for pixel in first..<end { brightest = max(brightest, rgb[3 * pixel + channel]) }
                out[3 * shown + channel] = brightest
            }
        }
        return out
    }
}
