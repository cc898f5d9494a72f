import FoundationEssentials
public import LightOrganCore
public import LightOrganNetwork
public import Logging

/// The lighting targets of one side (`sender.hosts` entries with a scheme, or `receiver.forward`),
/// each driven by its own ``LightingTransmitter``.
public struct LightingOutputs: Sendable {
    /// One per target, in the order of the settings.
    public let transmitters: [LightingTransmitter]

    /// Starts a transmitter for every patch, sending as this machine's `role` (`send`,
    /// `receive`); `locate` gives the host of a target found by DNS-SD (`ddp://auto`).
    public init(
        _ patches: [LightingPatch], role: String, releaseAfter: Double, logger: Logger,
        locate: (LightingPatch) -> (@Sendable () -> [String])? = { _ in nil }
    ) {
        let source = LightingSource(cid: Self.stableIdentifier(role: role), name: Self.sourceName(role: role))
        transmitters = patches.map { patch in
            LightingTransmitter(
                patch: patch, source: source, releaseAfter: .milliseconds(Int64(releaseAfter * 1000)), logger: logger,
                locate: locate(patch))
        }
    }

    /// Shows `frame` on every target; never waits for the network.
    public func show(_ frame: LevelFrame) {
        for transmitter in transmitters { transmitter.show(frame) }
    }

    /// Darkens every target and terminates its streams at once, all before any waits, then lets
    /// their threads end (waiting 50 ms at most, however many targets and whatever they do).
    public func stop() {
        for transmitter in transmitters { transmitter.beginStop() }
        let deadline = MonotonicClock.elapsed() + LightingTransmitter.stopWait
        for transmitter in transmitters { transmitter.endStop(waitingUntil: deadline) }
    }

    /// The patch check: every fixture and part of every target lit alone at full, in turn, for
    /// `seconds`, then dark for a quarter of that; `say` names each (`wash bass: sACN universe 1,
    /// channel 1 at 10.0.0.60`) as it lights. Ends dark; throws CancellationError when cancelled
    /// (dark too).
    public func checkPatch(seconds: Double, say: @Sendable (String) -> Void) async throws {
        defer { for transmitter in transmitters { transmitter.check(nil) } }
        for transmitter in transmitters {
            for step in PatchCheck(transmitter.patch).steps {
                say(step.label)
                transmitter.check(step)
                try await Task.sleep(for: .milliseconds(Int64(seconds * 1000)))
                transmitter.check(nil)
                try await Task.sleep(for: .milliseconds(Int64(seconds * 250)))
            }
        }
    }

    /// `lightorgan send on laptop` (the sACN source name receivers show).
    static func sourceName(role: String) -> String {
        "lightorgan \(role) on \(ProcessInfo.processInfo.hostName.split(separator: ".").first.map(String.init) ?? "?")"
    }

    /// The same CID on every start of `role` on this machine: derived from `/etc/machine-id` (the
    /// systemd machine identity; D-Bus's copy, else the host name, where it is missing).
    static func stableIdentifier(role: String) -> [UInt8] {
        let machine =
            ["/etc/machine-id", "/var/lib/dbus/machine-id"].lazy.compactMap {
                try? String(contentsOfFile: $0, encoding: .utf8).trimmingWhitespace()
            }.first { !$0.isEmpty } ?? ProcessInfo.processInfo.hostName
        return LightingSource.stableIdentifier(machine: machine, role: role)
    }
}

/// A ``LevelOutput`` that shows every frame on the receiver's own lamps and passes it on to the
/// lighting targets of `receiver.forward`: the same frames, timeouts and lamps-off as the lines.
/// A lighting target never delays the lines: its ``LightingTransmitter`` never waits.
struct ForwardingOutput: LevelOutput {
    var output: any LevelOutput
    let lighting: LightingOutputs

    mutating func show(_ frame: LevelFrame) throws {
        // The lines first; the lighting targets after, whatever the lines said.
        defer { lighting.show(frame) }
        try output.show(frame)
    }

    mutating func show(_ frame: LevelFrame, look: LookCue) throws {
        defer { lighting.show(frame) }
        try output.show(frame, look: look)
    }

    mutating func shutDown() {
        output.shutDown()
        lighting.stop()
    }

    mutating func showCheck(_ check: OutputCheck?) throws { try output.showCheck(check) }

    func seenLevels(after frame: LevelFrame) -> LevelFrame { output.seenLevels(after: frame) }

    var strips: [StripDescription] { output.strips }

    func stripPixels() -> [UInt8] { output.stripPixels() }

    mutating func apply(_ change: OutputChange) { output.apply(change) }
}
