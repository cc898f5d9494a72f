import ArgumentParser
import FoundationEssentials
import LightOrganCore
import LightOrganOutput
import Logging

/// `lightorgan analyze FILE.wav`: the sender's analysis, as fast as possible, as CSV.
struct AnalyzeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "analyze",
        abstract: "Analyse a WAV file as fast as possible and write the frames as CSV to stdout.",
        discussion: """
            Columns: t_s (audio time in seconds of the last sample that contributed to the frame), \
            bass, mid, treble (0…255), beat (0, or on the frame where the beat tracker announces a beat its \
            place in the bar, 1…4 with 1 the downbeat) and bpm (the tempo it holds, one decimal; 0 while it \
            holds none: silence, noise, speech, a pad, or the first seconds of music). The analysis is the one \
            `lightorgan send` runs, with the analysis.* settings of the settings file; the beat tracker decides \
            each frame from the audio up to it, as it does live.
            """)

    @OptionGroup var common: CommonOptions

    @Argument(help: "The WAV file (16/24/32-bit PCM or 32-bit float, any channel count and rate).")
    var file: String

    @Option(help: "Frames per second, 10…1000 (default: sender.fps from the settings, 100).")
    var fps: Int?

    @Option(help: "Also draw the waveform and the three levels over time into this SVG file.")
    var plot: String?

    @Option(
        help:
            "Also draw every strip effect over time into this SVG file (the first 8 s: the beat effects follow the beat from its lock, about 3 s in; receiver.strip.pixels, .palette and .gamma from the settings)."
    )
    var stripPlot: String?

    @Option(help: CommonOptions.help("receiver.strip.pixels")) var stripPixels: String?

    func validate() throws {
        if let fps, !(10...1000).contains(fps) { throw ValidationError("--fps must be in 10…1000, not \(fps)") }
    }

    func run() async throws {
        try await reportingFailures {
            let logger = CommonOptions.prepareProcess(level: common.verbose ? .debug : .warning)
            let settings = try await common.loadSettings(
                [(stripPixels, "--strip-pixels", "receiver.strip.pixels")], logger: logger)
            let framesPerSecond = fps ?? settings.sender.framesPerSecond
            let wav: WAVFile
            do {
                wav = try WAVFile(path: file)
            } catch {
                throw Failure.badSetting("\(error)")
            }
            // The plot reads the file a second time, in step with the analysis.
            var plotter = plot.map { _ in
                LevelPlot(
                    title: "\(file) — \(framesPerSecond) frames/s", sampleRate: wav.format.sampleRate,
                    duration: wav.duration)
            }
            let strip = settings.receiver.strip
            var stripPlotter = stripPlot.map { _ in
                StripPlot(
                    title: String(file.split(separator: "/").last ?? ""), pixels: strip.pixels, palette: strip.palette,
                    gamma: strip.gamma)
            }
            var waveform = wav
            var producer = FrameProducer(source: wav, parameters: settings.analysis)
            var progress = ProgressBar(total: wav.duration)
            var output = "t_s,bass,mid,treble,beat,bpm\n"
            var tick = 1
            while let frame = try producer.frame(upTo: Double(tick) / Double(framesPerSecond)) {
                let time = Double(producer.consumedFrames - 1) / wav.format.sampleRate
                let beat = producer.lastBeat
                let levels = "\(frame.bass),\(frame.mid),\(frame.treble)"
                let bpm = String(cFormat: "%.1f", beat.bpm)
                output += "\(String(cFormat: "%.6f", time)),\(levels),\(beat.beat),\(bpm)\n"
                if plotter != nil {
                    let channels = wav.format.channels
                    let samples = waveform.read(frames: producer.consumedFrames - waveform.position)
                    plotter!.addWaveform(stride(from: 0, to: samples.count, by: channels).map { samples[$0] })
                    plotter!.addFrame(frame, at: time, envelopes: producer.lastEnvelopes)
                }
                if stripPlotter != nil, time <= 8 { stripPlotter!.add(frame, beat: beat, at: time) }
                if output.utf8.count > 1 << 16 {
                    StandardOutput.write(output)
                    output.removeAll(keepingCapacity: true)
                }
                progress.update(time)
                tick += 1
            }
            StandardOutput.write(output)
            progress.finish()
            if let stripPlot, let stripPlotter {
                do {
                    try stripPlotter.svg().write(toFile: stripPlot, atomically: true, encoding: .utf8)
                } catch {
                    throw Failure.runtime("cannot write \(stripPlot): \(SystemErrorText.reason(of: error))")
                }
            }
            if let plot, let plotter {
                do {
                    try plotter.svg().write(toFile: plot, atomically: true, encoding: .utf8)
                } catch {
                    throw Failure.runtime("cannot write \(plot): \(SystemErrorText.reason(of: error))")
                }
            }
        }
    }
}
