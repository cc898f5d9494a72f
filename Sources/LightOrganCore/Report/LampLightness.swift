#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// How bright a lamp looks: the CIE 1976 lightness L* (0…100) of the luminance a level gives.
///
/// A level 0…255 is driven as the PWM duty `(level / 255)^2.2` (``PWMSchedule/duty(forLevel:gamma:)``),
/// and the lamp's luminance is proportional to its duty. L* is the perceptual scale of that luminance:
/// equal steps of L* look equally large, 50 looks half as bright as 100, below about 20 reads as dark.
public enum LampLightness {
    /// L* (0…100) of a lamp driven at `level` with the receiver's gamma.
    public static func lightness(level: UInt8, gamma: Double = 2.2) -> Double {
        lightness(luminance: PWMSchedule.duty(forLevel: level, gamma: gamma))
    }

    /// L* (0…100) of a relative luminance `y` in 0…1 (1 = full brightness).
    public static func lightness(luminance y: Double) -> Double {
        y > 216.0 / 24389 ? 116 * cbrt(y) - 16 : y * 24389 / 27
    }
}
