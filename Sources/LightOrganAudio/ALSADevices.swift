import CALSA
import CALSAShim

#if canImport(Glibc)
import Glibc
#endif

/// What alsa-lib says about its PCMs, for the one-line errors of ``ALSACapture`` and ``ALSAPlayback``.
enum ALSADevices {
    /// Names and descriptions of the PCMs from alsa-lib's name hints, but `null` and those that only
    /// go the other way (`IOID` equal to `otherDirection`: `Output` for capture, `Input` for playback).
    static func named(excluding otherDirection: String) -> [(name: String, description: String)] {
        lightorgan_alsa_quiet()
        var hints: UnsafeMutablePointer<UnsafeMutableRawPointer?>?
        guard snd_device_name_hint(-1, "pcm", &hints) >= 0, let hints else { return [] }
        defer { snd_device_name_free_hint(hints) }
        var devices: [(String, String)] = []
        var cursor = hints
        while let hint = cursor.pointee {
            func value(_ id: String) -> String? {
                guard let raw = snd_device_name_get_hint(hint, id) else { return nil }
                defer { free(raw) }
                return String(cString: raw)
            }
            if let name = value("NAME"), value("IOID") != otherDirection, name != "null" {
                let description = (value("DESC") ?? "").split(separator: "\n").joined(separator: ", ")
                devices.append((name, description))
            }
            cursor += 1
        }
        return devices
    }

    /// After `snd_pcm_readi` or `snd_pcm_writei` returned the error `code` on `pcm`: recovers from an
    /// xrun (returning true: counted by the caller), a suspend or a signal, so the caller retries;
    /// anything else, or a recovery that fails, throws one line naming `device` and what it was `doing`.
    static func recover(_ pcm: OpaquePointer, from code: CInt, device: String, doing: String) throws -> Bool {
        guard code == -EPIPE || code == -ESTRPIPE || code == -EINTR else {
            throw AudioInputError("\(device): \(doing) failed (\(String(cString: snd_strerror(code))))")
        }
        guard snd_pcm_recover(pcm, code, 1) >= 0 else {
            throw AudioInputError("\(device): cannot recover from \(String(cString: snd_strerror(code)))")
        }
        return code == -EPIPE
    }

    /// Why `snd_pcm_open` failed with `code`, in words, with alsa-lib's own last message in brackets;
    /// `busy` says what to do when another program holds the device.
    static func openFailure(_ code: CInt, busy: String) -> String {
        let detail = String(cString: lightorgan_alsa_last_message())
        let reason: String
        switch -code {
        case EBUSY: reason = "is busy (\(busy))"
        case ENOENT, ENODEV, ENXIO: reason = "does not exist"
        case EACCES, EPERM: reason = "may not be opened by this user (join the audio group)"
        default: reason = "cannot be opened (\(String(cString: snd_strerror(code))))"
        }
        return reason + (detail.isEmpty ? "" : " [\(detail)]")
    }
}

/// The sound devices this machine has, as the settings name them.
public enum SoundDevices {
    /// Every capture device alsa-lib lists by card (`plughw:CARD=Device,DEV=0`: a USB microphone, a line-in HAT),
    /// for the sound sources Home Assistant offers; the card's own rate and format are converted by `plughw`.
    public static func capture() -> [String] {
        ALSADevices.named(excluding: "Output").map(\.name).filter { $0.hasPrefix("plughw:CARD=") }
    }
}
