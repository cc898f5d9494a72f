import LightOrganCore
import LightOrganTestSupport
import LightOrganWeb

/// Random page connections through ``PageAdmission``: strangers from a few addresses opening, upgrading,
/// saying hello without the key and closing, and an owner whose connections show the key. After every event:
///
/// - no more than ``PageAdmission/capacity`` connections are open, nor ``PageAdmission/perAddress`` from one
///   address;
/// - a connection that showed the key is never closed to make room, and a newcomer is refused only when
///   every place is taken by one with the key, its address holds its limit or opens connections too fast;
/// - a connection ``PageAdmission/overdue(_:at:)`` names is one still opening or not yet greeted, past its time.
enum AdmissionFuzz {
    static func run(_ generator: inout SplitMix64, count: Int) throws(FuzzFailure) {
        var admission = PageAdmission()
        var open: [Int: (address: String, owner: Bool)] = [:]
        var now = ContinuousClock.now
        var nextID = 0
        let strangers = (0..<(6 + Int(generator.next() % 24))).map { "10.0.9.\($0)" }
        for event in 0..<count {
            now += .milliseconds(Int64(generator.next() % 20))  // fast enough to fill every place
            switch generator.next() % 10 {
            case 0, 1, 2, 3, 4:
                nextID += 1
                let owner = generator.next() % 10 == 0
                let address = owner ? "10.0.0.5" : strangers[Int(generator.next() % UInt64(strangers.count))]
                let fromAddress = open.values.count(where: { $0.address == address })
                switch admission.admit(nextID, address: address, at: now) {
                case .accept(let evicted):
                    if let evicted {
                        try require(
                            open[evicted]?.owner == false, "event \(event): closed \(evicted), which has the key")
                        open[evicted] = nil
                    }
                    open[nextID] = (address, false)
                case .refuse(let reason):
                    let full = open.count >= PageAdmission.capacity && open.values.allSatisfy(\.owner)
                    try require(
                        fromAddress >= PageAdmission.perAddress || full || reason.contains("faster than"),
                        "event \(event): refused \(address) with \(fromAddress) from it and \(open.count) open")
                }
            case 5, 6:
                guard let id = open.keys.randomElement(using: &generator) else { continue }
                admission.upgraded(id, at: now)  // (again, for a socket: it counts from here, without the key)
                open[id]!.owner = false
                if generator.next() % 3 != 0 {
                    let withKey = open[id]!.address == "10.0.0.5" && generator.next() % 2 == 0
                    admission.greeted(id, withKey: withKey, at: now)
                    open[id]!.owner = withKey
                }
            case 7:
                guard let id = open.keys.randomElement(using: &generator) else { continue }
                admission.closed(id)
                open[id] = nil
            default:
                for id in Array(open.keys) {
                    guard admission.overdue(id, at: now) != nil else { continue }
                    switch admission.stage(of: id) {
                    case .opening?, .looking(greeted: false)?: break
                    default:
                        throw FuzzFailure(
                            "event \(event): \(id) overdue in stage \(String(describing: admission.stage(of: id)))")
                    }
                    admission.closed(id)
                    open[id] = nil
                }
            }
            try require(
                admission.openConnections == open.count,
                "event \(event): \(admission.openConnections) open, expected \(open.count)")
            try require(open.count <= PageAdmission.capacity, "event \(event): \(open.count) open")
            let busiest = Dictionary(grouping: open.values, by: \.address).values.map(\.count).max() ?? 0
            try require(busiest <= PageAdmission.perAddress, "event \(event): \(busiest) from one address")
        }
    }
}
