import LightOrganCore

/// Opens the audio source that `sender.input` names.
enum AudioSourceFactory {
    static func open(_ choice: AudioInputChoice) throws -> any AudioSource {
        switch choice {
        case .demo:
            return DemoGroove()
        case .wavFile(let path):
            do {
                return try WAVFile(path: path)
            } catch {
                throw Failure.badSetting("sender.input: \(error.description)")
            }
        }
    }
}
