package import LightOrganCore
import LightOrganNetwork
import LightOrganPOSIX
package import Logging
import Synchronization

/// The receiver's own sound (`receiver.sound`): AirPlay through shairport-sync, a pipe (Spotify
/// Connect's librespot), or a microphone, analysed here and offered to the ``LampSwitchboard`` as a
/// sender among the others; AirPlay and pipe sound is played too (`receiver.play`), and the lamps
/// change when it leaves the DAC.
///
/// Three threads, so the sound never waits for the lamps or the page:
/// - the **reader** takes what the input hands over (0.11 s at a time from shairport-sync), puts it
///   in the ``SoundQueue`` for the player, notes when it arrived (the source's clock), analyses it
///   and gives each frame to a ``SpeakerPacer``, due when its last sample is heard;
/// - the **player** writes the queue to the device 10 ms at a time, reads the device's delay after
///   each write and keeps the latency steady against a source that runs fast or slow
///   (``PlaybackSync``);
/// - the **pacer** sleeps until each frame is due and hands it to the switchboard.
///
/// A stream begins with the first audio after a pause and ends when none came for ``pauseMilliseconds``:
/// then the frames still waiting are shown at their time, the connection closes and the lamps go
/// off; the device plays out what it holds.
package final class OwnSound: @unchecked Sendable {
    // @unchecked Sendable: the reader's state (`analyzer`, `stream`…) is touched by the reader thread
    // alone; `status` is behind its Mutex; the queue has its own lock.
    /// No audio for this long ends a stream, milliseconds (shairport-sync writes every 110 ms).
    static let pauseMilliseconds = 500
    /// Frames of a source that is not played (`receiver.play: none`) wait this long, so the 0.11 s
    /// blocks of shairport-sync or a pipe still light the lamps one frame at a time, nanoseconds.
    static let unplayedPacingNanoseconds: Int64 = 150_000_000

    private let input: any OwnSoundInput
    private let player: (any SoundPlayer)?
    private let framesPerSecond: Int
    private let parameters: AnalysisParameters
    private let switchboard: LampSwitchboard
    private let logger: Logger
    private let queue: SoundQueue
    private let state = Mutex<(playing: Bool, stopped: Bool, streams: Int, failure: String?)>((false, false, 0, nil))
    /// The number of the stream whose connection is open on the switchboard, 0 for none. Every stream's
    /// connection has the same id (``PageStatistics/ownSoundID``), and a stream's last frames are shown after
    /// the next stream may have begun (its pacer drains them at their time): only the stream that opened
    /// the connection last may close it, so an ending stream never takes the lamps from the one after it.
    /// Held while the switchboard is told, so opening and closing never interleave.
    private let connectedStream = Mutex(0)
    /// Set when the reader (and the player) have ended: the input and the device are let go.
    private let ended = ThreadCondition()
    private var threadsRunning = 0
    /// Whether the pacing delay without a player applies (chunked inputs), else 0 (a microphone).
    private let pacesUnplayed: Bool

    package init(
        input: any OwnSoundInput, player: (any SoundPlayer)?, pacesUnplayed: Bool, framesPerSecond: Int,
        parameters: AnalysisParameters, switchboard: LampSwitchboard, logger: Logger
    ) {
        (self.input, self.player, self.pacesUnplayed) = (input, player, pacesUnplayed)
        (self.framesPerSecond, self.parameters, self.switchboard, self.logger) = (
            framesPerSecond, parameters, switchboard, logger
        )
        queue = SoundQueue(format: input.format)
    }

    /// What the page and the status show: `AirPlay: playing`, `AirPlay: idle`, `Snapcast: failed: snapclient
    /// exited with status 1 three times within seconds of starting: …`.
    var status: String {
        let (playing, failure) = state.withLock { ($0.playing, $0.failure) }
        if let failure { return "\(input.label): failed: \(failure)" }
        return "\(input.label): \(playing ? "playing" : "idle")\(input.details.map { " (\($0))" } ?? "")"
    }

    package func start() {
        ended.withLock { threadsRunning = player == nil ? 1 : 2 }
        DedicatedThread.start(named: "lightorgan sound", timeKeeping: true) { [self] in
            readLoop()
            threadEnded()
        }
        if player != nil {
            DedicatedThread.start(named: "lightorgan play", timeKeeping: true) { [self] in
                playLoop()
                threadEnded()
            }
        }
    }

    /// Ends the input and the player; the lamps of the stream go off (the switchboard's own
    /// shutdown turns them off too). With `waiting`, returns once both threads have ended (the
    /// input's program, the FIFO and the device let go), or after 5 s.
    package func stop(waiting: Bool = false) {
        state.withLock { $0.stopped = true }
        input.close()
        queue.stop()
        guard waiting else { return }
        let deadline = MonotonicClock.nanoseconds() + 5_000_000_000
        ended.withLock {
            while threadsRunning > 0, MonotonicClock.nanoseconds() < deadline { ended.wait(untilNanoseconds: deadline) }
        }
    }

    private func threadEnded() {
        ended.withLock {
            threadsRunning -= 1
            ended.signal()
        }
    }

    // MARK: The reader

    private func readLoop() {
        let format = input.format
        let blockFrames = Int(format.sampleRate / 5)
        var stream: Stream?
        while !state.withLock({ $0.stopped }) {
            let block: [Int16]?
            do {
                block = try input.read(
                    frames: blockFrames, timeoutMilliseconds: stream == nil ? 1_000 : Self.pauseMilliseconds)
            } catch {
                logger.error("\(input.label): \(error); the receiver goes on without its own sound")
                state.withLock { $0.failure = "\(error)" }
                break
            }
            guard let block else {
                if let ended = stream {
                    end(ended)
                    stream = nil
                }
                continue
            }
            if block.isEmpty { break }
            let now = MonotonicClock.nanoseconds()
            if stream == nil { stream = begin() }
            stream!.take(block, at: now)
        }
        if let stream { end(stream) }
        queue.stop()
    }

    /// A stream starts: a connection on the switchboard, a fresh analysis and pacer.
    private func begin() -> Stream {
        let number = state.withLock { state in
            state.playing = true
            state.streams += 1
            return state.streams
        }
        let connection = FrameConnection(localID: PageStatistics.ownSoundID, label: input.label) {}
        let switchboard = switchboard
        let admitted = connectedStream.withLock { connected in
            connected = number
            return switchboard.opened(connection)
        }
        let gate = Gate(
            FrameStream.Delivery { frame, beat in
                guard admitted else { return }
                switchboard.arrived(frame, beat: beat, completed: 1, bytes: LevelFrame.byteCount, on: connection)
            } finished: { [self] _ in
                connectedStream.withLock { connected in
                    guard admitted, connected == number else { return }
                    connected = 0
                    switchboard.closed(connection)
                }
            })
        let pacer = SpeakerPacer(sampleRate: input.format.sampleRate, framesPerSecond: framesPerSecond, into: gate)
        pacer.start()
        queue.begin(pacer: pacer, scheduled: input.lastReadDueNanoseconds != nil)
        logger.info("\(input.label): playing\(number > 1 ? " (stream \(number))" : "")")
        return Stream(
            owner: self, pacer: pacer,
            analyzer: BandAnalyzer(sampleRate: input.format.sampleRate, parameters: parameters))
    }

    private func end(_ stream: Stream) {
        stream.pacer.drainAndFinish()
        let figures = queue.end()
        state.withLock { $0.playing = false }
        var line = "\(input.label): idle"
        if player != nil, let figures {
            line +=
                "; the sound was \(figures.latencyMilliseconds) ms behind its source, \(figures.dropped) frames taken out and \(figures.inserted) put in to hold it, \(player?.underruns ?? 0) underruns so far"
        }
        logger.info("\(line)")
    }

    /// The delay of a frame's sound behind its source, for the pacer's clock. With a player the
    /// longest delay there is (``LightDelay/maximumMilliseconds``), which holds the stream's first
    /// frames until the player's first write: from then on the player tells the pacer when each
    /// sample leaves the DAC (``SoundQueue/deviceReading(nextSample:queuedFrames:at:)``) and each
    /// frame is due then. (A delay after when the audio was made, guessed from when it arrived,
    /// failed: shairport-sync handed its first second over in bursts, and a frame lit the lamps
    /// 0.8 s before its sound.) Without a player, none for an input that says when its sound is
    /// due (`scheduled`: Snapcast, whose clock the pacer then follows), else the pacing delay.
    fileprivate func frameDelay(scheduled: Bool) -> Int64 {
        guard player != nil else { return pacesUnplayed && !scheduled ? Self.unplayedPacingNanoseconds : 0 }
        return Int64(LightDelay.maximumMilliseconds) * 1_000_000
    }

    /// One stream's analysis on the reader thread.
    fileprivate final class Stream {
        unowned let owner: OwnSound
        let pacer: SpeakerPacer
        var analyzer: BandAnalyzer
        /// Sample frames read in this stream, and where the next frame ends.
        var consumed = 0
        var frameIndex = 1
        var nextFrameAt: Int

        init(owner: OwnSound, pacer: SpeakerPacer, analyzer: BandAnalyzer) {
            (self.owner, self.pacer, self.analyzer) = (owner, pacer, analyzer)
            nextFrameAt = Int(owner.input.format.sampleRate) / owner.framesPerSecond
        }

        func take(_ block: [Int16], at now: Int64) {
            let format = owner.input.format
            let channels = format.channels
            let frames = block.count / channels
            // An input that hands its sound over ahead of time says when it is due: the block's end is due then
            // plus its length, and that is the source's clock.
            let due = owner.input.lastReadDueNanoseconds
            let clock = due.map { $0 + Int64(frames) * 1_000_000_000 / Int64(format.sampleRate) } ?? now
            if owner.player != nil { owner.queue.push(block, arrivedAt: clock, firstDue: due) }
            pacer.observe(samples: consumed + frames, at: clock)
            if let due, owner.player == nil {
                // Nothing played here: each frame is due when the room hears its last sample, less the chain's
                // own latency, as a played sound's frames are (``SoundQueue/deviceReading``).
                pacer.hear(sample: consumed, at: due - Int64(LightDelay.chainLatencyMilliseconds) * 1_000_000)
            }
            var offset = 0
            block.withUnsafeBufferPointer { samples in
                while offset < frames {
                    let piece = min(frames - offset, nextFrameAt - consumed)
                    analyzer.process(
                        int16Interleaved: UnsafeBufferPointer(
                            rebasing: samples[offset * channels..<(offset + piece) * channels]),
                        channels: channels)
                    offset += piece
                    consumed += piece
                    guard consumed >= nextFrameAt else { continue }
                    let frame = analyzer.nextFrame()
                    pacer.add(
                        frame, beat: analyzer.lastBeat, endingAtSample: consumed,
                        delayNanoseconds: owner.frameDelay(scheduled: due != nil), now: now)
                    frameIndex += 1
                    nextFrameAt = Int(Double(frameIndex) * format.sampleRate / Double(owner.framesPerSecond))
                }
            }
        }
    }

    // MARK: The player

    private func playLoop() {
        guard let player else { return }
        let channels = input.format.channels
        let blockFrames = Int(input.format.sampleRate / 100)
        var correction = 0
        while true {
            switch queue.take(frames: blockFrames) {
            case .stopped:
                return
            case .streamEnded:
                player.finishStream()
                correction = 0
            case .samples(var block, let nextSample):
                PlaybackSync.stuff(&block, channels: channels, correction: correction)
                do {
                    try player.play(block)
                } catch {
                    logger.error("\(error); the sound is not played, the lamps go on")
                    queue.stopPlaying()
                    return
                }
                correction = queue.deviceReading(
                    nextSample: nextSample, queuedFrames: player.queuedFrames(), at: MonotonicClock.nanoseconds())
            }
        }
    }
}

/// The audio between the reader and the player, with the ``PlaybackSync`` both update, behind one
/// lock. Holds at most ``capacitySeconds`` (a player that stalls loses the oldest, never the reader).
final class SoundQueue: @unchecked Sendable {
    // @unchecked Sendable: everything below is touched with `condition` locked.
    static let capacitySeconds = 5.0
    /// A stream starts playing once this much of it is in, seconds: a source that writes 0.11 s at a
    /// time (shairport-sync, librespot) is then never waited for by a device that plays on.
    static let leadSeconds = 0.2
    private let condition = ThreadCondition()
    private let format: AudioFormat
    private var samples: [Int16] = []
    private var head = 0
    /// Sample frames pushed in this stream, and the index of the next one to play.
    private var arrived = 0
    private var taken = 0
    private var sync: PlaybackSync
    private var streaming = false
    /// The stream's lead is in (or it ended before): the player may take from it.
    private var primed = false
    private var endPending = false
    private var stopped = false
    private var playerGone = false
    /// The stream's pacer, told when each sample played is heard; the stream the player took its
    /// last block from (a reading after a block of the stream before is not this stream's).
    private var pacer: SpeakerPacer?
    private var stream = 0
    private var takenFromStream = -1

    init(format: AudioFormat) {
        self.format = format
        sync = PlaybackSync(sampleRate: format.sampleRate)
    }

    enum Take {
        case samples([Int16], nextSample: Int)
        case streamEnded
        case stopped
    }

    /// A stream starts; `scheduled`: its source's clock says when each sample is due to be heard, and the
    /// player holds it to that (``PlaybackSync/heldLatencyNanoseconds`` 0).
    func begin(pacer: SpeakerPacer, scheduled: Bool) {
        condition.withLock {
            self.pacer = pacer
            stream += 1
            samples.removeAll(keepingCapacity: true)
            head = 0
            (arrived, taken) = (0, 0)
            sync = PlaybackSync(sampleRate: format.sampleRate, heldLatencyNanoseconds: scheduled ? 0 : nil)
            streaming = true
            primed = false
            endPending = false
        }
    }

    /// What the stream that ends looked like; nil when nothing was played.
    struct Figures {
        var latencyMilliseconds: Int
        var dropped: Int
        var inserted: Int
    }

    func end() -> Figures? {
        condition.withLock {
            streaming = false
            endPending = true
            condition.signal()
            guard let latency = sync.latencyNanoseconds else { return nil }
            return Figures(
                latencyMilliseconds: Int(latency / 1_000_000), dropped: sync.dropped, inserted: sync.inserted)
        }
    }

    /// Reader: `block` arrived; its end was made by `now` (the source's clock); `firstDue`: when its first
    /// sample is due to be heard, for a source that says so.
    func push(_ block: [Int16], arrivedAt now: Int64, firstDue: Int64? = nil) {
        condition.withLock {
            guard !playerGone else { return }
            if let firstDue { sync.observeDue(sample: arrived, at: firstDue) }
            arrived += block.count / format.channels
            sync.observeArrival(samples: arrived, at: now)
            samples.append(contentsOf: block)
            let excess = samples.count - head - Int(Self.capacitySeconds * format.sampleRate) * format.channels
            if excess > 0 {
                head += excess
                taken += excess / format.channels
            }
            if head > 1 << 16 {
                samples.removeFirst(head)
                head = 0
            }
            condition.signal()
        }
    }

    /// Player: the next `frames` sample frames, waiting for them; at the end of a stream what is left.
    func take(frames: Int) -> Take {
        condition.withLock {
            while true {
                if stopped { return .stopped }
                let available = (samples.count - head) / format.channels
                if !primed, available >= Int(Self.leadSeconds * format.sampleRate) || !streaming { primed = true }
                if primed, available >= frames || (available > 0 && !streaming) {
                    let count = min(available, frames) * format.channels
                    let block = Array(samples[head..<head + count])
                    head += count
                    taken += count / format.channels
                    takenFromStream = stream
                    return .samples(block, nextSample: taken)
                }
                if endPending, available == 0 {
                    endPending = false
                    return .streamEnded
                }
                condition.wait()
            }
        }
    }

    /// Player, after a write: tells the stream's pacer when the stream's samples leave the DAC
    /// (``PlaybackSync/heardOrigin``), less the chain's own latency as the sender's delay counts it
    /// (``LightDelay/chainLatencyMilliseconds``: a frame stands for its 10 ms of audio, and the
    /// lamps' PWM period comes after it); returns the correction for the next block.
    func deviceReading(nextSample: Int, queuedFrames: Int?, at now: Int64) -> Int {
        guard let queuedFrames else { return 0 }
        return condition.withLock {
            var correction = sync.observeDevice(nextSample: nextSample, queuedFrames: queuedFrames, at: now)
            if correction < -1 {
                // Late by more than a block holds: the samples next in the queue are dropped here.
                let count = min(-correction, (samples.count - head) / format.channels)
                head += count * format.channels
                taken += count
                correction = 0
            }
            if takenFromStream == stream, let origin = sync.heardOrigin {
                pacer?.hear(sample: 0, at: origin - Int64(LightDelay.chainLatencyMilliseconds) * 1_000_000)
            }
            return correction
        }
    }

    /// The player failed: nothing more is queued.
    func stopPlaying() {
        condition.withLock {
            playerGone = true
            samples.removeAll()
            head = 0
        }
    }

    package func stop() {
        condition.withLock {
            stopped = true
            condition.signal()
        }
    }
}
