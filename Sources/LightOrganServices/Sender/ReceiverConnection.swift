import LightOrganCore
import LightOrganNetwork
import Logging
import NIOPosix
import Synchronization

/// One receiver the sender streams to, kept connected by itself.
///
/// Before every attempt it asks its ``ReceiverLocator`` where the receiver is (a fixed address,
/// or what DNS-SD discovery found last, so a receiver back on another address or port is found
/// again). Its own loop connects, waits for the connection to end and reconnects: every 0.25 s while the
/// host refuses (a receiver restarting is back within that), with backoff from 0.25 s doubling to
/// 2 s while it does not answer; it logs once per change of state. Connecting and the last frame
/// block, so they run on NIO's thread pool for blocking work, never on a task's thread.
/// ``send(_:)`` never waits: when connected the frame goes to the ``FrameSocket`` (newest wins),
/// otherwise it is skipped, so one slow or absent receiver never delays the frames or the others.
final class ReceiverConnection: Sendable {
    /// Where it connects.
    let locator: any ReceiverLocator
    private let logger: Logger
    private let state = Mutex(State())

    private struct State {
        var link: FrameSocket?
        var isFinished = false
        var connections = 0
        /// Sent and dropped by links that have closed.
        var closed = DeliveryCounts()
        /// The totals the last statistics line gave.
        var report = DeliveryReport()
    }

    init(locator: any ReceiverLocator, logger: Logger) {
        self.locator = locator
        self.logger = logger
    }

    /// The first wait before reconnecting, and the wait between attempts a refusing host gets.
    static let firstRetry = Duration.milliseconds(250)
    /// The longest wait between attempts (a host that does not answer).
    static let longestRetry = Duration.seconds(2)

    /// Keeps a connection open until ``finish()`` or cancellation.
    func keepConnected() async {
        var backoff = Self.firstRetry
        var lastFailure: String?
        while !Task.isCancelled, !state.withLock({ $0.isFinished }) {
            guard let endpoint = await locator.locate() else { break }
            let host = endpoint.host
            let port = endpoint.port ?? 8181
            let link: FrameSocket
            do {
                link = try await NIOThreadPool.singleton.runIfActive { try FrameSocket.connect(host: host, port: port) }
            } catch {
                let message = "\(error)"
                if message != lastFailure {
                    logger.warning("\(message); retrying until it answers")
                    lastFailure = message
                }
                // Refused: the host is up and answers at once (a receiver restarting): keep polling
                // quickly, it costs a SYN and a RST. Anything else (timeout, unreachable): back off.
                let refused = message.contains("refused")
                guard (try? await Task.sleep(for: refused ? Self.firstRetry : backoff)) != nil else { break }
                backoff = min(backoff * 2, Self.longestRetry)
                continue
            }
            let stillWanted = state.withLock { state -> Bool in
                guard !state.isFinished else { return false }
                state.link = link
                state.connections += 1
                return true
            }
            guard stillWanted else {
                link.close()
                break
            }
            backoff = Self.firstRetry
            lastFailure = nil
            let address = link.remoteDescription
            let named = "\(locator)" == "\(endpoint)" ? "\(endpoint)" : "\(locator) at \(endpoint)"
            logger.info("streaming to \(named)\(address.hasPrefix(host + ":") ? "" : " (\(address))")")
            let reason = await withTaskCancellationHandler {
                await link.closed()
            } onCancel: {
                link.close()
            }
            let finished = state.withLock { state -> Bool in
                state.link = nil
                state.closed = state.closed + link.counts
                return state.isFinished
            }
            if finished || Task.isCancelled { break }
            logger.warning("connection to \(endpoint) lost (\(reason)); reconnecting")
        }
    }

    /// Offers the newest frame; returns at once.
    func send(_ frame: LevelFrame) {
        state.withLock { $0.link }?.send(frame)
    }

    /// Sends an all-off frame (so even a 2016 receiver goes dark), closes, and stops reconnecting.
    func finish() async {
        let link = state.withLock { state -> FrameSocket? in
            state.isFinished = true
            return state.link
        }
        guard let link else { return }
        _ = try? await NIOThreadPool.singleton.runIfActive { link.finish(with: .off) }
    }

    /// Sent, dropped and reconnects since the previous call, and whether it is connected now.
    func takeStatistics() -> StatisticsLine.SenderTarget {
        state.withLock { state in
            var totals = state.closed + (state.link?.counts ?? DeliveryCounts())
            totals.reconnects = max(0, state.connections - 1)
            let change = state.report.takeChange(to: totals)
            return StatisticsLine.SenderTarget(
                name: locator.description, isConnected: state.link != nil, sent: change.sent,
                dropped: change.dropped, reconnects: change.reconnects)
        }
    }
}
