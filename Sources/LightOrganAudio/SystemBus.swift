import FoundationEssentials
public import LightOrganCore
import LightOrganPOSIX

#if canImport(Glibc)
import Glibc
#endif

/// A connection to the D-Bus system bus (the socket of `DBUS_SYSTEM_BUS_ADDRESS`, else
/// `/run/dbus/system_bus_socket`), for BlueZ and BlueALSA: method calls with a time limit, method calls that
/// come in (an agent's), and signals.
///
/// It speaks the wire protocol itself (``DBusMessage``), so the receiver links no D-Bus library: it
/// authenticates as its own user (`EXTERNAL`), says `Hello`, and a thread of its own reads what comes. A call
/// waits on its reply only; calls that come in are answered by ``handler`` on the reading thread, signals go
/// to ``signals`` there too (neither may call on the bus and wait: that would wait for the reading thread).
public final class SystemBus: @unchecked Sendable {
    // @unchecked Sendable: `replies`, `nextSerial`, `closed` and the handlers change under `lock` only; the
    // socket is written under `writing`, read by the reading thread alone.
    /// The name the bus gave this connection (`:1.42`).
    public private(set) var uniqueName = ""
    private let descriptor: CInt
    private let lock = ThreadCondition()
    private let writing = ThreadCondition()
    private var nextSerial: UInt32 = 1
    private var replies: [UInt32: DBusMessage] = [:]
    private var closed = false
    private var handler: (@Sendable (DBusMessage) -> DBusMessage?)?
    private var signals: (@Sendable (DBusMessage) -> Void)?

    /// How long a call waits for its answer unless told otherwise, seconds.
    public static let answerTimeLimit = 5.0

    /// Connects, authenticates and says Hello.
    ///
    /// - Throws: ``AudioInputError`` naming the socket and why, when there is no system bus.
    /// - Parameter environment: where `DBUS_SYSTEM_BUS_ADDRESS` is looked for (nil: this process's).
    public init(environment: [String: String]? = nil) throws {
        var path = "/run/dbus/system_bus_socket"
        let environment = environment ?? ProcessInfo.processInfo.environment
        if let address = environment["DBUS_SYSTEM_BUS_ADDRESS"], let range = address.firstRange(of: "unix:path=") {
            path = String(address[range.upperBound...].prefix { $0 != "," && $0 != ";" })
        }
        descriptor = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { throw AudioInputError("cannot make a socket for the system bus") }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else {
            Glibc.close(descriptor)
            throw AudioInputError("the system bus's socket path \(path) is too long")
        }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (index, byte) in bytes.enumerated() { raw[index] = byte }
        }
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard connected == 0 else {
            let reason = String(cString: strerror(errno))
            Glibc.close(descriptor)
            throw AudioInputError("no D-Bus system bus at \(path) (\(reason.lowercased())): is dbus running?")
        }
        var timeout = timeval(tv_sec: 5, tv_usec: 0)
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        do {
            try authenticate()
        } catch {
            Glibc.close(descriptor)
            throw error
        }
        timeout = timeval(tv_sec: 0, tv_usec: 0)
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        DedicatedThread.start(named: "lightorgan bus") { [self] in readLoop() }
        let hello = try call(.call("org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus", "Hello"))
        uniqueName = hello.first?.text ?? ""
    }

    deinit {
        Glibc.close(descriptor)
    }

    /// `EXTERNAL` authentication as this process's user, then `BEGIN`.
    private func authenticate() throws {
        let uid = Array(String(getuid()).utf8).map { String(cFormat: "%02x", $0) }.joined()
        guard send(Array("\0AUTH EXTERNAL \(uid)\r\n".utf8)) else {
            throw AudioInputError("the system bus closed the connection")
        }
        var line: [UInt8] = []
        var byte: UInt8 = 0
        while line.count < 512, Glibc.read(descriptor, &byte, 1) == 1, byte != 10 { line.append(byte) }
        let answer = String(decoding: line, as: UTF8.self).trimmingWhitespace()
        guard answer.hasPrefix("OK ") else {
            throw AudioInputError("the system bus refused this user (\(answer.isEmpty ? "no answer" : answer))")
        }
        guard send(Array("BEGIN\r\n".utf8)) else { throw AudioInputError("the system bus closed the connection") }
    }

    /// Sets what answers method calls that come in (nil: an error); runs on the reading thread.
    public func answerCalls(_ handler: @escaping @Sendable (DBusMessage) -> DBusMessage?) {
        lock.withLock { self.handler = handler }
    }

    /// Sets what receives the signals this connection has asked for (``addMatch(_:)``); runs on the reading
    /// thread.
    public func receiveSignals(_ receiver: @escaping @Sendable (DBusMessage) -> Void) {
        lock.withLock { signals = receiver }
    }

    /// Asks the bus for the signals `rule` matches (`type='signal',sender='org.bluez'`).
    public func addMatch(_ rule: String) throws {
        _ = try call(
            .call("org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus", "AddMatch", [.string(rule)]))
    }

    /// Sends `message` and waits for its reply's body, at most `timeLimit` seconds.
    ///
    /// - Throws: ``SystemBusError`` with the error's name and text when the answer is an error, none came in
    ///   time, or the connection closed.
    @discardableResult
    public func call(_ message: DBusMessage, timeLimit: Double = answerTimeLimit) throws -> [DBusValue] {
        let serial = try send(message)
        let deadline = MonotonicClock.nanoseconds() + Int64(timeLimit * 1e9)
        let reply = lock.withLock { () -> DBusMessage? in
            while replies[serial] == nil, !closed, MonotonicClock.nanoseconds() < deadline {
                lock.wait(untilNanoseconds: deadline)
            }
            return replies.removeValue(forKey: serial)
        }
        let what = "\(message.interface ?? "").\(message.member ?? "")"
        guard let reply else {
            let closed = lock.withLock { self.closed }
            throw SystemBusError(
                name: closed ? "closed" : "timeout",
                text: closed ? "the system bus closed the connection" : "\(what): no answer within \(timeLimit) s")
        }
        if reply.kind == .error {
            let text = reply.body.first?.text ?? ""
            throw SystemBusError(name: reply.errorName ?? "error", text: text.isEmpty ? "\(what) failed" : text)
        }
        return reply.body
    }

    /// Sends `message` without waiting for an answer (a reply of our own, a call whose answer does not matter).
    ///
    /// - Returns: the serial it was sent with.
    @discardableResult
    public func send(_ message: DBusMessage) throws -> UInt32 {
        var message = message
        message.serial = lock.withLock {
            defer { nextSerial = nextSerial == UInt32.max ? 1 : nextSerial + 1 }
            return nextSerial
        }
        guard send(message.encoded()) else {
            throw SystemBusError(name: "closed", text: "the system bus closed the connection")
        }
        return message.serial
    }

    /// A property of `interface` at `path` of `destination` (org.freedesktop.DBus.Properties.Get).
    public func property(_ destination: String, _ path: String, _ interface: String, _ name: String) throws
        -> DBusValue?
    {
        let body = try call(
            .call(
                destination, path, "org.freedesktop.DBus.Properties", "Get", [.string(interface), .string(name)]))
        if case .variant(let inner) = body.first { return inner }
        return body.first
    }

    /// Sets a property (org.freedesktop.DBus.Properties.Set).
    public func setProperty(
        _ destination: String, _ path: String, _ interface: String, _ name: String, _ value: DBusValue
    ) throws {
        _ = try call(
            .call(
                destination, path, "org.freedesktop.DBus.Properties", "Set",
                [.string(interface), .string(name), .variant(value)]))
    }

    /// Every object `destination` exports under `path`, with its interfaces and their properties
    /// (org.freedesktop.DBus.ObjectManager.GetManagedObjects): path → interface → property → value.
    public func managedObjects(_ destination: String, _ path: String) throws -> [String: [String: [String: DBusValue]]]
    {
        let body = try call(.call(destination, path, "org.freedesktop.DBus.ObjectManager", "GetManagedObjects"))
        var objects: [String: [String: [String: DBusValue]]] = [:]
        for (object, interfaces) in body.first?.dictionary ?? [:] {
            var byInterface: [String: [String: DBusValue]] = [:]
            for (interface, properties) in interfaces.dictionary ?? [:] {
                byInterface[interface] = properties.dictionary ?? [:]
            }
            objects[object] = byInterface
        }
        return objects
    }

    /// Whether a connection owns `name` on the bus (`org.bluez`: bluetoothd runs).
    public func hasOwner(_ name: String) -> Bool {
        let answer = try? call(
            .call(
                "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus", "NameHasOwner",
                [
                    .string(name)
                ]))
        return answer?.first?.bool ?? false
    }

    /// Ends the connection: calls waiting return ``SystemBusError`` at once.
    public func close() {
        lock.withLock {
            closed = true
            lock.broadcast()
        }
        shutdown(descriptor, Int32(SHUT_RDWR))
    }

    private func send(_ bytes: [UInt8]) -> Bool {
        writing.withLock {
            var sent = 0
            while sent < bytes.count {
                let written = bytes[sent...].withUnsafeBytes {
                    Glibc.send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL))
                }
                if written < 0, errno == EINTR { continue }
                guard written > 0 else { return false }
                sent += written
            }
            return true
        }
    }

    private func readLoop() {
        var buffer: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65_536)
        reading: while true {
            let got = chunk.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress, $0.count) }
            if got < 0, errno == EINTR { continue }
            guard got > 0 else { break }
            buffer += chunk[0..<got]
            while let length = try? DBusMessage.length(of: buffer[...]), buffer.count >= length {
                let bytes = Array(buffer[0..<length])
                buffer.removeFirst(length)
                guard let message = try? DBusMessage(decoding: bytes) else { continue }
                dispatch(message)
            }
            if (try? DBusMessage.length(of: buffer[...])) == nil, buffer.count >= 16 { break reading }
        }
        lock.withLock {
            closed = true
            // Every waiting call wakes and finds the connection closed.
            replies.removeAll()
            lock.broadcast()
        }
    }

    private func dispatch(_ message: DBusMessage) {
        switch message.kind {
        case .methodReturn, .error:
            guard let serial = message.replySerial else { return }
            lock.withLock {
                replies[serial] = message
                lock.broadcast()
            }
        case .signal:
            lock.withLock { signals }?(message)
        case .methodCall:
            let handler = lock.withLock { self.handler }
            let answer =
                handler?(message)
                ?? .error(to: message, "org.freedesktop.DBus.Error.UnknownMethod", "no such method here")
            if message.flags & 1 == 0 { _ = try? send(answer) }
        }
    }
}

/// A D-Bus call that failed: the error's name (`org.bluez.Error.NotReady`, or `timeout`, `closed`) and text.
public struct SystemBusError: Error, CustomStringConvertible {
    public let name: String
    public let text: String

    public var description: String { "\(text) (\(name))" }
}
