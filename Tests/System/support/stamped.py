"""Runs a command and stamps what it writes with CLOCK_MONOTONIC (the clock of the receivers'
`--output stdout` lines), as it arrives, before anything else is done with it:

    python3 stamped.py reads AUDIO LOG -- COMMAND…   each read(2) of COMMAND's stdout: LOG gets
                                                     "time bytes-so-far", AUDIO the bytes
    python3 stamped.py lines LOG -- COMMAND…         each line of COMMAND's stderr: LOG gets
                                                     "time line"

SIGTERM ends the command (SIGTERM too), the files are written out, and this exits.
"""
import os
import signal
import subprocess
import sys
import time


def main():
    separator = sys.argv.index("--")
    mode, files, command = sys.argv[1], sys.argv[2:separator], sys.argv[separator + 1:]
    if mode == "reads":
        child = subprocess.Popen(command, stdout=subprocess.PIPE, stdin=subprocess.DEVNULL)
        source = child.stdout.fileno()
    else:
        child = subprocess.Popen(command, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL)
        source = child.stderr.fileno()

    def end(*_):
        if child.poll() is None:
            child.terminate()
        raise SystemExit(0)
    signal.signal(signal.SIGTERM, end)
    try:
        if mode == "reads":
            with open(files[0], "wb") as audio, open(files[1], "w") as log:
                total = 0
                while data := os.read(source, 1 << 16):
                    now = time.monotonic()
                    total += len(data)
                    audio.write(data)
                    log.write(f"{now:.6f} {total}\n")
        else:
            with open(files[0], "w") as log:
                pending = b""
                while data := os.read(source, 1 << 16):
                    now = time.monotonic()
                    pending += data
                    *lines, pending = pending.split(b"\n")
                    for line in lines:
                        log.write(f"{now:.6f} {line.decode(errors='replace')}\n")
                    log.flush()
    finally:
        if child.poll() is None:
            child.terminate()
        child.wait()


if __name__ == "__main__":
    main()
