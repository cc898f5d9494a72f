import LightOrganCore
import LightOrganNetwork
import LightOrganServices
import NIOCore
import ServiceLifecycle
import Testing

#if canImport(Glibc)
import Glibc
import LightOrganTestSupport
#endif

/// A real sender and a real receiver, over a real TCP socket on 127.0.0.1.
@Suite("Sender to receiver over loopback")
struct LoopbackTests {
    /// A receiver on 127.0.0.1, on a port the kernel picks, with `configure` applied to its settings.
    func receiver(
        output: RecordingOutput, timeout: Double = 1, configure: (inout ReceiverSettings) -> Void = { _ in }
    ) async throws -> ReceiverService {
        var settings = ReceiverSettings()
        settings.bind = "127.0.0.1"
        settings.port = 0
        settings.timeout = timeout
        configure(&settings)
        return try await ReceiverService.bind(settings: settings, output: output, logger: quietLogger)
    }

    @Test(
        "a tone sent by the sender lights the receiver's matching lamp only",
        arguments: [(60.0, Band.bass), (1000, .mid), (8000, .treble)])
    func toneReachesTheRightLamp(frequency: Double, band: Band) async throws {
        let output = RecordingOutput()
        let receiver = try await receiver(output: output)
        var settings = SenderSettings()
        settings.host = "127.0.0.1"
        settings.port = receiver.port
        let sender = SenderService(
            settings: settings, analysis: .steadyLamps, source: Tone(frequency: frequency), logger: quietLogger)
        let senderGroup = ServiceGroup(services: [sender], logger: quietLogger)
        await withThrowingTaskGroup { tasks in
            tasks.addTask { try await receiver.run() }
            tasks.addTask { try await senderGroup.run() }
            #expect(
                await eventually(within: .seconds(20)) { output.frames.count >= 80 },
                "frames arrived: \(output.frames.count)")
            await senderGroup.triggerGracefulShutdown()
            #expect(await eventually { output.frames.last == .off })
            tasks.cancelAll()
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
            let client = try await RawClient.connect(port: receiver.port)
            // Written in odd pieces, as the iPhone client's short writes could.
            try await client.write([200, 100])
            try await client.write([50, 13, 13, 13])
            try await client.close()
            #expect(await eventually { output.frames.last == .off })
            tasks.cancelAll()
        }
        let frames = output.frames
        #expect(frames.suffix(2) == [.legacyGoodbye, .off])
        #expect(frames.dropLast(2).allSatisfy { $0 == LevelFrame(bass: 200, mid: 100, treble: 50) }, "\(frames)")
    }

    @Test("a sender that goes silent without closing leaves the lights off after the timeout")
    func silentSenderTimesOut() async throws {
        let output = RecordingOutput()
        let receiver = try await receiver(output: output, timeout: 0.2)
        try await withThrowingTaskGroup { tasks in
            tasks.addTask { try await receiver.run() }
            let client = try await RawClient.connect(port: receiver.port)
            let clock = ContinuousClock()
            let sent = clock.now
            try await client.write([255, 255, 255])
            #expect(await eventually { output.frames.last == .off })
            let offAfter = clock.now - sent
            #expect(offAfter >= .milliseconds(200) && offAfter < .milliseconds(600), "off after \(offAfter)")
            #expect(output.frames == [LevelFrame(bass: 255, mid: 255, treble: 255), .off])
            try await client.close()
            tasks.cancelAll()
        }
    }

    @Test("garbage from the network never crashes; a backlog shows only its newest frame; it ends dark")
    func garbageIsHarmless() async throws {
        let output = RecordingOutput()
        let receiver = try await receiver(output: output)
        var generator = SystemRandomNumberGenerator()
        let garbage = (0..<30_001).map { _ in UInt8.random(in: 1...255, using: &generator) }
        try await withThrowingTaskGroup { tasks in
            tasks.addTask { try await receiver.run() }
            let client = try await RawClient.connect(port: receiver.port)
            try await client.write(garbage)
            try await client.close()
            #expect(await eventually { output.frames.last == .off })
            tasks.cancelAll()
        }
        let frames = output.frames
        // 10,000 frames arrived in a few reads: each read shows only its newest.
        #expect(frames.count >= 2 && frames.count < 100, "\(frames.count) frames shown")
        #expect(
            frames.dropLast().last == LevelFrame(bass: garbage[29_997], mid: garbage[29_998], treble: garbage[29_999]))
        #expect(frames.last == .off)
    }

    @Test("a sender started before its receiver connects once the receiver is up")
    func senderWaitsForReceiver() async throws {
        // Find a free port, then leave it closed for a while.
        let probe = try await receiver(output: RecordingOutput())
        let port = probe.port
        await probe.listener.close()
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
            let receiver = try await ReceiverService.bind(
                settings: receiverSettings, output: output, logger: quietLogger)
            tasks.addTask { try await receiver.run() }
            #expect(await eventually(within: .seconds(15)) { output.frames.count >= 10 })
            tasks.cancelAll()
        }
    }

    @Test("a newer sender takes over the lights; when it leaves they go off and the older one drives again")
    func takeover() async throws {
        let output = RecordingOutput()
        let receiver = try await receiver(output: output)
        try await withThrowingTaskGroup { tasks in
            tasks.addTask { try await receiver.run() }
            let old = try await RawClient.connect(port: receiver.port)
            let new = try await RawClient.connect(port: receiver.port)
            let a = LevelFrame(bass: 10, mid: 0, treble: 0)
            let b = LevelFrame(bass: 20, mid: 0, treble: 0)
            for step in 0..<60 {  // 0.1 s of the old one alone, then 0.5 s of both, at 100 frames/s
                try await old.write(a.levels)
                if step >= 10 { try await new.write(b.levels) }
                try await Task.sleep(for: .milliseconds(10))
            }
            #expect(output.frames.first == a)
            #expect(output.frames.last == b, "the newer sender drives after streaming 0.25 s")
            let switches = zip(output.frames, output.frames.dropFirst()).filter { $0 != $1 }.count
            #expect(switches == 1, "no flicker between the two: \(switches) switches")
            try await new.close()
            #expect(await eventually { output.frames.last == .off })
            try await old.write(a.levels)
            #expect(await eventually { output.frames.last == a })
            try await old.close()
            tasks.cancelAll()
        }
    }

    @Test("a client outside receiver.allow is refused and shows nothing")
    func allowList() async throws {
        let output = RecordingOutput()
        let receiver = try await receiver(output: output) { $0.allow = [AddressRange("192.168.0.0/16")!] }
        try await withThrowingTaskGroup { tasks in
            tasks.addTask { try await receiver.run() }
            let client = try await RawClient.connect(port: receiver.port)
            try? await client.write([255, 255, 255])
            #expect(await eventually { !client.isOpen }, "the receiver closed the connection")
            try await Task.sleep(for: .milliseconds(100))
            #expect(output.frames.isEmpty)
            tasks.cancelAll()
        }
    }

    @Test("a client that sends 2 bytes then stalls changes nothing and is closed after the idle timeout")
    func stalledClientIsClosed() async throws {
        let output = RecordingOutput()
        let receiver = try await receiver(output: output) { $0.idleTimeout = 0.5 }
        try await withThrowingTaskGroup { tasks in
            tasks.addTask { try await receiver.run() }
            let connecting = ContinuousClock.now
            let client = try await RawClient.connect(port: receiver.port)
            try await client.write([255, 255])
            #expect(await eventually { !client.isOpen })
            // From before the connect (the receiver's clock starts at its accept, a little later) to
            // seeing the close; the sweep runs every 0.1 s, and a busy test machine adds its delays.
            let closedAfter = ContinuousClock.now - connecting
            #expect(
                closedAfter >= .milliseconds(500) && closedAfter < .milliseconds(1500), "closed after \(closedAfter)")
            #expect(output.frames.isEmpty)
            tasks.cancelAll()
        }
    }

    @Test("sender.hosts streams to every receiver; an absent one does not hold the others back")
    func severalReceivers() async throws {
        let outputs = [RecordingOutput(), RecordingOutput()]
        var receivers: [ReceiverService] = []
        for output in outputs { receivers.append(try await receiver(output: output)) }
        let absent = try await receiver(output: RecordingOutput())
        await absent.listener.close()
        var settings = SenderSettings()
        settings.hosts = ([absent] + receivers).map { Endpoint(host: "127.0.0.1", port: $0.port) }
        let sender = SenderService(
            settings: settings, analysis: .steadyLamps, source: Tone(frequency: 1000), logger: quietLogger)
        let senderGroup = ServiceGroup(services: [sender], logger: quietLogger)
        await withThrowingTaskGroup { tasks in
            for receiver in receivers { tasks.addTask { try await receiver.run() } }
            tasks.addTask { try await senderGroup.run() }
            #expect(await eventually(within: .seconds(20)) { outputs.allSatisfy { $0.frames.count >= 50 } })
            await senderGroup.triggerGracefulShutdown()
            #expect(await eventually { outputs.allSatisfy { $0.frames.last == .off } })
            tasks.cancelAll()
        }
        for output in outputs {
            #expect(output.frames.dropFirst(40).dropLast().allSatisfy { $0.mid > 200 })
            #expect(output.frames.last == .off)
        }
    }
}
