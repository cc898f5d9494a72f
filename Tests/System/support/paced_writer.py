"""Writes raw PCM into a pipe in real time, as librespot's pipe backend and shairport-sync's stdout do: blocks
of 0.11 s of audio, each written when its last sample is due.

    paced_writer.py AUDIO PIPE LOG [--rate-factor F] [--pause-at SECONDS --pause-for SECONDS]

AUDIO is raw S16LE 44.1 kHz stereo. `--rate-factor 1.001` writes the audio 0.1 % fast (a source whose clock
runs fast against the receiver's DAC); `--pause-at` stops writing after that much audio for `--pause-for`
seconds (a paused player), then goes on. LOG gets one line per block, "TIME FRAMES_SO_FAR", TIME on
CLOCK_MONOTONIC just before the write (the receivers' clock), "start TIME" first (sample n was made at
start + n / (44100 × F), pauses aside), and "pause TIME", "resume TIME" around a pause.
"""
import argparse
import os
import time

RATE = 44100
FRAME = 4


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("audio")
    parser.add_argument("pipe")
    parser.add_argument("log")
    parser.add_argument("--rate-factor", type=float, default=1.0)
    parser.add_argument("--pause-at", type=float)
    parser.add_argument("--pause-for", type=float, default=0.0)
    options = parser.parse_args()
    with open(options.audio, "rb") as audio:
        data = audio.read()
    frames = len(data) // FRAME
    rate = RATE * options.rate_factor
    block = int(RATE * 0.11)
    pause_frame = int(options.pause_at * RATE) if options.pause_at is not None else None
    descriptor = os.open(options.pipe, os.O_WRONLY)
    with open(options.log, "w", buffering=1) as log:
        start = time.monotonic()
        log.write(f"start {start:.6f}\n")
        position = 0
        while position < frames:
            count = min(block, frames - position)
            if pause_frame is not None and position < pause_frame <= position + count:
                count = max(1, pause_frame - position)
            due = start + (position + count) / rate
            time.sleep(max(0.0, due - time.monotonic()))
            log.write(f"{time.monotonic():.6f} {position + count}\n")
            os.write(descriptor, data[position * FRAME:(position + count) * FRAME])
            position += count
            if pause_frame is not None and position == pause_frame:
                log.write(f"pause {time.monotonic():.6f}\n")
                time.sleep(options.pause_for)
                start += options.pause_for
                log.write(f"resume {time.monotonic():.6f}\n")
    os.close(descriptor)


if __name__ == "__main__":
    main()
