import FoundationEssentials
public import LightOrganCore
import LightOrganPOSIX

#if canImport(Glibc)
import Glibc
#endif

/// The receiver as a Bluetooth speaker (`receiver.sound: bluetooth`): a phone streams to the Pi over A2DP,
/// BlueZ (`bluetoothd`) and BlueALSA (`bluealsa`, Debian's `bluez-alsa-utils`) receive and decode it, and this
/// input captures what BlueALSA hands over through its ALSA plugin (`bluealsa:DEV=…,PROFILE=a2dp`) at the stream's
/// own rate, converted to 44.1 kHz stereo (``RateConverter``) when it is another (48 kHz).
///
/// **The adapter.** The first adapter BlueZ lists shows the receiver's name (`Alias`), and is left neither
/// discoverable nor pairable: a phone pairs only inside a ``PairingWindow`` (`lightorgan pair`); a trusted phone
/// connects whenever it likes. An adapter that is powered off is powered on.
///
/// **A phone.** While none streams, BlueZ and BlueALSA are looked at once a second: the first A2DP sink PCM
/// that a BlueALSA service (`org.bluealsa`, `org.bluealsa.NAME`) offers is opened, and read with a time limit
/// (a phone that pauses keeps its PCM open and sends nothing: a plain read would wait for ever). When the phone
/// leaves, the PCM fails: it is closed and the looking starts again. Reads return nil meanwhile, so the stream
/// pauses and the lamps go dark as for AirPlay.
///
/// **Faults.** No system bus, `bluetoothd` not running, no adapter, an adapter blocked by rfkill or that will not
/// power on, BlueALSA not running: each is said once in the log, one line with what to do, and shown in the
/// status (``details``) until it is mended; the receiver goes on with its other parts, the lamps dark. BlueALSA's
/// ALSA plugin missing is said at once (``init(name:log:)`` throws): it does not mend itself.
public final class BluetoothSpeaker: OwnSoundInput, @unchecked Sendable {
    // @unchecked Sendable: `capture`, `bus`, `preparedAdapter` and `nextLook` are the reading thread's alone;
    // `closed`, `fault` and `phone` change under `lock`.
    /// What BlueALSA's sound is converted to, whatever the codec's rate: 44.1 kHz, SBC's usual one.
    public static let format = AudioFormat(sampleRate: 44_100, channels: 2)
    public var format: AudioFormat { Self.format }
    public let label = "Bluetooth"
    /// The name phones show (the adapter's alias).
    public let name: String
    /// How often BlueZ and BlueALSA are looked at while no phone streams, nanoseconds.
    static let lookEveryNanoseconds: Int64 = 1_000_000_000
    /// The capture's period, frames (23 ms at 44.1 kHz; its buffer holds 8): BlueALSA hands a phone's
    /// packets over in bursts.
    static let periodFrames = 1024

    private let log: @Sendable (String) -> Void
    private let environment: [String: String]?
    private let lock = ThreadCondition()
    private var closed = false
    private var fault: String?
    private var phone: String?
    private var capture: ALSACapture?
    /// From the phone's rate to ``format``'s, when they differ.
    private var converter: RateConverter?
    private var bus: SystemBus?
    private var preparedAdapter: String?
    private var nextLook: Int64 = 0

    /// Checks that BlueALSA's ALSA plugin is installed; BlueZ and BlueALSA are looked for with the first read.
    /// `environment` is where the system bus's address is looked for (nil: this process's).
    ///
    /// - Throws: ``AudioInputError``, one line that says what to install.
    public init(
        name: String, environment: [String: String]? = nil, log: @escaping @Sendable (String) -> Void
    ) throws {
        guard Self.pluginInstalled() else {
            throw AudioInputError(
                "receiver.sound = bluetooth needs BlueZ and BlueALSA: sudo apt install bluez bluez-alsa-utils libasound2-plugin-bluez"
            )
        }
        (self.name, self.environment, self.log) = (PhoneName.shown(name), environment, log)
    }

    /// Whether BlueALSA's ALSA PCM plugin is where alsa-lib looks for plugins.
    static func pluginInstalled() -> Bool {
        var folders = ["/usr/lib/alsa-lib"]
        if let entries = opendir("/usr/lib") {
            defer { closedir(entries) }
            while let entry = readdir(entries) {
                let name = withUnsafeBytes(of: entry.pointee.d_name) {
                    String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self)
                }
                if name.hasSuffix("-linux-gnu") || name.hasSuffix("-linux-gnueabihf") {
                    folders.append("/usr/lib/\(name)/alsa-lib")
                }
            }
        }
        return folders.contains { access("\($0)/libasound_module_pcm_bluealsa.so", R_OK) == 0 }
    }

    /// `from Pixel 7 (AA:BB:CC:DD:EE:FF)` while a phone is connected, else what is wrong, else `waiting for a
    /// phone`.
    public var details: String? {
        lock.withLock {
            if let phone { return "from \(phone)" }
            return fault ?? "waiting for a phone"
        }
    }

    public func read(frames: Int, timeoutMilliseconds: Int) throws -> [Int16]? {
        let deadline = MonotonicClock.nanoseconds() + Int64(timeoutMilliseconds) * 1_000_000
        while true {
            if lock.withLock({ closed }) {
                closeCapture()
                bus?.close()
                return []
            }
            if let capture {
                let left = max(1, Int((deadline - MonotonicClock.nanoseconds()) / 1_000_000))
                do {
                    guard let samples = try capture.read(frames: frames, timeoutMilliseconds: left) else { return nil }
                    let block = samples.map { Int16((max(-1, min(1, $0)) * 32767).rounded()) }
                    return converter?.convert(block) ?? block
                } catch {
                    let who = lock.withLock { phone } ?? "the phone"
                    log("Bluetooth: \(who) stopped streaming (\(error)); waiting for a phone")
                    closeCapture()
                    nextLook = 0
                    return nil
                }
            }
            let now = MonotonicClock.nanoseconds()
            if now >= nextLook {
                nextLook = now + Self.lookEveryNanoseconds
                look()
                if capture != nil { continue }
            }
            guard now < deadline else { return nil }
            let until = min(deadline, nextLook)
            lock.withLock {
                while !closed, MonotonicClock.nanoseconds() < until { lock.wait(untilNanoseconds: until) }
            }
        }
    }

    public func close() {
        lock.withLock {
            closed = true
            lock.broadcast()
        }
    }

    private func closeCapture() {
        capture = nil
        lock.withLock { phone = nil }
    }

    /// Says `text` once (until another fault or none replaces it), and shows it in the status.
    private func said(_ text: String?) {
        let changed = lock.withLock {
            defer { fault = text }
            return fault != text
        }
        if changed, let text { log("Bluetooth: \(text)") }
    }

    /// Looks at BlueZ and BlueALSA once: prepares the adapter, opens a phone's PCM when one streams, or says
    /// what is wrong.
    private func look() {
        do {
            let bus = try self.bus ?? SystemBus(environment: environment)
            self.bus = bus
            try look(on: bus)
        } catch let error as SystemBusError where error.name == "closed" {
            bus = nil
            said("the system bus closed the connection: is dbus running?")
        } catch {
            bus?.close()
            bus = nil
            said("\(error)")
        }
    }

    private func look(on bus: SystemBus) throws {
        guard bus.hasOwner("org.bluez") else {
            preparedAdapter = nil
            said(BlueZAdapter.bluetoothdNotRunning)
            return
        }
        let objects = try bus.managedObjects("org.bluez", "/")
        let blocked = Rfkill.bluetoothBlocked()
        guard let (path, adapter) = BlueZAdapter.first(in: objects) else {
            preparedAdapter = nil
            said(BlueZAdapter.missing(blocked: blocked))
            return
        }
        let adapterName = BlueZAdapter.name(of: path)
        if adapter["Powered"]?.bool != true {
            if let blocked {
                said(
                    "Bluetooth adapter \(adapterName) is blocked by rfkill (\(blocked)): sudo rfkill unblock bluetooth")
                return
            }
            do {
                try bus.setProperty("org.bluez", path, "org.bluez.Adapter1", "Powered", .boolean(true))
                log("Bluetooth: adapter \(adapterName) was powered off; powered it on")
            } catch let error as SystemBusError where error.name == "org.bluez.Error.Busy" {
                return  // bluetoothd is powering it on itself (it has just started): looked at again in a second
            } catch {
                said(
                    "Bluetooth adapter \(adapterName) is powered off and does not power on (\(error)): sudo rfkill unblock bluetooth; bluetoothctl power on"
                )
                return
            }
        }
        if preparedAdapter != path {
            try bus.setProperty("org.bluez", path, "org.bluez.Adapter1", "Alias", .string(name))
            // A phone pairs only inside a pairing window (lightorgan pair); trusted phones connect any time.
            try? bus.setProperty("org.bluez", path, "org.bluez.Adapter1", "Discoverable", .boolean(false))
            try? bus.setProperty("org.bluez", path, "org.bluez.Adapter1", "Pairable", .boolean(false))
            preparedAdapter = path
            let address = adapter["Address"]?.text ?? "?"
            log(
                "Bluetooth: adapter \(adapterName) (\(address)) shows as \"\(name)\"; phones pair in a pairing window (lightorgan pair), trusted ones connect by themselves"
            )
        }
        let services =
            try bus.call(
                .call("org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus", "ListNames")
            ).first?.elements?.compactMap(\.text).filter { $0 == "org.bluealsa" || $0.hasPrefix("org.bluealsa.") } ?? []
        guard !services.isEmpty else {
            said(
                "BlueALSA is not running: sudo systemctl enable --now bluealsa (Debian's service, with -p a2dp-sink; see the Bluetooth article)"
            )
            return
        }
        for service in services.sorted() {
            let pcms = (try? bus.managedObjects(service, "/org/bluealsa")) ?? [:]
            for (_, interfaces) in pcms.sorted(by: { $0.key < $1.key }) {
                guard let pcm = interfaces["org.bluealsa.PCM1"], pcm["Transport"]?.text?.hasPrefix("A2DP") == true,
                    pcm["Mode"]?.text == "source", let device = pcm["Device"]?.text
                else { continue }
                let phoneInfo = objects[device]?["org.bluez.Device1"]
                let address = phoneInfo?["Address"]?.text ?? Self.address(ofDevice: device)
                let shown = PhoneName.shown(phoneInfo?["Alias"]?.text ?? phoneInfo?["Name"]?.text ?? address)
                let codec = pcm["Codec"]?.text ?? "?"
                let rate = pcm["Sampling"]?.integer ?? pcm["Rate"]?.integer ?? 0
                // At the stream's own rate: asked for another, BlueALSA's plugin has the phone set the codec up
                // anew, which drops the phone's stream; other rates are converted here.
                let pcmName = "bluealsa:DEV=\(address),PROFILE=a2dp,SRV=\(service)"
                do {
                    let opened = try ALSACapture(
                        name: pcmName, preferredRate: Int(rate > 0 ? rate : 44_100), periodFrames: Self.periodFrames)
                    guard opened.format.channels == Self.format.channels else {
                        said("\(shown) streams \(opened.format.channels) channel(s); only stereo is played")
                        return
                    }
                    capture = opened
                    converter =
                        opened.format.sampleRate == Self.format.sampleRate
                        ? nil
                        : RateConverter(
                            inputRate: opened.format.sampleRate, outputRate: Self.format.sampleRate,
                            channels: Self.format.channels)
                } catch {
                    said("cannot capture \(shown)'s stream from BlueALSA (\(error))")
                    return
                }
                said(nil)
                lock.withLock { phone = "\(shown) (\(address))" }
                log(
                    "Bluetooth: \(shown) (\(address)) connected, codec \(codec), \(rate) Hz, captured through \(service)"
                )
                return
            }
        }
        said(nil)
    }

    /// `AA:BB:CC:DD:EE:FF` of BlueZ's `/org/bluez/hci0/dev_AA_BB_CC_DD_EE_FF`.
    package static func address(ofDevice path: String) -> String {
        let last = path.split(separator: "/").last ?? ""
        return last.hasPrefix("dev_") ? String(last.dropFirst(4)).replacing("_", with: ":") : String(last)
    }
}

/// The kernel's rfkill switches (`/sys/class/rfkill/rfkill*/`): whether Bluetooth's is on.
package enum Rfkill {
    /// `soft` or `hard` when a Bluetooth radio is blocked that way, nil when none is.
    package static func bluetoothBlocked(root: String = "/sys/class/rfkill") -> String? {
        guard let entries = opendir(root) else { return nil }
        defer { closedir(entries) }
        while let entry = readdir(entries) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) {
                String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self)
            }
            guard name.hasPrefix("rfkill"), text("\(root)/\(name)/type") == "bluetooth" else { continue }
            if text("\(root)/\(name)/hard") == "1" { return "hard: a switch or the firmware" }
            if text("\(root)/\(name)/soft") == "1" { return "soft" }
        }
        return nil
    }

    private static func text(_ path: String) -> String? {
        guard let file = fopen(path, "r") else { return nil }
        defer { fclose(file) }
        var buffer = [UInt8](repeating: 0, count: 64)
        let got = fread(&buffer, 1, buffer.count, file)
        return String(decoding: buffer[0..<got], as: UTF8.self).trimmingWhitespace()
    }
}
