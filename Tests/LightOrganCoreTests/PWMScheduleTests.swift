import LightOrganCore
import Testing

@Suite("PWM schedule")
struct PWMScheduleTests {
    @Test("turns lines on together and off at their own duty, one write per distinct duty")
    func edgesPerDistinctDuty() {
        let schedule = PWMSchedule(duties: [0.25, 0.75, 0.25, 0, 1])
        #expect(
            schedule.edges == [
                .init(offset: 0, values: [1, 1, 1, 0, 1]),
                .init(offset: 0.25, values: [0, 1, 0, 0, 1]),
                .init(offset: 0.75, values: [0, 0, 0, 0, 1]),
            ])
    }

    @Test("all off is a single write of zeros, all full a single write of ones")
    func extremes() {
        #expect(PWMSchedule(duties: [0, 0, 0]).edges == [.init(offset: 0, values: [0, 0, 0])])
        #expect(PWMSchedule(duties: [1, 1.5, 1]).edges == [.init(offset: 0, values: [1, 1, 1])])
    }

    @Test(
        "time on per period equals the duty, for any set of duties",
        arguments: [[0.1, 0.5, 0.9], [0.333, 0.333, 0.001], [0.999, 0.5, 0]])
    func onTimeMatchesDuty(duties: [Double]) {
        let edges = PWMSchedule(duties: duties).edges
        for line in duties.indices {
            var onTime = 0.0
            for (index, edge) in edges.enumerated() where edge.values[line] == 1 {
                onTime += (index + 1 < edges.count ? edges[index + 1].offset : 1) - edge.offset
            }
            #expect(abs(onTime - duties[line]) < 0.001, "line \(line): \(onTime) vs \(duties[line])")
        }
    }

    @Test("maps levels through gamma 2.2")
    func gamma() {
        #expect(PWMSchedule.duty(forLevel: 0) == 0)
        #expect(PWMSchedule.duty(forLevel: 255) == 1)
        #expect(abs(PWMSchedule.duty(forLevel: 128) - 0.2195) < 0.001)
    }

    @Test(
        "is steady (nothing to do until the duties change) only when every line is fully on or off",
        arguments: [
            ([0.0, 1.0, 0.0], true), ([1.0, 1.0, 1.0], true), ([0.0, 0.0, 0.0], true), ([0.0, 0.5, 1.0], false),
            ([0.0004, 1.0], true), ([0.001, 1.0], false),
        ])
    func steady(duties: [Double], steady: Bool) {
        #expect(PWMSchedule(duties: duties).isSteady == steady)
    }
}
