import Foundation
import LightOrganCore
import Logging
import NIOCore
import NIOPosix

/// A sine at `frequency` Hz, mono 44.1 kHz, amplitude 0.5.
struct Tone: AudioSource {
    let format = AudioFormat(sampleRate: 44_100, channels: 1)
    let frequency: Double
    private var index = 0

    init(frequency: Double) { self.frequency = frequency }

    mutating func read(frames: Int) -> [Float] {
        defer { index += frames }
        return (index..<index + frames).map { Float(0.5 * sin(2 * .pi * frequency * Double($0) / 44_100)) }
    }
}

extension AnalysisParameters {
    /// The level response, for tests that check routing with steady tones: it shows a steady tone as
    /// a steady lamp (the default dance response flashes its onset only).
    static var steadyLamps: AnalysisParameters {
        var parameters = AnalysisParameters()
        parameters.response = .level
        return parameters
    }
}

let quietLogger: Logger = {
    var logger = Logger(label: "test")
    logger.logLevel = .critical
    return logger
}()

/// Polls `condition` every 10 ms until it holds or `timeout` passes; returns whether it held.
func eventually(within timeout: Duration = .seconds(5), _ condition: () -> Bool) async -> Bool {
    let deadline = ContinuousClock.now + timeout
    while ContinuousClock.now < deadline {
        if condition() { return true }
        try? await Task.sleep(for: .milliseconds(10))
    }
    return condition()
}

/// Whether a TCP socket listens on `port` on this machine (the kernel's /proc/net/tcp and tcp6, state
/// 0A): a test starts its sender once the receiver it started listens, without connecting to it.
func isListening(port: Int) -> Bool {
    let local = String(format: ":%04X", port)
    return ["/proc/net/tcp", "/proc/net/tcp6"].contains { path in
        guard let table = try? String(contentsOfFile: path, encoding: .utf8) else { return false }
        return table.split(separator: "\n").dropFirst().contains { line in
            let fields = line.split(separator: " ")
            return fields.count > 3 && fields[1].hasSuffix(local) && fields[3] == "0A"
        }
    }
}

/// Raw PCM of a sine: s16le, stereo (both channels equal), amplitude 12000 (about −8.7 dBFS).
func stereoTone(frequency: Double, seconds: Double, rate: Double) -> Data {
    var data = Data()
    for index in 0..<Int(seconds * rate) {
        let value = Int16(12_000 * sin(2 * .pi * frequency * Double(index) / rate))
        withUnsafeBytes(of: value.littleEndian) { data.append(contentsOf: Array($0) + Array($0)) }
    }
    return data
}

/// A bare TCP client that writes whatever bytes it is given: an old app, a flood, a stall.
struct RawClient {
    let channel: any Channel

    static func connect(port: Int) async throws -> RawClient {
        let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .connect(host: "127.0.0.1", port: port).get()
        return RawClient(channel: channel)
    }

    func write(_ bytes: [UInt8]) async throws {
        try await channel.writeAndFlush(ByteBuffer(bytes: bytes))
    }

    func close() async throws { try await channel.close() }

    /// False once either side closed the connection.
    var isOpen: Bool { channel.isActive }
}
