import FoundationEssentials
public import LightOrganCore
import LightOrganPOSIX
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// The receiver's look at its Snapcast server through the server's control API (JSON-RPC, one line per message,
/// over TCP: port 1705 by default, the stream's port + 1): every ``interval`` it asks for the server's status and
/// finds this room in it (``SnapcastRoom``: its group, the stream and whether it plays); the first time it finds
/// the room under another name, it names it `name` (`Client.SetName`), so that Snapcast's apps and Home
/// Assistant's Snapcast integration show the room as the receiver is called.
///
/// It runs on a thread of its own with plain blocking sockets and short time limits; nothing the sound or the
/// lamps do waits for it. A server that does not answer is reported (``Report/unreachable(_:)``) and asked again
/// at the next turn.
public final class SnapcastControl: Sendable {
    /// What a turn found.
    public enum Report: Sendable, Equatable {
        /// The server lists the room.
        case room(SnapcastRoom)
        /// The server answered and does not list the room (not joined yet).
        case notListed
        /// The control port did not answer, or answered something else; why.
        case unreachable(String)
    }

    /// Between two looks at the server.
    public static let interval = Duration.seconds(3)
    /// The longest a connection, a request or its reply may take.
    static let timeLimit = Duration.seconds(2)

    private let clientID: String
    private let name: String
    private let server: @Sendable () -> (host: String, port: Int)?
    private let report: @Sendable (Report) -> Void
    private let wake = ThreadCondition()
    private let closed = Atomic<Bool>(false)

    /// Watches the room `clientID` on the server that `server` names at each turn (nil: not known yet), naming it
    /// `name`; `report` gets each turn's finding, on the control's thread.
    public init(
        clientID: String, name: String, server: @escaping @Sendable () -> (host: String, port: Int)?,
        report: @escaping @Sendable (Report) -> Void
    ) {
        (self.clientID, self.name, self.server, self.report) = (clientID, name, server, report)
    }

    /// Starts the thread; it ends with ``close()``.
    public func start() {
        DedicatedThread.start(named: "lightorgan snapcast control") { [self] in
            var named = false
            var requests = 0
            while !closed.load(ordering: .acquiring) {
                if let (host, port) = server() {
                    let found = look(host: host, port: port, naming: !named, requests: &requests)
                    if case .room(let room) = found, room.name == name { named = true }
                    if !closed.load(ordering: .acquiring) { report(found) }
                }
                let deadline = MonotonicClock.nanoseconds() + Int64(Self.interval / .milliseconds(1)) * 1_000_000
                wake.withLock {
                    while !closed.load(ordering: .acquiring), MonotonicClock.nanoseconds() < deadline {
                        wake.wait(untilNanoseconds: deadline)
                    }
                }
            }
        }
    }

    /// Ends the thread (within the time limit of a look under way).
    public func close() {
        closed.store(true, ordering: .releasing)
        wake.withLock { wake.signal() }
    }

    /// One turn: the status, and the room's name set when `naming` and it differs.
    private func look(host: String, port: Int, naming: Bool, requests: inout Int) -> Report {
        let descriptor: CInt
        do {
            descriptor = try TCPConnector.connect(
                host: host, port: port, peer: .snapcastControl, timeout: Self.timeLimit
            ) { _ in }
        } catch {
            return .unreachable("\(error)")
        }
        defer { Glibc.close(descriptor) }
        do {
            requests += 1
            let reply = try exchange(SnapcastRequest.status(id: requests), id: requests, on: descriptor)
            guard var room = try SnapcastRoom.find(clientID, inStatusReply: reply) else { return .notListed }
            if naming, room.name != name {
                requests += 1
                _ = try exchange(
                    SnapcastRequest.setName(id: requests, client: clientID, name: name), id: requests, on: descriptor)
                room.name = name
            }
            return .room(room)
        } catch let error as SnapcastRoomError {
            return .unreachable("the control port \(host):\(port) answered \(error)")
        } catch {
            return .unreachable("the control port \(host):\(port): \(error)")
        }
    }

    /// Sends `request` and returns the reply whose `id` is `id` (the server's notifications in between are
    /// skipped).
    private func exchange(_ request: String, id: Int, on descriptor: CInt) throws -> [UInt8] {
        let deadline = ContinuousClock.now + Self.timeLimit
        var bytes = Array(request.utf8)
        while !bytes.isEmpty {
            let sent = Glibc.send(descriptor, bytes, bytes.count, Int32(MSG_NOSIGNAL))
            if sent < 0 {
                guard errno == EAGAIN || errno == EINTR else { throw ControlError(NetworkError.errnoText(errno)) }
                try waitFor(descriptor, events: POLLOUT, until: deadline)
                continue
            }
            bytes.removeFirst(sent)
        }
        var pending: [UInt8] = []
        while true {
            while let newline = pending.firstIndex(of: 10) {
                let line = Array(pending[..<newline])
                pending.removeFirst(newline + 1)
                // A notification has no id.
                if (try? JSONDecoder().decode(Identified.self, from: Data(line)))?.id == id { return line }
            }
            guard pending.count < 1 << 20 else { throw ControlError("a reply over 1 MiB") }
            try waitFor(descriptor, events: POLLIN, until: deadline)
            var buffer = [UInt8](repeating: 0, count: 16_384)
            let count = Glibc.recv(descriptor, &buffer, buffer.count, 0)
            if count == 0 { throw ControlError("the server closed the connection") }
            if count < 0 {
                guard errno == EAGAIN || errno == EINTR else { throw ControlError(NetworkError.errnoText(errno)) }
                continue
            }
            pending += buffer[..<count]
        }
    }

    private func waitFor(_ descriptor: CInt, events: Int32, until deadline: ContinuousClock.Instant) throws {
        let remaining = deadline - ContinuousClock.now
        guard remaining > .zero else { throw ControlError("no answer within 2 s") }
        var poller = pollfd(fd: descriptor, events: Int16(events), revents: 0)
        let ready = poll(&poller, 1, TCPConnector.pollMilliseconds(remaining))
        if ready == 0 { throw ControlError("no answer within 2 s") }
    }

    private struct Identified: Decodable { var id: Int? }

    private struct ControlError: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }
}
