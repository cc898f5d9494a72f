import LightOrganCore

/// The periodic statistics lines of the sender and the receiver, one line each.
enum StatisticsLine {
    /// e.g. `last 10 s: 100.0 frames/s from 192.168.1.20:50422, applied 1000, dropped 0 (backlog), ignored 0; last frame [12, 200, 0]; 1 connection open`
    static func receiver(_ counters: ReceiverCounters, interval: Duration, activePeer: String?, openConnections: Int)
        -> String
    {
        let seconds = interval / .seconds(1)
        let rate = Double(counters.received) / seconds
        var line = "last \(format(seconds)) s: \(format(rate)) frames/s received"
        line += activePeer.map { " (driving: \($0))" } ?? " (no sender driving the lights)"
        line +=
            ", applied \(counters.applied), dropped \(counters.superseded) (backlog), ignored \(counters.ignored) (other senders)"
        line += "; last frame \(counters.lastFrame.map(\.description) ?? "none")"
        line += "; \(openConnections) connection\(openConnections == 1 ? "" : "s") open"
        var cutOff: [String] = []
        if counters.refused > 0 { cutOff.append("\(counters.refused) refused") }
        if counters.evicted > 0 { cutOff.append("\(counters.evicted) idle closed for room") }
        if counters.closedIdle > 0 { cutOff.append("\(counters.closedIdle) idle timed out") }
        if counters.flooded > 0 { cutOff.append("\(counters.flooded) flooding closed") }
        if !cutOff.isEmpty { line += "; " + cutOff.joined(separator: ", ") }
        return line
    }

    /// One receiver of the sender: `pi.local:8181 connected, sent 1000, dropped 0`.
    struct SenderTarget {
        var name: String
        var isConnected: Bool
        var sent: Int
        var dropped: Int
        var reconnects: Int
    }

    /// e.g. `last 10 s: 1000 frames made (100.0/s); pi.local:8181 connected, sent 1000, dropped 0, reconnects 0`
    static func sender(framesMade: Int, interval: Duration, targets: [SenderTarget]) -> String {
        let seconds = interval / .seconds(1)
        var line = "last \(format(seconds)) s: \(framesMade) frames made (\(format(Double(framesMade) / seconds))/s)"
        for target in targets {
            line +=
                "; \(target.name) \(target.isConnected ? "connected" : "not connected"), sent \(target.sent), "
                + "dropped \(target.dropped), reconnects \(target.reconnects)"
        }
        return line
    }

    private static func format(_ value: Double) -> String {
        let tenths = (value * 10).rounded() / 10
        return tenths == tenths.rounded() ? String(Int(tenths)) : String(tenths)
    }
}
