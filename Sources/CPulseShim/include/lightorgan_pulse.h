#ifndef LIGHTORGAN_PULSE_H
#define LIGHTORGAN_PULSE_H
#include <stddef.h>
#include <stdint.h>

/// A record stream of the user's sound server (PulseAudio, or PipeWire's pipewire-pulse) through
/// libpulse's asynchronous API, libpulse.so.0 loaded when the first recorder starts (so the Pi's
/// package does not depend on it). The audio goes into a pipe as raw interleaved s16le; the
/// server's own timing of the stream (`lightorgan_pulse_timing`) says when its samples were made.
typedef struct lightorgan_pulse_recorder lightorgan_pulse_recorder;

/// Starts recording source `device` (e.g. "speakers.monitor") at `rate` Hz, `channels` channels,
/// asking the server for blocks of `block_bytes` (it adjusts the source's latency to them). The
/// stream's audio is written into a pipe whose read end is returned in `*descriptor` (the caller
/// closes it after `lightorgan_pulse_stop`); the pipe ends when the stream fails or stops. The
/// threads it starts run at `nice` where allowed. NULL, with one line in `error`, when libpulse is
/// not installed, no server answers within 3 s, or the server refuses the stream (no such source).
lightorgan_pulse_recorder *lightorgan_pulse_record(const char *device, const char *client_name, unsigned rate,
                                                   unsigned channels, unsigned block_bytes, int nice,
                                                   int *descriptor, char *error, size_t error_size);

/// The server's latest word on when the stream's audio was made: its sample frame `*frame` (counted
/// from the stream's start, as written into the pipe) was made at `*made_at` (CLOCK_MONOTONIC,
/// nanoseconds), and the newest audio written into the pipe had waited `*lag` nanoseconds since
/// then (the capture's own latency). Asked of the server about ten times a second while the
/// source runs. Returns 1, or 0 while the server has not yet said (or says the source is paused).
int lightorgan_pulse_timing(lightorgan_pulse_recorder *recorder, int64_t *frame, int64_t *made_at, int64_t *lag);

/// Why the stream ended, or "" while it runs (valid until `lightorgan_pulse_stop`).
const char *lightorgan_pulse_failure(lightorgan_pulse_recorder *recorder);

/// Ends the stream and its thread, closes the pipe's write end and frees the recorder.
void lightorgan_pulse_stop(lightorgan_pulse_recorder *recorder);

#endif
