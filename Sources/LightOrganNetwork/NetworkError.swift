import NIOCore
import NIOPosix

/// Whom a TCP connection is made to: what its failure advises to check.
enum ConnectionPeer: Sendable {
    /// A receiver, from the sender (sender.host, sender.port).
    case receiver
    /// A Snapcast server's control port, from a receiver that is a room of it (receiver.sound).
    case snapcastControl
}

/// A network failure a user can meet, said in one line with what to do about it.
public struct NetworkError: Error, CustomStringConvertible {
    public let description: String

    /// A connection to `peer` at `host`:`port` failed for `reason`; the advice names the setting that `peer`
    /// comes from.
    static func cannotConnect(host: String, port: Int, reason: String, peer: ConnectionPeer) -> NetworkError {
        let refused = reason.contains("refused")
        let unresolved = reason.contains("resolve") || reason.contains("unknown host")
        let advice: String
        switch peer {
        case .receiver:
            advice =
                refused
                ? "is `lightorgan receive` running there, on that port? (sender.host / sender.port)"
                : unresolved
                    ? "check the name in sender.host, or use the receiver's IP address"
                    : "is the receiver switched on and on this network? (sender.host / sender.port)"
        case .snapcastControl:
            advice =
                refused
                ? "is snapserver running there, its control port open? (receiver.sound: snapcast://HOST:PORT, the "
                    + "control port is PORT + 1: 1705 by default)"
                : unresolved
                    ? "check the server's name in receiver.sound (snapcast://HOST), or use its IP address"
                    : "is the Snapcast server switched on and on this network? (receiver.sound)"
        }
        return NetworkError(description: "cannot connect to \(host):\(port): \(reason); \(advice)")
    }

    /// The receiver could not open its listening socket.
    static func cannotListen(host: String, port: Int, underlying: any Error) -> NetworkError {
        let reason = Self.reason(underlying)
        let advice =
            reason.contains("in use")
            ? "another program (or another lightorgan receive) uses port \(port); stop it or set receiver.port"
            : reason.contains("permission")
                ? "ports below 1024 need privileges; use a port of 1024 or more in receiver.port"
                : "check receiver.bind (an address of this machine, 0.0.0.0 or ::) and receiver.port"
        return NetworkError(description: "cannot listen on \(host):\(port): \(reason); \(advice)")
    }

    static func reason(_ error: any Error) -> String {
        if let io = error as? IOError { return Self.errnoText(io.errnoCode) }
        return String(describing: error)
    }

    static func errnoText(_ code: CInt) -> String {
        switch code {
        case ECONNREFUSED: "connection refused"
        case EADDRINUSE: "address already in use"
        case EADDRNOTAVAIL: "address not available on this machine"
        case EACCES, EPERM: "permission denied"
        case EHOSTUNREACH: "no route to host"
        case ENETUNREACH: "network unreachable"
        case ETIMEDOUT: "timed out"
        default: String(cString: strerror(code))
        }
    }
}
