import LightOrganCore
import LightOrganServices
import Logging
import ServiceLifecycle

/// Starts the lighting targets of one side, with a DNS-SD search for each `ddp://auto` (or
/// `sacn://auto`, `artnet://auto`) target, which runs as a service beside the command's own.
func startLighting(
    _ patches: [LightingPatch], role: String, settings: Settings, logger: Logger
) throws -> (outputs: LightingOutputs?, services: [ServiceGroupConfiguration.ServiceConfiguration]) {
    for warning in settings.warnings { logger.warning("\(warning)") }
    guard !patches.isEmpty else { return (nil, []) }
    var locators: [String: DiscoveryLocator] = [:]
    for patch in patches where patch.target.isDiscovered && locators[patch.target.deviceName] == nil {
        do {
            locators[patch.target.deviceName] = try DiscoveryLocator(wanted: patch.target.deviceName, logger: logger, service: .wled)
        } catch {
            throw Failure.runtime("\(error); or write the WLED device's address instead of auto (\(patch.target.kind)://192.168.1.50)")
        }
    }
    let outputs = LightingOutputs(patches, role: role, releaseAfter: settings.lighting.releaseAfter, logger: logger) { target in
        guard target.isDiscovered, let locator = locators[target.deviceName] else { return nil }
        return { locator.current?.host }
    }
    return (outputs, locators.values.map { .init(service: $0) })
}
