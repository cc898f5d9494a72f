import LightOrganCore
import LightOrganNetwork
import LightOrganServices
import NIOCore
import NIOPosix
import ServiceLifecycle
import Testing

/// A real sender and a real receiver, over a real TCP socket on 127.0.0.1.
@Suite("Sender to receiver over loopback")
struct LoopbackTests {
    func receiver(output: RecordingOutput, timeout: Double = 1) async throws -> ReceiverService {
        var settings = ReceiverSettings()
        settings.bind = "127.0.0.1"
        settings.port = 0
        settings.timeout = timeout
        return try await ReceiverService.bind(settings: settings, output: output, logger: quietLogger)
    }

    @Test("a tone sent by the sender lights the receiver's matching lamp only", arguments: [(60.0, Band.bass), (1000, .mid), (8000, .treble)])
    func toneReachesTheRightLamp(frequency: Double, band: Band) async throws {
        let output = RecordingOutput()
        let receiver = try await receiver(output: output)
        var settings = SenderSettings()
        settings.host = "127.0.0.1"
        settings.port = receiver.port
        let sender = SenderService(settings: settings, source: Tone(frequency: frequency), logger: quietLogger)
        let group = ServiceGroup(services: [receiver, sender], logger: quietLogger)
        try await withThrowingTaskGroup { tasks in
            tasks.addTask { try await group.run() }
            #expect(await eventually { output.frames.count >= 80 }, "frames arrived: \(output.frames.count)")
            await group.triggerGracefulShutdown()
            try await tasks.waitForAll()
        }
        let frames = output.frames
        let settled = frames.dropFirst(50).dropLast(1)
        #expect(!settled.isEmpty)
        for frame in settled {
            #expect(frame[band] >= 200, "\(frame)")
            for other in Band.allCases where other != band { #expect(frame[other] <= 10, "\(frame)") }
        }
        #expect(frames.last == .off, "the sender's goodbye is an all-off frame")
        #expect(output.isShutDown)
    }

    @Test("an old client that sends frames, then [13, 13, 13], then closes, leaves the lights off")
    func legacyClientLeavesLightsOff() async throws {
        let output = RecordingOutput()
        let receiver = try await receiver(output: output)
        try await withThrowingTaskGroup { tasks in
            tasks.addTask { try await receiver.run() }
            let link = try await FrameLink.connect(host: "127.0.0.1", port: receiver.port)
            try await link.channel.executeThenClose { _, outbound in
                // Written in odd pieces, as the iPhone client's short writes could.
                try await outbound.write(ByteBuffer(bytes: [200, 100]))
                try await outbound.write(ByteBuffer(bytes: [50, 13, 13, 13]))
            }
            #expect(await eventually { output.frames.count >= 3 })
            tasks.cancelAll()
        }
        #expect(output.frames == [LevelFrame(bass: 200, mid: 100, treble: 50), .legacyGoodbye, .off])
    }

    @Test("a sender that goes silent without closing leaves the lights off after the timeout")
    func silentSenderTimesOut() async throws {
        let output = RecordingOutput()
        let receiver = try await receiver(output: output, timeout: 0.2)
        try await withThrowingTaskGroup { tasks in
            tasks.addTask { try await receiver.run() }
            let link = try await FrameLink.connect(host: "127.0.0.1", port: receiver.port)
            let clock = ContinuousClock()
            let sent = clock.now
            try await link.channel.outbound.write(ByteBuffer(bytes: [255, 255, 255]))
            #expect(await eventually { output.frames.last == .off })
            let offAfter = clock.now - sent
            #expect(offAfter >= .milliseconds(200) && offAfter < .milliseconds(600), "off after \(offAfter)")
            #expect(output.frames == [LevelFrame(bass: 255, mid: 255, treble: 255), .off])
            try await link.channel.channel.close()
            tasks.cancelAll()
        }
    }

    @Test("garbage from the network is shown as frames, never crashes, and ends dark")
    func garbageIsHarmless() async throws {
        let output = RecordingOutput()
        let receiver = try await receiver(output: output)
        var generator = SystemRandomNumberGenerator()
        let garbage = (0..<30_001).map { _ in UInt8.random(in: 0...255, using: &generator) }
        try await withThrowingTaskGroup { tasks in
            tasks.addTask { try await receiver.run() }
            let link = try await FrameLink.connect(host: "127.0.0.1", port: receiver.port)
            try await link.channel.executeThenClose { _, outbound in
                try await outbound.write(ByteBuffer(bytes: garbage))
            }
            #expect(await eventually { output.frames.count == 10_001 })
            tasks.cancelAll()
        }
        #expect(output.frames.count == 10_001)
        #expect(output.frames.last == .off)
    }

    @Test("a sender started before its receiver connects once the receiver is up")
    func senderWaitsForReceiver() async throws {
        // Find a free port, then leave it closed for a while.
        let probe = try await FrameListener.bind(host: "127.0.0.1", port: 0)
        let port = probe.port
        try await probe.channel.channel.close()
        var settings = SenderSettings()
        settings.host = "127.0.0.1"
        settings.port = port
        let sender = SenderService(settings: settings, source: Tone(frequency: 60), logger: quietLogger)
        let output = RecordingOutput()
        try await withThrowingTaskGroup { tasks in
            tasks.addTask { try await sender.run() }
            try await Task.sleep(for: .milliseconds(600))
            var receiverSettings = ReceiverSettings()
            receiverSettings.bind = "127.0.0.1"
            receiverSettings.port = port
            let receiver = try await ReceiverService.bind(settings: receiverSettings, output: output, logger: quietLogger)
            tasks.addTask { try await receiver.run() }
            #expect(await eventually(within: .seconds(4)) { output.frames.count >= 10 })
            tasks.cancelAll()
        }
    }
}
