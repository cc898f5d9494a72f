public import LightOrganCore

/// Opens the audio input that `sender.input` names.
public enum AudioInputs {
    /// The source for `settings.input`, opened and checked.
    ///
    /// - Throws: ``AudioInputError`` (device, server, stdin) or ``WAVFileError`` (file), one line each.
    public static func open(_ settings: SenderSettings) throws -> any AudioSource {
        switch settings.input {
        case .demo:
            return DemoGroove()
        case .wavFile(let path):
            return try WAVFile(path: path)
        case .standardInput:
            return RawPCMInput(
                descriptor: 0, sampleRate: settings.rawRate, channels: settings.rawChannels,
                sampleFormat: settings.rawFormat)
        case .auto:
            return try MonitorInput(purpose: "auto", delay: settings.delay)
        case .monitor:
            return try MonitorInput(purpose: "monitor", delay: settings.delay)
        case .alsa(let name):
            return try ALSACapture(name: name)
        }
    }
}
