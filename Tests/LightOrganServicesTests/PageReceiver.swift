import Foundation
import LightOrganCore
import LightOrganServices
import LightOrganTestSupport
import NIOCore
import NIOEmbedded

/// A receiver as its page sees it, built from its real parts — ``LampSwitchboard`` → ``DelayedOutput``
/// → ``LampTap`` → a ``RecordingOutput`` — on one embedded event loop, with its page's file in a
/// fresh temporary directory.
struct PageReceiver {
    /// The page's secret in these tests.
    static let secret = PageSecret(reading: "test-secret-0123456789")!
    /// The lines: bass on BCM 17 (pin 11), mid on 27 (pin 13), treble on 22 (pin 15).
    static let lines = [
        LampTap.Line(band: .bass, offset: 17), LampTap.Line(band: .mid, offset: 27),
        LampTap.Line(band: .treble, offset: 22),
    ]

    let output: RecordingOutput
    let loop = EmbeddedEventLoop()
    let tap: LampTap
    let delayed: DelayedOutput
    let switchboard: LampSwitchboard
    let control: ReceiverControl
    /// Where the page's settings are kept.
    let pageFile: String
    /// Senders' channels, closed by ``finish()``.
    let senders = EmbeddedSenders()

    /// - Parameters:
    ///   - settings: settings beside the defaults, key → value and source.
    ///   - rules: the switchboard's rules.
    ///   - pageFile: the page's file; nil: one in a fresh temporary directory.
    init(
        settings: [String: RawSetting] = [:], rules: ReceiverRules = ReceiverRules(), pageFile: String? = nil,
        strip: StripDescription? = nil
    ) throws {
        var raw: [String: RawSetting] = [:]
        for key in SettingsCatalog.keys { raw[key.name] = RawSetting(key.defaultValue, from: .builtInDefault) }
        raw.merge(settings) { _, new in new }
        self.pageFile =
            pageFile
            ?? FileManager.default.temporaryDirectory.appendingPathComponent("lightorgan-\(UUID())").path
            + "/page-settings.yaml"
        let live = LiveSettings(raw: raw, settings: try SettingsCatalog.resolve(raw), pageFile: self.pageFile)
        output = RecordingOutput(strip: strip)
        tap = LampTap(output: output, lines: Self.lines, maxBrightness: 100, eventLoop: loop)
        delayed = DelayedOutput(wrapping: tap, delay: .zero, eventLoop: loop) { _ in }
        switchboard = LampSwitchboard(output: delayed, rules: rules, logger: quietLogger)
        control = ReceiverControl(
            configuration: .init(live: live, secret: Self.secret, port: 4242, chip: nil, name: "pi"),
            switchboard: switchboard, delayed: delayed, tap: tap, logger: quietLogger)
    }

    /// Shows `frame` as a sender's (connection 1 from 192.168.1.20:50000), through the switchboard.
    func sendFrame(_ frame: LevelFrame) throws {
        let (sender, _) = try senders.connect(1)
        _ = switchboard.opened(sender)
        switchboard.arrived(frame, completed: 1, bytes: 3, on: sender)
    }

    /// Ends the test's receiver: closes the senders' channels and drops the timers still set on
    /// the event loop (a wiring check's end), as an embedded loop must be freed without any.
    func finish() {
        senders.finish()
        try? loop.syncShutdownGracefully()
    }

    /// The page's file as written, nil when there is none.
    var pageFileText: String? {
        FileManager.default.contents(atPath: pageFile).map { String(decoding: $0, as: UTF8.self) }
    }
}
