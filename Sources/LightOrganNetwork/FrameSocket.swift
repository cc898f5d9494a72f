public import LightOrganCore
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// The sender's TCP connection to one receiver: a plain socket that the thread making the frames
/// writes to directly, so a frame costs that thread one `send(2)` and nothing else (no event
/// loop to wake, no buffers, no futures).
///
/// ``send(_:)`` never waits and never queues: the newest frame wins. The socket has
/// `TCP_NOTSENT_LOWAT` 1 and every frame is sent with `MSG_EOR`, so the kernel accepts a frame
/// only while everything written before has left the machine; otherwise `send` answers `EAGAIN`
/// and the frame is counted in ``dropped`` (the next one, a period later, is fresher anyway). So
/// at most one frame waits between the analysis and the wire however long the network stalls,
/// and the sender's memory stays flat. TCP_NODELAY, keepalive and a 5 s user timeout are on
/// (``SocketTuning``), so a receiver that vanished is noticed within seconds.
///
/// The receiver never writes; the connection is known to be gone when a `send` fails (a
/// receiver that closed answers the next frame with a reset), which ``closed()`` reports.
public final class FrameSocket: Sendable {
    /// The receiver's numeric address and port, for logs (`192.168.1.20:8181`).
    public let remoteDescription: String
    private let state: Mutex<State>

    private struct State {
        /// The descriptor; -1 once closed.
        var descriptor: CInt
        /// Bytes of a frame the kernel took only in part (never seen in practice with
        /// `MSG_EOR`, but a frame is never split on the wire): sent before anything else.
        var tail: [UInt8] = []
        /// Why it closed, once it has.
        var closedBecause: String?
        var waiters: [CheckedContinuation<String, Never>] = []
        /// Frames handed to the kernel, and frames dropped.
        var counts = DeliveryCounts()
    }

    private init(descriptor: CInt, remoteDescription: String) {
        self.state = Mutex(State(descriptor: descriptor))
        self.remoteDescription = remoteDescription
    }

    deinit {
        state.withLock { state in
            if state.descriptor >= 0 { Glibc.close(state.descriptor) }
        }
    }

    /// Connects to `host`:`port` (a name or an address, IPv4 or IPv6), trying each address the
    /// name resolves to within `timeout` in all. Blocks the calling thread until connected.
    ///
    /// - Throws: ``NetworkError`` saying why (refused, unknown host, timed out) and what to check.
    public static func connect(host: String, port: Int, timeout: Duration = .seconds(3)) throws -> FrameSocket {
        let descriptor = try TCPConnector.connect(
            host: host, port: port, peer: .receiver, timeout: timeout, tuning: SocketTuning.applySenderOptions(to:))
        return FrameSocket(descriptor: descriptor, remoteDescription: peerDescription(descriptor))
    }

    /// The peer's numeric address and port.
    private static func peerDescription(_ descriptor: CInt) -> String {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let named = withUnsafeMutablePointer(to: &storage) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { getpeername(descriptor, $0, &length) == 0 }
        }
        guard named else { return "?" }
        return NumericAddress.text(of: storage, length: length, withPort: true) ?? "?"
    }

    /// Hands `frame` to the kernel if everything before it has left the machine, else drops it;
    /// returns at once, from any thread. A failed send closes the socket (see ``closed()``).
    public func send(_ frame: LevelFrame) {
        state.withLock { state in
            guard state.descriptor >= 0 else { return }
            switch Self.write(frame, to: &state) {
            case .sent: state.counts.sent += 1
            case .dropped: state.counts.dropped += 1
            case .failed(let code): Self.close(&state, because: Self.lostReason(code))
            }
        }
    }

    private enum WriteResult {
        case sent, dropped
        case failed(CInt)
    }

    /// One `send(2)` of any unsent tail followed by `frame` (if any), without waiting.
    private static func write(_ frame: LevelFrame?, to state: inout State) -> WriteResult {
        let tailCount = state.tail.count
        var bytes = (UInt8(0), UInt8(0), UInt8(0), UInt8(0), UInt8(0))
        let total = withUnsafeMutableBytes(of: &bytes) { buffer in
            for (index, byte) in state.tail.enumerated() { buffer[index] = byte }
            guard let frame else { return tailCount }
            buffer[tailCount] = frame.bass
            buffer[tailCount + 1] = frame.mid
            buffer[tailCount + 2] = frame.treble
            return tailCount + LevelFrame.byteCount
        }
        var written: Int
        repeat {
            written = withUnsafeBytes(of: &bytes) {
                Glibc.send(state.descriptor, $0.baseAddress, total, Int32(MSG_DONTWAIT | MSG_NOSIGNAL | MSG_EOR))
            }
        } while written < 0 && errno == EINTR
        if written < 0 {
            return errno == EAGAIN || errno == EWOULDBLOCK ? .dropped : .failed(errno)
        }
        // Whatever part of a frame the kernel did not take must follow before anything else;
        // a frame not begun is dropped.
        let taken = written
        let unsentEnd = written < tailCount ? tailCount : total
        state.tail = withUnsafeBytes(of: &bytes) { Array($0[taken..<unsentEnd]) }
        return written < tailCount ? .dropped : .sent
    }

    /// Waits (up to `timeout`, blocking this thread) until the kernel takes `frame` after
    /// everything before it, then closes the connection; the last thing a receiver sees.
    public func finish(with frame: LevelFrame, timeout: Duration = .milliseconds(500)) {
        let deadline = ContinuousClock.now + timeout
        state.withLock { state in
            var pending: LevelFrame? = frame
            waiting: while state.descriptor >= 0, pending != nil || !state.tail.isEmpty {
                let remaining = deadline - ContinuousClock.now
                guard remaining > .zero else { break }
                // Writable here means everything written before has left (TCP_NOTSENT_LOWAT).
                var poller = pollfd(fd: state.descriptor, events: Int16(POLLOUT), revents: 0)
                let ready = poll(&poller, 1, TCPConnector.pollMilliseconds(remaining))
                if ready < 0, errno == EINTR { continue }
                guard ready > 0 else { break }
                switch Self.write(pending, to: &state) {
                case .sent: pending = nil
                case .dropped: continue
                case .failed: break waiting
                }
            }
            Self.close(&state, because: "finished")
        }
    }

    /// Closes the connection now (from any thread); frames sent afterwards are ignored.
    public func close() {
        state.withLock { Self.close(&$0, because: "closed by this sender") }
    }

    /// Waits until the connection is gone; says why.
    public func closed() async -> String {
        await withCheckedContinuation { waiter in
            let reason = state.withLock { state -> String? in
                if let reason = state.closedBecause { return reason }
                state.waiters.append(waiter)
                return nil
            }
            if let reason { waiter.resume(returning: reason) }
        }
    }

    /// Whether the socket is still open.
    public var isOpen: Bool { state.withLock { $0.descriptor >= 0 } }

    /// Frames handed to the kernel so far (``DeliveryCounts/sent``), and frames dropped because the
    /// one before had not left the machine yet (``DeliveryCounts/dropped``: the network stalled).
    public var counts: DeliveryCounts { state.withLock { $0.counts } }
    /// Frames handed to the kernel so far.
    public var sent: Int { counts.sent }
    /// Frames dropped because the one before had not left the machine yet.
    public var dropped: Int { counts.dropped }

    /// An integer socket option of the connection (tests check the tuning); nil once closed.
    package func option(level: CInt, name: CInt) -> CInt? {
        state.withLock { state in
            guard state.descriptor >= 0 else { return nil }
            var value: CInt = 0
            var length = socklen_t(MemoryLayout<CInt>.size)
            return getsockopt(state.descriptor, level, name, &value, &length) == 0 ? value : nil
        }
    }

    /// Bytes written to the socket that have not left the machine yet (tests); nil once closed.
    package var unsentBytes: Int? {
        state.withLock { state in
            var unsent: CInt = 0
            let siocoutqnsd: UInt = 0x894B  // linux/sockios.h
            guard state.descriptor >= 0, ioctl(state.descriptor, siocoutqnsd, &unsent) == 0 else { return nil }
            return Int(unsent)
        }
    }

    private static func close(_ state: inout State, because reason: String) {
        guard state.descriptor >= 0 else { return }
        Glibc.close(state.descriptor)
        state.descriptor = -1
        state.closedBecause = reason
        for waiter in state.waiters { waiter.resume(returning: reason) }
        state.waiters = []
    }

    private static func lostReason(_ code: CInt) -> String {
        switch code {
        case EPIPE, ECONNRESET: "closed by the receiver"
        case ETIMEDOUT: "no answer for 5 s: timed out"
        default: NetworkError.errnoText(code)
        }
    }
}
