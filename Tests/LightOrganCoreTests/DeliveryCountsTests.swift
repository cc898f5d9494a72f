import LightOrganCore
import Testing

@Suite("Delivery counts: totals, and what changed since the last statistics line")
struct DeliveryCountsTests {
    @Test("each line gives what changed since the one before; the first, everything so far")
    func changeSinceTheLastReport() {
        var report = DeliveryReport()
        #expect(report.takeChange(to: DeliveryCounts(sent: 100, dropped: 2)) == DeliveryCounts(sent: 100, dropped: 2))
        #expect(
            report.takeChange(to: DeliveryCounts(sent: 150, dropped: 2, failed: 1))
                == DeliveryCounts(sent: 50, failed: 1))
        #expect(report.takeChange(to: DeliveryCounts(sent: 150, dropped: 2, failed: 1)) == DeliveryCounts())
    }

    @Test("a closed link's counts added to the open one's make the target's totals")
    func sums() {
        let closed = DeliveryCounts(sent: 10, dropped: 1) + DeliveryCounts(sent: 5, reconnects: 1)
        #expect(closed == DeliveryCounts(sent: 15, dropped: 1, reconnects: 1))
        #expect(closed - DeliveryCounts(sent: 5) == DeliveryCounts(sent: 10, dropped: 1, reconnects: 1))
    }
}
