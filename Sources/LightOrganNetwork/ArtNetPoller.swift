public import LightOrganCore

#if canImport(Glibc)
import Glibc
#endif

/// Finds Art-Net nodes: broadcasts ArtPoll and reads the ArtPollReplies that come back to UDP
/// port 6454 (Art-Net answers to that port, so the poller binds it, sharing it with other Art-Net
/// software on the machine through `SO_REUSEADDR`/`SO_REUSEPORT`).
///
/// Blocking calls with a deadline, for a thread of its own (``ArtNetDirectory``) or a command that
/// looks for a few seconds (`lightorgan discover`). Not thread-safe.
public final class ArtNetPoller {
    /// Time between two polls, as Art-Net 4 asks of controllers (2.5…3 s), nanoseconds.
    public static let pollInterval: Int64 = 3_000_000_000
    /// How long one wait for replies lasts at most, so that a stop is noticed soon, nanoseconds.
    static let listenSlice: Int64 = 200_000_000

    private let descriptor: CInt
    private let broadcast: sockaddr_in
    /// Where the polls go (`255.255.255.255`, or the interface's broadcast address) and by which
    /// link, for logs.
    public let description: String

    /// Opens the poller's socket, on `interface` when one is named (its broadcast address then).
    ///
    /// - Throws: ``NetworkError`` in one line: the port is taken by a program that does not share
    ///   it, the interface does not exist.
    public init(interface: String = "") throws(NetworkError) {
        var address = "255.255.255.255"
        if !interface.isEmpty {
            _ = try LightingSocket.index(of: interface)
            address = LightingSocket.broadcastAddress(of: interface) ?? address
        }
        let descriptor = socket(AF_INET, Int32(SOCK_DGRAM.rawValue | SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else {
            throw NetworkError(description: "cannot open a UDP socket: \(NetworkError.errnoText(errno))")
        }
        var on: CInt = 1
        for option in [SO_REUSEADDR, SO_REUSEPORT, SO_BROADCAST] {
            setsockopt(descriptor, SOL_SOCKET, option, &on, socklen_t(MemoryLayout<CInt>.size))
        }
        if !interface.isEmpty { LightingSocket.bind(descriptor, toDevice: interface) }
        var local = sockaddr_in()
        local.sin_family = sa_family_t(AF_INET)
        local.sin_port = in_port_t(UInt16(ArtNetNode.port).bigEndian)
        let bound = withUnsafePointer(to: &local) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard bound == 0 else {
            let reason = NetworkError.errnoText(errno)
            close(descriptor)
            throw NetworkError(
                description: "cannot listen for ArtPollReply on UDP port \(ArtNetNode.port): \(reason); "
                    + "another Art-Net program holds it without sharing: stop it, or write the nodes' addresses (artnet://10.0.0.60)"
            )
        }
        var target = sockaddr_in()
        target.sin_family = sa_family_t(AF_INET)
        target.sin_port = in_port_t(UInt16(ArtNetNode.port).bigEndian)
        inet_pton(AF_INET, address, &target.sin_addr)
        self.descriptor = descriptor
        broadcast = target
        description = "ArtPoll to \(address):\(ArtNetNode.port)" + (interface.isEmpty ? "" : " on \(interface)")
    }

    deinit { close(descriptor) }

    /// Broadcasts one ArtPoll; false when the network refused it (no route, interface down).
    @discardableResult
    public func poll() -> Bool {
        var target = broadcast
        let sent = ArtNetNode.poll.withUnsafeBytes { payload in
            withUnsafePointer(to: &target) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    sendto(
                        descriptor, payload.baseAddress, payload.count, Int32(MSG_DONTWAIT | MSG_NOSIGNAL), $0,
                        socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
        }
        return sent >= 0
    }

    /// Polls every ``pollInterval`` and hands `heard` the replies of each wait (at most
    /// ``listenSlice``; empty when none came), until `stopped` is true (checked between waits).
    public func pollUntil(_ stopped: () -> Bool, heard: ([ArtNetNode]) -> Void) {
        while !stopped() {
            poll()
            let next = MonotonicClock.nanoseconds() + Self.pollInterval
            while MonotonicClock.nanoseconds() < next, !stopped() {
                heard(replies(until: min(next, MonotonicClock.nanoseconds() + Self.listenSlice)))
            }
        }
    }

    /// The replies that arrive until `deadline` (monotonic ns), each node once (its last reply).
    public func replies(until deadline: Int64) -> [ArtNetNode] {
        var nodes: [String: ArtNetNode] = [:]
        var order: [String] = []
        var buffer = [UInt8](repeating: 0, count: 1024)
        while true {
            let left = deadline - MonotonicClock.nanoseconds()
            guard left > 0 else { break }
            var request = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            let ready = Glibc.poll(&request, 1, CInt(min(Int64(Int32.max), (left + 999_999) / 1_000_000)))
            guard ready > 0 else {
                if ready < 0 && errno == EINTR { continue }
                break
            }
            var source = sockaddr_storage()
            var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
            let count = buffer.withUnsafeMutableBytes { bytes in
                withUnsafeMutablePointer(to: &source) {
                    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                        recvfrom(descriptor, bytes.baseAddress, bytes.count, Int32(MSG_DONTWAIT), $0, &length)
                    }
                }
            }
            guard count > 0 else { continue }
            let sender = NumericAddress.text(of: source, length: length) ?? "?"
            guard let node = ArtNetNode(reply: Array(buffer[0..<count]), sender: sender) else { continue }
            if nodes[node.address] == nil { order.append(node.address) }
            nodes[node.address] = node
        }
        return order.map { nodes[$0]! }
    }
}
