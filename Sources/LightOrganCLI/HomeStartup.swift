import FoundationEssentials
import LightOrganAudio
import LightOrganCore
import LightOrganServices
import LightOrganSettings
import Logging

/// What `receive` prepares for Home Assistant when `mqtt.broker` is set: the receiver's kept id, its name, the
/// hardware it runs on and the capture devices it can offer as sound sources.
enum HomeStartup {
    /// The link's setup, or nil when MQTT is off.
    static func prepare(
        loaded: SettingsLoader.Loaded, pageFile: String, pagePort: Int?, environment: [String: String], logger: Logger
    ) -> HomeAssistantLink.Setup? {
        let settings = loaded.settings
        guard settings.mqtt.isEnabled else { return nil }
        let directory = StateDirectory.path(environment: environment)
        let idPath = directory + "/home-id"
        var id = (try? String(contentsOfFile: idPath, encoding: .utf8))?.trimmingWhitespace()
        if id.map(HomeIdentity.isID) != true {
            let made = HomeIdentity.makeID(random: UInt64.random(in: 0...UInt64.max))
            do {
                try StateDirectory.writePrivate(made + "\n", to: idPath)
                logger.info("mqtt: this receiver is lightorgan_\(made) to Home Assistant (kept in \(idPath))")
            } catch {
                // Not kept: Home Assistant would see a new device at the next start.
                logger.warning("mqtt: \(error); Home Assistant will see this receiver as a new device after a restart")
            }
            id = made
        }
        let host = PublisherService.hostName()
        let name = PublisherService.receiverName(configured: settings.receiver.name)
        let hardware =
            (try? String(contentsOfFile: "/proc/device-tree/model", encoding: .utf8))
            .map { $0.filter { $0 != "\0" }.trimmingWhitespace() } ?? ""
        let pageURL = pagePort.map { port in
            "https://\(host.isEmpty ? "localhost" : host + ".local")\(port == 443 ? "" : ":\(port)")/"
        }
        return HomeAssistantLink.Setup(
            settings: settings.mqtt,
            identity: HomeIdentity(
                id: id!, name: name, version: LightOrganVersion.current, hardware: hardware, pageURL: pageURL),
            captureDevices: SoundDevices.capture(), live: loaded.live(pageFile: pageFile))
    }
}
