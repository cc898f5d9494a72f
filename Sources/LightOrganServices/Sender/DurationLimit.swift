public import ServiceLifecycle

/// A service that ends after a fixed time: run it with `successTerminationBehavior:
/// .gracefullyShutdownGroup` to stop the whole group then (`--duration`).
public struct DurationLimit: Service {
    /// How long to let the group run.
    public let duration: Duration

    public init(_ duration: Duration) {
        self.duration = duration
    }

    public func run() async throws {
        try await cancelWhenGracefulShutdown {
            try await Task.sleep(for: duration)
        }
    }
}
