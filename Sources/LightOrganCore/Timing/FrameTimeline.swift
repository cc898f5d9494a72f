/// A live source's frames waiting for their moment: each is due `delayNanoseconds` after the last
/// sample it analyses was made (``AudioClock``), so delayed lamps change at the pace the audio
/// was made, not at the pace it was handed over.
///
/// A monitor hands its audio over in blocks; holding the frames of a block back by a count of
/// frames would send them back to back when the block arrives, and the receiver would show only
/// the last. Here each frame waits for its own time. Whatever is due is taken as one frame, the
/// newest (newest wins: a late wake-up or a shortened delay skips frames, it never sends a burst).
///
/// Invariant: at most ``capacity`` frames wait (the oldest is dropped to make room); memory is
/// fixed at creation.
public struct FrameTimeline: Sendable {
    /// The most frames that can wait.
    public let capacity: Int
    /// When the samples were made.
    public private(set) var clock: AudioClock
    /// How long after its audio a frame is due, nanoseconds (≥ 0).
    public var delayNanoseconds: Int64 = 0
    /// Where a player put the source's audio on the monotonic clock: its sample `sample` leaves the
    /// DAC at `nanoseconds`. Once set, a frame is due when its last sample leaves the DAC (this plus
    /// the samples between, at the source's rate), and ``clock`` and ``delayNanoseconds`` no longer
    /// count: when the audio was made, guessed from when it arrived, is no help for a source that
    /// hands a second over at once, and the player knows when each sample is heard.
    public var heard: (sample: Int, nanoseconds: Int64)?
    private var frames: [LevelFrame]
    /// What the beat tracker said of each frame (``BeatState/none`` for a source analysed without one).
    private var beats: [BeatState]
    private var endSamples: [Int]
    /// Frames added in all; frames before `taken` were sent or skipped.
    private var added = 0
    private var taken = 0

    /// A timeline for a source of `sampleRate` samples per second holding at most `capacity` frames (≥ 1).
    public init(sampleRate: Double, capacity: Int) {
        self.capacity = max(1, capacity)
        clock = AudioClock(sampleRate: sampleRate)
        frames = Array(repeating: .off, count: self.capacity)
        beats = Array(repeating: .none, count: self.capacity)
        endSamples = Array(repeating: 0, count: self.capacity)
    }

    /// A timeline long enough for the longest delay at `framesPerSecond`, with a second to spare.
    public init(sampleRate: Double, framesPerSecond: Int) {
        self.init(sampleRate: sampleRate, capacity: (LightDelay.maximumMilliseconds / 1000 + 1) * framesPerSecond)
    }

    /// How many frames wait.
    public var waiting: Int { added - taken }

    /// Records that `samples` samples in all had arrived by `nanoseconds` (monotonic); see ``AudioClock``.
    public mutating func observe(samples: Int, at nanoseconds: Int64) {
        clock.observe(samples: samples, at: nanoseconds)
    }

    /// Adds `frame`, which analyses the audio up to sample `endSample` (frames come in sample order), with what
    /// the beat tracker said of it.
    public mutating func add(_ frame: LevelFrame, beat: BeatState = .none, endingAtSample endSample: Int) {
        if waiting == capacity { taken += 1 }
        frames[added % capacity] = frame
        beats[added % capacity] = beat
        endSamples[added % capacity] = endSample
        added += 1
    }

    /// When the oldest waiting frame is due (monotonic nanoseconds); nil when none waits.
    public var nextDue: Int64? {
        guard waiting > 0 else { return nil }
        return due(taken)
    }

    /// The newest waiting frame due by `now` (monotonic nanoseconds), skipping the older ones that
    /// are due too; nil when none is due yet.
    public mutating func takeDue(now: Int64) -> LevelFrame? {
        takeDueWithBeat(now: now)?.frame
    }

    /// As ``takeDue(now:)``, with the newest frame's beat state; a beat announced on a frame skipped here is
    /// carried to the newest, so that no beat is lost to a late wake-up.
    public mutating func takeDueWithBeat(now: Int64) -> (frame: LevelFrame, beat: BeatState)? {
        var newest: (frame: LevelFrame, beat: BeatState)?
        var skippedBeat = 0
        while taken < added, let due = due(taken), due <= now {
            if let skipped = newest, skipped.beat.beat > 0 { skippedBeat = skipped.beat.beat }
            newest = (frames[taken % capacity], beats[taken % capacity])
            taken += 1
        }
        if skippedBeat > 0, newest?.beat.beat == 0, newest?.beat.bpm ?? 0 > 0 { newest?.beat.beat = skippedBeat }
        return newest
    }

    private func due(_ index: Int) -> Int64? {
        let endSample = endSamples[index % capacity]
        if let heard {
            return heard.nanoseconds + clock.duration(ofSamples: endSample - heard.sample)
        }
        return clock.nanoseconds(atSample: endSample).map { $0 + delayNanoseconds }
    }
}
