import LightOrganCore
import LightOrganTestSupport

/// Random connection events through ``SenderArbiter``: the invariants hold after every one.
///
/// - The active connection is open and has delivered a frame; connections never exceed the limit.
/// - A frame shown always comes from the connection that is active afterwards.
/// - After sweeping through the lamp and idle timeouts with no frames, nothing is active or open.
enum ArbiterFuzz {
    static func run(_ generator: inout SplitMix64, count: Int) throws(FuzzFailure) {
        var rules = ReceiverRules()
        rules.maxConnections = 4
        rules.allow = [AddressRange("10.0.0.0/24")!]
        var arbiter = SenderArbiter(rules: rules)
        var open: Set<Int> = []
        var delivered: Set<Int> = []
        var now = ContinuousClock.now
        var nextID = 0
        for event in 0..<count {
            now += .microseconds(Int64.random(in: 0...50_000, using: &generator))
            switch generator.next() % 10 {
            case 0, 1:
                nextID += 1
                let address = generator.next() % 5 == 0 ? "192.168.1.9" : "10.0.0.\(generator.next() % 256)"
                switch arbiter.admit(nextID, address: address, peer: address, at: now) {
                case .accept(let evicting):
                    if let evicting {
                        try require(
                            open.contains(evicting) && evicting != arbiter.active, "event \(event): evicted \(evicting)"
                        )
                        open.remove(evicting)
                        delivered.remove(evicting)
                    }
                    open.insert(nextID)
                case .refuse:
                    break
                }
            case 2:
                if let id = open.randomElement(using: &generator) {
                    _ = arbiter.closed(id)
                    open.remove(id)
                    delivered.remove(id)
                }
            case 3:
                let sweep = arbiter.sweep(at: now)
                for id in sweep.idle {
                    open.remove(id)
                    delivered.remove(id)
                }
            default:
                guard let id = open.randomElement(using: &generator) else { continue }
                let completed = Int.random(in: 0...(generator.next() % 50 == 0 ? 30_000 : 3), using: &generator)
                let frame = completed > 0 ? LevelFrame(bass: UInt8(generator.next() % 256), mid: 0, treble: 0) : nil
                let verdict = arbiter.received(frame, completed: completed, bytes: completed * 3, from: id, at: now)
                if completed > 0 { delivered.insert(id) }
                switch verdict {
                case .show(let shown, _):
                    try require(
                        shown == frame && arbiter.active == id,
                        "event \(event): showed a frame of \(id) while \(String(describing: arbiter.active)) is active")
                case .close:
                    open.remove(id)
                    delivered.remove(id)
                case .ignore:
                    break
                }
            }
            if let active = arbiter.active {
                try require(
                    open.contains(active) && delivered.contains(active),
                    "event \(event): active \(active) is not an open connection with frames")
            }
            try require(
                arbiter.openConnections == open.count,
                "event \(event): \(arbiter.openConnections) open, expected \(open.count)")
            try require(open.count <= rules.maxConnections, "event \(event): \(open.count) connections open")
        }
        // Silence, swept as the receiver does (often: a long gap would count as the receiver pausing).
        let end = now + rules.lampTimeout + rules.idleTimeout
        while now < end {
            now += .milliseconds(100)
            _ = arbiter.sweep(at: now)
        }
        try require(arbiter.active == nil && arbiter.openConnections == 0, "still active or open after the timeouts")
    }
}
