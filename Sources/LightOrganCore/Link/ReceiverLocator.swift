/// Where a sender's connection goes: a fixed address, or whichever receiver discovery finds.
///
/// The sender asks before every connection attempt, so a receiver that came back on another
/// address or port is found again.
public protocol ReceiverLocator: Sendable, CustomStringConvertible {
    /// The receiver to connect to now. Waits until one is known; nil when the task is cancelled.
    func locate() async -> Endpoint?
}

/// A receiver at a fixed address (`sender.host`/`sender.port`, or an entry of `sender.hosts`).
public struct FixedReceiver: ReceiverLocator {
    /// Host and port (the port is always set).
    public let endpoint: Endpoint

    public init(_ endpoint: Endpoint) {
        self.endpoint = endpoint
    }

    public func locate() async -> Endpoint? { endpoint }

    public var description: String { endpoint.description }
}
