import LightOrganCore
import Testing

@Suite("Line driver modes")
struct LineDriverTests {
    func frame(_ bass: UInt8) -> LevelFrame { LevelFrame(bass: bass, mid: 0, treble: 0) }

    @Test("pwm shows each band's level with gamma on all its lines")
    func pwm() {
        var driver = LineDriver(mode: .pwm, bands: [.bass, .bass, .treble])
        #expect(
            driver.duties(for: LevelFrame(bass: 255, mid: 0, treble: 128), at: 0) == [
                1, 1, PWMSchedule.duty(forLevel: 128),
            ])
    }

    @Test("onoff switches on at the threshold and off only below threshold − hysteresis")
    func hysteresis() {
        var driver = LineDriver(mode: .onoff, bands: [.bass], threshold: 128, hysteresis: 32, minimumInterval: 0)
        let levels: [UInt8] = [100, 127, 128, 110, 97, 96, 95, 120, 127, 128]
        let states = levels.enumerated().map { driver.duties(for: frame($1), at: Double($0))[0] }
        #expect(states == [0, 0, 1, 1, 1, 1, 0, 0, 0, 1])
    }

    @Test("onoff never switches sooner than the minimum interval after the last switch")
    func minimumInterval() {
        var driver = LineDriver(mode: .onoff, bands: [.bass], threshold: 128, hysteresis: 32, minimumInterval: 0.1)
        #expect(driver.duties(for: frame(255), at: 1.00) == [1])
        #expect(driver.duties(for: frame(0), at: 1.05) == [1], "too soon to switch off")
        #expect(driver.duties(for: frame(0), at: 1.10) == [0])
        #expect(driver.duties(for: frame(255), at: 1.15) == [0], "too soon to switch on")
        #expect(driver.duties(for: frame(255), at: 1.20) == [1])
    }

    @Test("bar fills a band's lines in order, the last one in proportion")
    func bar() {
        var driver = LineDriver(mode: .bar, bands: [.bass, .bass, .bass, .bass, .mid])
        let duties = driver.duties(for: LevelFrame(bass: 159, mid: 255, treble: 0), at: 0)  // 159/255 × 4 = 2.49 lines
        #expect(duties[0] == 1 && duties[1] == 1)
        #expect(abs(duties[2] - PWMSchedule.duty(forLevel: 126)) < 0.01)
        #expect(duties[3] == 0 && duties[4] == 1)
    }
}
