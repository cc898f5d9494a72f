import NIOCore
import NIOPosix

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Socket options both ends set so that a dead peer is noticed within seconds, not hours.
///
/// - Keepalive: after 2 s without traffic, a probe every second; 3 unanswered probes close the
///   connection (a laptop that went to sleep mid-stream: about 5 s on the receiver).
/// - TCP_USER_TIMEOUT: data unacknowledged for 5 s closes the connection (the sender's side of
///   the same, where data is always in flight and keepalive never starts).
/// - TCP_NODELAY: a 3-byte frame leaves at once instead of waiting for more.
/// - The sender's socket also gets TCP_NOTSENT_LOWAT 1: the kernel takes a frame (sent with
///   `MSG_EOR`) only when nothing written before is still waiting to leave (``FrameSocket``).
enum SocketTuning {
    /// Seconds of silence before the first keepalive probe.
    static let keepAliveIdle: SocketOptionValue = 2
    /// Seconds between probes.
    static let keepAliveInterval: SocketOptionValue = 1
    /// Unanswered probes that close the connection.
    static let keepAliveProbes: SocketOptionValue = 3
    /// Milliseconds data may stay unacknowledged before the connection is closed.
    static let userTimeoutMilliseconds: SocketOptionValue = 5000

    /// `(option, value)` pairs for a connected TCP socket.
    static var connectionOptions: [(ChannelOptions.Types.SocketOption, SocketOptionValue)] {
        var options: [(ChannelOptions.Types.SocketOption, SocketOptionValue)] = [
            (.init(level: .tcp, name: .tcp_nodelay), 1),
            (.init(level: .socket, name: .so_keepalive), 1),
        ]
        #if os(Linux)
        let tcp = SocketOptionLevel(IPPROTO_TCP)
        options += [
            (.init(level: tcp, name: TCP_KEEPIDLE), keepAliveIdle),
            (.init(level: tcp, name: TCP_KEEPINTVL), keepAliveInterval),
            (.init(level: tcp, name: TCP_KEEPCNT), keepAliveProbes),
            (.init(level: tcp, name: TCP_USER_TIMEOUT), userTimeoutMilliseconds),
        ]
        #endif
        return options
    }

    /// Sets ``connectionOptions`` and TCP_NOTSENT_LOWAT 1 on the sender's socket `descriptor`.
    static func applySenderOptions(to descriptor: CInt) {
        var options = connectionOptions.map { (level: CInt($0.0.level), name: CInt($0.0.name), value: CInt($0.1)) }
        #if os(Linux)
        options.append((CInt(IPPROTO_TCP), CInt(TCP_NOTSENT_LOWAT), 1))
        #endif
        for option in options {
            var value = option.value
            setsockopt(descriptor, option.level, option.name, &value, socklen_t(MemoryLayout<CInt>.size))
        }
    }
}

extension ServerBootstrap {
    /// Sets ``SocketTuning/connectionOptions`` on every accepted connection.
    func tunedForFrames() -> ServerBootstrap {
        SocketTuning.connectionOptions.reduce(self) { $0.childChannelOption($1.0, value: $1.1) }
    }
}
