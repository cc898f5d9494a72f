import LightOrganCore
import LightOrganNetwork
import LightOrganServices
import Logging
import ServiceLifecycle

/// Starts the lighting targets of one side, with the searches their `auto` hosts need, which run
/// as services beside the command's own: DNS-SD for `ddp://auto` and `sacn://auto` (a WLED
/// device), ArtPoll for `artnet://auto` (every Art-Net node outputting the target's universes).
func startLighting(
    _ patches: [LightingPatch], role: String, settings: Settings, logger: Logger
) throws -> (outputs: LightingOutputs?, services: [ServiceGroupConfiguration.ServiceConfiguration]) {
    for warning in settings.warnings { logger.warning("\(warning)") }
    guard !patches.isEmpty else { return (nil, []) }
    var locators: [String: DiscoveryLocator] = [:]
    var directories: [String: ArtNetDirectory] = [:]
    for patch in patches where patch.target.isDiscovered {
        let target = patch.target
        if target.kind == .artnet {
            guard directories[target.interface] == nil else { continue }
            do {
                directories[target.interface] = try ArtNetDirectory(interface: target.interface, logger: logger)
            } catch {
                throw Failure.runtime("\(target): \(error)")
            }
        } else if locators[target.deviceName] == nil {
            do {
                locators[target.deviceName] = try DiscoveryLocator(
                    wanted: target.deviceName, logger: logger, service: .wled)
            } catch {
                throw Failure.runtime(
                    "\(error); or write the WLED device's address instead of auto (\(target.kind)://192.168.1.50)")
            }
        }
    }
    let outputs = LightingOutputs(patches, role: role, releaseAfter: settings.lighting.releaseAfter, logger: logger) {
        patch in
        let target = patch.target
        guard target.isDiscovered else { return nil }
        if target.kind == .artnet, let directory = directories[target.interface] {
            let universes = patch.universes
            return { directory.nodes(outputting: universes) }
        }
        guard let locator = locators[target.deviceName] else { return nil }
        return { locator.current.map { [$0.host] } ?? [] }
    }
    let services: [ServiceGroupConfiguration.ServiceConfiguration] =
        locators.values.map { .init(service: $0) } + directories.values.map { .init(service: $0) }
    return (outputs, services)
}
