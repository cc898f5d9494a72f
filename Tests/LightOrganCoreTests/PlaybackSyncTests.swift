import LightOrganCore
import LightOrganTestSupport
import Testing

@Suite("The Pi's own sound a steady time behind its source, and the lamps with it")
struct PlaybackSyncTests {
    /// What an hour of playing looked like.
    struct Hour {
        /// The true latency's spread after settling, nanoseconds (from made at the source to heard).
        var latencyLow: Int64 = .max
        var latencyHigh: Int64 = .min
        /// The largest miss of `heard(atSample:)` against when the sample truly left the DAC, nanoseconds.
        var worstPrediction: Int64 = 0
        /// Times the device ran dry, or the player found too little audio to write.
        var underruns = 0
        var starvedWrites = 0
        var dropped = 0
        var inserted = 0
    }

    /// Plays `seconds` of a source whose clock runs `drift` fast (0.001: 0.1 %) against a DAC at
    /// exactly 44.1 kHz, handed over as shairport-sync's stdout does: 1.1 s at once, then 0.11 s
    /// every 0.11 s, each up to 3 ms late. The player writes 10 ms blocks into a 40 ms device buffer
    /// whenever one fits, as ALSA's blocking writes do, and reads the device's delay after each.
    static func play(
        seconds: Int, drift: Double, seed: UInt64, corrects: Bool = true, reportsMoreAfter30s: Int = 0
    ) -> Hour {
        let rate = 44_100.0
        let sourceRate = rate * (1 + drift)
        let chunk = 4_851
        let period = 441
        let buffer = 4 * period
        let step: Int64 = 10_000_000
        let start: Int64 = 1_000_000_000_000
        var random = SplitMix64(seed: seed)
        var sync = PlaybackSync(sampleRate: rate)
        var hour = Hour()
        func made(_ sample: Int) -> Int64 { start + Int64((Double(sample) * 1e9 / sourceRate).rounded()) }
        var arrived = 0
        var nextDelivery = 10 * chunk  // the first write holds 1.1 s
        var nextArrival = made(nextDelivery)
        var taken = 0
        var queued = 0.0
        var playing = false
        var correction = 0
        var now = start
        let end = start + Int64(seconds) * 1_000_000_000
        while now < end {
            now += step
            while nextArrival <= now {
                arrived = nextDelivery
                sync.observeArrival(samples: arrived, at: nextArrival)
                nextDelivery += chunk
                nextArrival = made(nextDelivery) + Int64.random(in: 0...3_000_000, using: &random)
            }
            if playing {
                queued -= rate * Double(step) / 1e9
                if queued < 0 {
                    hour.underruns += 1
                    queued = 0
                }
            }
            guard arrived > 0 else { continue }
            playing = true
            while queued + Double(period + 1) <= Double(buffer) {
                guard arrived - taken >= period + 1 else {
                    hour.starvedWrites += 1
                    break
                }
                taken += period
                queued += Double(period + correction)
                let reported = Int(queued) + (now - start > 30_000_000_000 ? reportsMoreAfter30s : 0)
                correction = sync.observeDevice(nextSample: taken, queuedFrames: reported, at: now)
                if !corrects { correction = 0 }
                let heard = now + Int64((queued * 1e9 / rate).rounded())
                // From 3 s on, and (when the report steps) not in the 1.5 s its smoothing takes.
                let settling = reportsMoreAfter30s != 0 && (30_000_000_000...31_500_000_000).contains(now - start)
                guard now - start > 3_000_000_000, !settling, let predicted = sync.heard(atSample: taken) else {
                    continue
                }
                let latency = heard - made(taken)
                hour.latencyLow = min(hour.latencyLow, latency)
                hour.latencyHigh = max(hour.latencyHigh, latency)
                let reportedExtra = Int64(Double(now - start > 30_000_000_000 ? reportsMoreAfter30s : 0) * 1e9 / rate)
                hour.worstPrediction = max(hour.worstPrediction, abs(predicted - heard - reportedExtra))
            }
        }
        hour.dropped = sync.dropped
        hour.inserted = sync.inserted
        return hour
    }

    @Test(
        "an hour of a source 0.1 % fast or slow against the DAC: the delay holds within ±10 ms, no underrun",
        arguments: [0.001, -0.001])
    func anHour(drift: Double) {
        let hour = Self.play(seconds: 3_600, drift: drift, seed: 49)
        let spread = hour.latencyHigh - hour.latencyLow
        #expect(spread <= 20_000_000, "latency \(hour.latencyLow / 1_000_000)…\(hour.latencyHigh / 1_000_000) ms")
        #expect(hour.worstPrediction <= 10_000_000, "lamps off by \(hour.worstPrediction / 1_000_000) ms")
        #expect(hour.underruns == 0)
        #expect(hour.starvedWrites == 0)
        // 0.1 % of 44.1 kHz for an hour is 158,760 frames to take out or put in.
        let corrected = drift > 0 ? hour.dropped - hour.inserted : hour.inserted - hour.dropped
        #expect(abs(corrected - 158_760) < 1_000, "dropped \(hour.dropped), inserted \(hour.inserted)")
    }

    @Test("when each sample is heard comes from the device's readings alone: a burst from the source does not move it")
    func heardFromTheReadings() {
        var sync = PlaybackSync(sampleRate: 48_000)
        let second: Int64 = 1_000_000_000
        // The source hands its first second over at once at 10 s, then 10 ms at a time on time.
        sync.observeArrival(samples: 48_000, at: 10 * second)
        // A device that plays sample n at 10.3 s + n / 48 kHz: after each 10 ms write it holds what is not yet
        // heard. The readings come late by up to 3 ms (a busy player), which the device's count makes up for.
        for block in 1...200 {
            let now = 10 * second + Int64(block) * 10_000_000 + Int64(block % 4) * 1_000_000
            sync.observeArrival(samples: 48_000 + block * 480, at: now)
            let nextSample = block * 480 + 14_400  // 0.3 s written ahead of the DAC
            let heardUpTo = Double(now - (10 * second + 300_000_000)) / 1e9 * 48_000
            _ = sync.observeDevice(nextSample: nextSample, queuedFrames: nextSample - Int(heardUpTo), at: now)
        }
        let origin = try? #require(sync.heardOrigin)
        #expect(
            origin.map { abs($0 - (10 * second + 300_000_000)) <= 50_000 } == true, "sample 0 heard at \(origin ?? -1)")
    }

    @Test("with no drift it leaves the sound alone")
    func noDrift() {
        let hour = Self.play(seconds: 600, drift: 0, seed: 7)
        // Under one correction in 5 s: the blocks' jitter, not a drift.
        #expect(hour.dropped + hour.inserted < 120, "dropped \(hour.dropped), inserted \(hour.inserted)")
        #expect(hour.latencyHigh - hour.latencyLow <= 20_000_000)
        #expect(hour.underruns == 0)
    }

    @Test("a device that starts to report 200 ms more delay moves the lamps, not the sound")
    func reportedDelayStep() {
        let hour = Self.play(seconds: 120, drift: 0, seed: 3, reportsMoreAfter30s: 8_820)
        #expect(hour.dropped + hour.inserted < 50, "dropped \(hour.dropped), inserted \(hour.inserted)")
        #expect(hour.latencyHigh - hour.latencyLow <= 20_000_000)
        // heard(atSample:) follows the report (checked from 1.5 s after the step, once smoothed).
        #expect(hour.worstPrediction <= 10_000_000, "off by \(hour.worstPrediction / 1_000_000) ms")
    }

    @Test("without correction a 0.1 % slow source runs the device dry within the hour")
    func uncorrectedFails() {
        // The simulation can fail: the same source, with every correction thrown away, starves.
        let hour = Self.play(seconds: 3_600, drift: -0.001, seed: 49, corrects: false)
        #expect(hour.starvedWrites > 0 || hour.underruns > 0)
    }

    @Test("a correction takes one frame out or puts one in, averaged, in the block's middle")
    func stuffing() {
        var block: [Int16] = [0, 0, 10, -10, 20, -20, 30, -30]
        PlaybackSync.stuff(&block, channels: 2, correction: -1)
        #expect(block == [0, 0, 15, -15, 30, -30])
        var longer: [Int16] = [0, 0, 10, -10, 20, -20, 30, -30]
        PlaybackSync.stuff(&longer, channels: 2, correction: 1)
        #expect(longer == [0, 0, 10, -10, 15, -15, 20, -20, 30, -30])
        var single: [Int16] = [5, 5]
        PlaybackSync.stuff(&single, channels: 2, correction: 1)
        #expect(single == [5, 5])
    }

    @Test("a larger correction puts silence first or drops the block's first frames")
    func stuffingWhole() {
        var block: [Int16] = [1, 1, 2, 2]
        PlaybackSync.stuff(&block, channels: 2, correction: 3)
        #expect(block == [0, 0, 0, 0, 0, 0, 1, 1, 2, 2])
        PlaybackSync.stuff(&block, channels: 2, correction: -4)
        #expect(block == [2, 2])
        PlaybackSync.stuff(&block, channels: 2, correction: -9)
        #expect(block.isEmpty)
    }

    /// A Snapcast room: the source's clock says when each sample is due to be heard (sample k arrives at
    /// start + k / rate and is due `lead` later), and the player holds latency 0. It writes 10 ms blocks from
    /// `firstWrite` after the start into a device that plays 10 ms each step; from step `moreDelayAt` on the
    /// device holds (and reports) 100 ms more. Returns, for each write, how far from due its first sample is
    /// heard, nanoseconds (negative: early), and every correction returned.
    static func playScheduled(
        seconds: Int, lead: Int64, firstWrite: Int64, moreDelayAt: Int? = nil
    ) -> (misses: [Int64], corrections: [Int]) {
        let rate = 48_000.0
        let period = 480
        let start: Int64 = 1_000_000_000_000
        func nanoseconds(_ frames: Int) -> Int64 { Int64((Double(frames) * 1e9 / rate).rounded()) }
        func due(_ sample: Int) -> Int64 { start + lead + nanoseconds(sample) }
        var sync = PlaybackSync(sampleRate: rate, heldLatencyNanoseconds: 0)
        var (misses, corrections): ([Int64], [Int]) = ([], [])
        var (taken, queued, extra, correction) = (0, 0, 0, 0)
        var now = start + firstWrite
        for step in 0..<seconds * 100 {
            if step == moreDelayAt { extra = 4_800 }
            let arrived = Int(Double(now - start) * rate / 1e9)
            sync.observeDue(sample: arrived, at: due(arrived))
            sync.observeArrival(samples: arrived, at: due(arrived))
            var (silence, written) = (0, period)
            if correction > 1 {
                silence = correction
            } else if correction < -1 {
                taken -= correction  // dropped from the queue before this write
            } else {
                written += correction
            }
            misses.append(now + nanoseconds(queued + extra + silence) - due(taken))
            queued += silence + written
            taken += period
            correction = sync.observeDevice(nextSample: taken, queuedFrames: queued + extra, at: now)
            corrections.append(correction)
            now += 10_000_000
            queued = max(0, queued - period)
        }
        return (misses, corrections)
    }

    @Test("a Snapcast room starting 100 ms early puts in the silence at once and is heard when due")
    func scheduledStart() {
        let (misses, corrections) = Self.playScheduled(seconds: 10, lead: 300_000_000, firstWrite: 200_000_000)
        #expect(misses.first! < -90_000_000)
        #expect(corrections.filter { $0 > 1 }.count == 1, "\(corrections.filter { abs($0) > 1 })")
        let settled = misses.dropFirst(50)
        #expect(settled.allSatisfy { abs($0) <= 1_500_000 }, "\(settled.min()! / 1000) … \(settled.max()! / 1000) µs")
    }

    @Test("a Snapcast room whose device holds 100 ms more drops that much at once and is heard when due again")
    func scheduledDeviceStep() {
        let (misses, corrections) = Self.playScheduled(
            seconds: 10, lead: 300_000_000, firstWrite: 200_000_000, moreDelayAt: 500)
        #expect(misses[500] > 90_000_000)
        #expect(corrections[500...].filter { $0 < -1 }.count == 1, "\(corrections.filter { abs($0) > 1 })")
        let settled = misses.dropFirst(550)
        #expect(settled.allSatisfy { abs($0) <= 1_500_000 }, "\(settled.min()! / 1000) … \(settled.max()! / 1000) µs")
    }

    @Test("a source that says when its blocks are due: a sample is due from the block it is in, across a jump")
    func dueTimes() {
        var times = DueTimes(sampleRate: 48_000)
        #expect(times.due(ofSample: 0) == nil)
        times.record(sample: 0, due: 1_000_000_000)
        times.record(sample: 2_400, due: 1_050_000_000)
        // The client repeated 40 ms: the next block is due 40 ms later than the count says.
        times.record(sample: 4_800, due: 1_140_000_000)
        #expect(times.due(ofSample: 480) == 1_010_000_000)
        #expect(times.due(ofSample: 2_400 + 480) == 1_060_000_000)
        #expect(times.due(ofSample: 4_800 + 48) == 1_141_000_000)
        for block in 3..<(3 + DueTimes.capacity) {
            times.record(sample: block * 2_400, due: 1_040_000_000 + Int64(block) * 50_000_000)
        }
        // Older than every anchor kept: from the oldest kept (block 3, due 1.19 s; sample 0 is 150 ms before).
        let expected: Int64 = 1_040_000_000
        #expect(times.due(ofSample: 0) == expected)
    }
}
