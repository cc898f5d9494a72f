/// Keeps the receiver's own sound (AirPlay, a pipe) a steady time behind its source while it plays,
/// and says when each sample is heard, so the lamps change with the speaker.
///
/// Two clocks meet here: the source's (when its samples were made, ``AudioClock``, from when
/// they arrived) and the DAC's (how many frames the device still holds before they are heard, from
/// `snd_pcm_delay`). A sample's *latency*, from being made to leaving the DAC, is two parts: the
/// *wait* before it is written (now − when the next sample to write was made: the queue before the
/// device) and the device's *delay*. A source that runs a little fast against the DAC (0.1 % is
/// 3.6 s an hour) makes samples pile up before the device, and the wait grows; a slow one drains
/// the queue until the device underruns. So once the stream has settled (``settleNanoseconds``),
/// the wait it had then is the target, and whenever the smoothed wait strays more than
/// ``toleranceNanoseconds`` from it, the next block played is one sample frame shorter (two frames
/// averaged into one) or longer (one averaged frame inserted): at most one per block, which at
/// 10 ms blocks corrects up to 0.23 % at 44.1 kHz, inaudibly (``stuff(_:channels:correction:)``).
/// The device's delay is only followed, never corrected: a device that reports another delay (a
/// sound server that has just timed its far end) moves the lamps with it, not the sound.
///
/// A source whose clock says when each sample is *due* to be heard (a Snapcast room: the server's
/// time, less the room's latency) gives the latency to hold, ``heldLatencyNanoseconds`` (0: heard
/// when due): then the target wait is that less the device's delay, from the first reading, and a
/// stray over ``jumpNanoseconds`` (the stream's start, a stall, a device that reports another delay)
/// is put right at once, by silence inserted or samples dropped, rather than a frame a block.
///
/// Times are monotonic nanoseconds. Pure logic with the time passed in; memory is fixed.
public struct PlaybackSync: Sendable {
    /// Sample frames per second of the source and the device.
    public let sampleRate: Double
    /// How long after the first reading the target is taken, nanoseconds.
    public static let settleNanoseconds: Int64 = 1_000_000_000
    /// How far the smoothed wait may stray from the target before a block is corrected, nanoseconds.
    public static let toleranceNanoseconds: Int64 = 1_000_000
    /// The time constant of the readings' smoothing, nanoseconds.
    public static let smoothingNanoseconds: Int64 = 200_000_000
    /// With a held latency, a smoothed stray beyond this is put right in one step, nanoseconds (a frame a
    /// block takes 2 ms a second: a room 12 ms off would take six).
    public static let jumpNanoseconds: Int64 = 5_000_000
    /// The latency to hold from the first reading, nanoseconds; nil: the one the stream settled on.
    public let heldLatencyNanoseconds: Int64?
    /// With a held latency: when each sample is due, as the source says (``observeDue(sample:at:)``), in place
    /// of ``source``'s estimate.
    public private(set) var dueTimes: DueTimes

    /// When the source made its samples.
    public private(set) var source: AudioClock
    /// The wait before the device and the device's delay, smoothed; nil before the first reading.
    public private(set) var waitNanoseconds: Int64?
    public private(set) var deviceNanoseconds: Int64?
    /// When the source's sample 0 leaves the DAC by the device's readings (when each written sample
    /// is heard: the time of the reading plus the frames the device held, less the samples before
    /// it), smoothed; nil before the first reading. Unlike ``heard(atSample:)`` this needs no guess
    /// of when the source made its audio, so a source that hands a second over at once does not
    /// move it.
    public private(set) var heardOrigin: Int64?
    /// The wait held once settled; nil before.
    public private(set) var targetWaitNanoseconds: Int64?
    /// Sample frames dropped and inserted so far.
    public private(set) var dropped = 0
    public private(set) var inserted = 0
    private var firstReading: Int64?
    private var lastJump: Int64?
    private var lastReading: Int64?

    public init(sampleRate: Double, heldLatencyNanoseconds: Int64? = nil) {
        self.sampleRate = sampleRate
        self.heldLatencyNanoseconds = heldLatencyNanoseconds
        source = AudioClock(sampleRate: sampleRate)
        dueTimes = DueTimes(sampleRate: sampleRate)
    }

    /// From a sample being made to it leaving the DAC: the wait held (or seen, before it is held)
    /// and the device's delay, nanoseconds; nil before the first reading.
    public var latencyNanoseconds: Int64? {
        guard let wait = targetWaitNanoseconds ?? waitNanoseconds, let device = deviceNanoseconds else { return nil }
        return wait + device
    }

    /// Reader: `samples` sample frames in all had arrived from the source by `nanoseconds`.
    public mutating func observeArrival(samples: Int, at nanoseconds: Int64) {
        source.observe(samples: samples, at: nanoseconds)
    }

    /// Reader, for a source that says when its sound is due (with a held latency): sample frame `sample`, the
    /// first of a block, is due at `nanoseconds`.
    public mutating func observeDue(sample: Int, at nanoseconds: Int64) {
        dueTimes.record(sample: sample, due: nanoseconds)
    }

    /// Player, after a write: the device held `queuedFrames` frames not yet heard at `now`, and the
    /// next frame it will be given is the source's sample frame `nextSample`. Returns the correction
    /// for the next block: −1 (one frame fewer), +1 (one more) or 0; with a held latency, a stray
    /// over ``jumpNanoseconds`` is returned whole: −n (drop the next n frames), +n (n frames of
    /// silence first).
    public mutating func observeDevice(nextSample: Int, queuedFrames: Int, at now: Int64) -> Int {
        let said = heldLatencyNanoseconds != nil ? dueTimes.due(ofSample: nextSample) : nil
        guard let made = said ?? source.nanoseconds(atSample: nextSample) else { return 0 }
        let wait = now - made
        let device = source.duration(ofSamples: max(0, queuedFrames))
        let origin = now + device - source.duration(ofSamples: nextSample)
        if let smoothedWait = waitNanoseconds, let smoothedDevice = deviceNanoseconds, let smoothedOrigin = heardOrigin,
            let last = lastReading
        {
            let weight = min(1, Double(max(0, now - last)) / Double(Self.smoothingNanoseconds))
            waitNanoseconds = smoothedWait + Int64((Double(wait - smoothedWait) * weight).rounded())
            deviceNanoseconds = smoothedDevice + Int64((Double(device - smoothedDevice) * weight).rounded())
            heardOrigin = smoothedOrigin + Int64((Double(origin - smoothedOrigin) * weight).rounded())
        } else {
            (waitNanoseconds, deviceNanoseconds, heardOrigin) = (wait, device, origin)
            firstReading = now
        }
        lastReading = now
        guard let smoothed = waitNanoseconds, let first = firstReading else { return 0 }
        if let held = heldLatencyNanoseconds, let smoothedDevice = deviceNanoseconds {
            targetWaitNanoseconds = held - smoothedDevice
            // The smoothed latency decides (one reading may be off by a period), this reading's own says how
            // much: a write made late finds the device as much emptier, so their sum holds, and a device that
            // now holds more (a sound server that has timed its far end) is put right in one step.
            // After a jump the smoothing starts from that one reading: a second waits for it to settle.
            let settledSinceJump = lastJump.map { now - $0 >= Self.settleNanoseconds } ?? true
            if settledSinceJump, abs(smoothed + smoothedDevice - held) > Self.jumpNanoseconds {
                lastJump = now
                let frames = Int((Double(wait + device - held) * sampleRate / 1e9).rounded())
                // The samples after it are written that much sooner (dropped) or later (silence).
                let shift = source.duration(ofSamples: abs(frames)) * (frames > 0 ? -1 : 1)
                (waitNanoseconds, deviceNanoseconds, heardOrigin) = (wait + shift, device, origin + shift)
                targetWaitNanoseconds = held - device
                if frames > 0 { dropped += frames } else { inserted -= frames }
                return -frames
            }
        }
        if targetWaitNanoseconds == nil, now - first >= Self.settleNanoseconds { targetWaitNanoseconds = smoothed }
        guard let target = targetWaitNanoseconds else { return 0 }
        if smoothed > target + Self.toleranceNanoseconds {
            dropped += 1
            return -1
        }
        if smoothed < target - Self.toleranceNanoseconds {
            inserted += 1
            return 1
        }
        return 0
    }

    /// When the source's sample frame `sample` leaves the DAC (monotonic nanoseconds): when it was
    /// made plus the latency; nil before the first device reading.
    public func heard(atSample sample: Int) -> Int64? {
        guard let latency = latencyNanoseconds else { return nil }
        return source.nanoseconds(atSample: sample).map { $0 + latency }
    }

    /// Applies a correction to a block of interleaved 16-bit sample frames: −1 replaces the two
    /// frames in its middle by their average, +1 inserts their average between them; +n puts n
    /// frames of silence before it, −n drops its first n frames (all of it when it holds fewer).
    /// Blocks of fewer than 2 frames stay as they are for ±1.
    public static func stuff(_ samples: inout [Int16], channels: Int, correction: Int) {
        if correction > 1 {
            samples.insert(contentsOf: repeatElement(0, count: correction * channels), at: 0)
            return
        }
        if correction < -1 {
            samples.removeFirst(min(samples.count, -correction * channels))
            return
        }
        let frames = samples.count / channels
        guard correction != 0, frames >= 2 else { return }
        let middle = frames / 2 - 1
        var average = [Int16](repeating: 0, count: channels)
        for channel in 0..<channels {
            let left = Int(samples[middle * channels + channel])
            let right = Int(samples[(middle + 1) * channels + channel])
            average[channel] = Int16((left + right) / 2)
        }
        if correction < 0 {
            samples.replaceSubrange(middle * channels..<(middle + 2) * channels, with: average)
        } else {
            samples.insert(contentsOf: average, at: (middle + 1) * channels)
        }
    }
}
