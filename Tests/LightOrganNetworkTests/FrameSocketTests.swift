import LightOrganCore
import LightOrganNetwork
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// A plain listening socket on 127.0.0.1 whose accepted connections the test reads (or not) itself;
/// it closes them when it goes.
private final class PlainListener {
    private(set) var descriptor: CInt
    let port: Int
    private var accepted: [CInt] = []

    /// `receiveBuffer`: SO_RCVBUF of the accepted connection (small: its window closes soon).
    init(receiveBuffer: CInt? = nil) throws {
        let listening = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        if var size = receiveBuffer { setsockopt(listening, SOL_SOCKET, SO_RCVBUF, &size, 4) }
        guard let bound = bindToLoopback(listening), listen(listening, 1) == 0 else {
            close(listening)
            throw ListenFailed()
        }
        descriptor = listening
        port = bound
    }

    struct ListenFailed: Error {}

    func accept() -> CInt {
        let connection = Glibc.accept(descriptor, nil, nil)
        accepted.append(connection)
        return connection
    }

    /// A ``FrameSocket`` connected to a new listener (to `host`, which must reach 127.0.0.1), and
    /// the listener's end of the connection.
    static func connected(receiveBuffer: CInt? = nil, host: String = "127.0.0.1") throws -> (
        listener: PlainListener, socket: FrameSocket, connection: CInt
    ) {
        let listener = try PlainListener(receiveBuffer: receiveBuffer)
        let socket = try FrameSocket.connect(host: host, port: listener.port)
        return (listener, socket, listener.accept())
    }

    /// Closes the accepted connections, as a receiver that goes away.
    func dropConnections() {
        for connection in accepted { close(connection) }
        accepted = []
    }

    /// Everything the connection holds now, without waiting.
    static func drain(_ connection: CInt) -> [UInt8] {
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = recv(connection, &chunk, chunk.count, Int32(MSG_DONTWAIT))
            guard count > 0 else { return bytes }
            bytes += chunk[..<count]
        }
    }

    /// Stops listening: connecting to the port is refused from now on.
    func stop() {
        dropConnections()
        if descriptor >= 0 { close(descriptor) }
        descriptor = -1
    }

    deinit { stop() }
}

@Suite("The sender's frame socket")
struct FrameSocketTests {
    @Test("with the way clear, every frame goes out at once, whole")
    func clearWay() throws {
        let (listener, socket, connection) = try PlainListener.connected()
        for value in UInt8(1)...5 { socket.send(LevelFrame(bass: value, mid: 0, treble: value)) }
        usleep(50_000)
        #expect(PlainListener.drain(connection) == [1, 0, 1, 2, 0, 2, 3, 0, 3, 4, 0, 4, 5, 0, 5])
        #expect(socket.sent == 5)
        #expect(socket.dropped == 0)
        #expect(socket.remoteDescription == "127.0.0.1:\(listener.port)")
    }

    @Test(
        "behind a receiver that stops reading, at most one frame waits unsent, newer ones are dropped and counted, and the stream never splits a frame"
    )
    func newestWinsWhenStalled() throws {
        let (listener, socket, connection) = try PlainListener.connected(receiveBuffer: 4096)
        defer { listener.stop() }
        for index in 0..<20_000 { socket.send(LevelFrame(bass: UInt8(index % 251), mid: 7, treble: 9)) }
        let unsent = socket.unsentBytes ?? -1
        #expect(socket.dropped > 15_000, "the window closed and frames were dropped, not queued: \(socket.dropped)")
        #expect(unsent <= LevelFrame.byteCount, "at most one frame waits in the kernel: \(unsent) bytes")
        var received = PlainListener.drain(connection)
        usleep(20_000)
        received += PlainListener.drain(connection)
        socket.send(LevelFrame(bass: 200, mid: 201, treble: 202))
        usleep(50_000)
        received += PlainListener.drain(connection)
        #expect(received.count == socket.sent * LevelFrame.byteCount, "every frame counted as sent arrived, whole")
        #expect(Array(received.suffix(3)) == [200, 201, 202], "after the stall the newest frame goes out")
        #expect(
            stride(from: 1, to: received.count, by: 3).allSatisfy { received[$0] == 7 || received[$0] == 201 },
            "frames stay aligned")
    }

    @Test("a receiver that closes is noticed at the next frames; closed() says so")
    func receiverCloses() async throws {
        let (listener, socket, _) = try PlainListener.connected()
        listener.dropConnections()
        for _ in 0..<3 where socket.isOpen {
            socket.send(.off)
            usleep(20_000)
        }
        #expect(!socket.isOpen)
        #expect(await socket.closed() == "closed by the receiver")
    }

    @Test("finish sends the last frame after the others, then closes")
    func finish() throws {
        let (listener, socket, connection) = try PlainListener.connected()
        defer { listener.stop() }
        socket.send(LevelFrame(bass: 255, mid: 255, treble: 255))
        socket.finish(with: .off)
        #expect(!socket.isOpen)
        usleep(50_000)
        #expect(PlainListener.drain(connection) == [255, 255, 255, 0, 0, 0])
    }

    @Test("the connection has keepalive (2 s, 1 s, 3 probes), a 5 s user timeout, TCP_NODELAY and TCP_NOTSENT_LOWAT 1")
    func tuning() throws {
        let (listener, socket, _) = try PlainListener.connected(host: "localhost")
        defer { listener.stop() }
        func tcp(_ name: CInt) -> CInt? { socket.option(level: CInt(IPPROTO_TCP), name: name) }
        #expect(socket.option(level: SOL_SOCKET, name: SO_KEEPALIVE) == 1)
        #expect(tcp(TCP_KEEPIDLE) == 2)
        #expect(tcp(TCP_KEEPINTVL) == 1)
        #expect(tcp(TCP_KEEPCNT) == 3)
        #expect(tcp(TCP_USER_TIMEOUT) == 5000)
        #expect(tcp(TCP_NODELAY) == 1)
        #expect(tcp(TCP_NOTSENT_LOWAT) == 1)
    }

    @Test("a port nobody listens on: refused, with what to check")
    func refused() throws {
        let listener = try PlainListener()
        let port = listener.port
        listener.stop()
        #expect {
            try FrameSocket.connect(host: "127.0.0.1", port: port)
        } throws: { error in
            "\(error)"
                == "cannot connect to 127.0.0.1:\(port): connection refused; is `lightorgan receive` running there, on that port? (sender.host / sender.port)"
        }
    }

    @Test("an unknown host name says so")
    func unknownHost() throws {
        #expect {
            try FrameSocket.connect(host: "no-such-host.invalid", port: 8181)
        } throws: { error in
            "\(error)".hasPrefix(
                "cannot connect to no-such-host.invalid:8181: cannot resolve the host name (unknown host); check the name"
            )
        }
    }
}
