import LightOrganCore

#if canImport(Glibc)
import Glibc
#endif

/// A blocking TCP connect with a time limit, for the threads that own a plain socket (the sender's
/// ``FrameSocket``, the receiver's ``SnapcastControl``).
enum TCPConnector {
    /// Connects to `host`:`port` (a name or an address, IPv4 or IPv6), trying each address the name resolves to
    /// within `timeout` in all; `tuning` is applied to each socket before it connects; `peer` says whom, for the
    /// error's advice. Blocks the calling thread.
    /// Returns the connected, non-blocking descriptor (close-on-exec).
    ///
    /// - Throws: ``NetworkError`` saying why (refused, unknown host, timed out) and what to check.
    static func connect(
        host: String, port: Int, peer: ConnectionPeer, timeout: Duration, tuning: (CInt) -> Void
    ) throws -> CInt {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        hints.ai_flags = AI_NUMERICSERV
        var list: UnsafeMutablePointer<addrinfo>?
        let resolved = getaddrinfo(host, String(port), &hints, &list)
        guard resolved == 0, let first = list else {
            throw NetworkError.cannotConnect(
                host: host, port: port, reason: "cannot resolve the host name (unknown host)", peer: peer)
        }
        defer { freeaddrinfo(first) }
        let deadline = ContinuousClock.now + timeout
        var failure = ETIMEDOUT
        var entry: UnsafeMutablePointer<addrinfo>? = first
        while let address = entry {
            entry = address.pointee.ai_next
            let remaining = deadline - ContinuousClock.now
            guard remaining > .zero else { break }
            switch attempt(address.pointee, within: remaining, tuning: tuning) {
            case .success(let descriptor):
                return descriptor
            case .failure(let attemptFailure):
                // A refusal says the most (the host is up, nothing listens there).
                if failure != ECONNREFUSED { failure = attemptFailure.code }
            }
        }
        throw NetworkError.cannotConnect(
            host: host, port: port, reason: NetworkError.errnoText(failure), peer: peer)
    }

    /// One non-blocking connect, waited for with `poll`; a connected descriptor or the errno.
    private static func attempt(_ address: addrinfo, within remaining: Duration, tuning: (CInt) -> Void)
        -> Result<CInt, ConnectFailure>
    {
        let descriptor = socket(
            address.ai_family, Int32(SOCK_STREAM.rawValue | SOCK_NONBLOCK.rawValue | SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { return .failure(ConnectFailure(code: errno)) }
        tuning(descriptor)
        if Glibc.connect(descriptor, address.ai_addr, address.ai_addrlen) != 0 {
            guard errno == EINPROGRESS else {
                let code = errno
                Glibc.close(descriptor)
                return .failure(ConnectFailure(code: code))
            }
            var poller = pollfd(fd: descriptor, events: Int16(POLLOUT), revents: 0)
            let milliseconds = pollMilliseconds(remaining)
            var ready: Int32
            repeat { ready = poll(&poller, 1, milliseconds) } while ready < 0 && errno == EINTR
            var code: CInt = ready == 0 ? ETIMEDOUT : 0
            if ready > 0 {
                var length = socklen_t(MemoryLayout<CInt>.size)
                getsockopt(descriptor, SOL_SOCKET, SO_ERROR, &code, &length)
            }
            guard code == 0 else {
                Glibc.close(descriptor)
                return .failure(ConnectFailure(code: code))
            }
        }
        return .success(descriptor)
    }

    /// `duration` as a `poll` timeout: whole milliseconds, rounded up, at least 1.
    static func pollMilliseconds(_ duration: Duration) -> Int32 {
        Int32(clamping: max(1, Int((duration / .milliseconds(1)).rounded(.up))))
    }

    private struct ConnectFailure: Error {
        var code: CInt
    }
}
