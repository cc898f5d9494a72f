// A record stream through libpulse's asynchronous API, loaded with dlopen: see lightorgan_pulse.h.
//
// The few libpulse types and constants used are declared here (prefixed lo_), so the build needs no
// libpulse-dev (the Pi's package builds in a chroot without it). Where its headers are installed they
// are checked against them at compile time (the _Static_asserts below); libpulse.so.0's ABI has been
// stable since 2008.
#define _GNU_SOURCE
#include "lightorgan_pulse.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

typedef struct lo_pa_threaded_mainloop lo_pa_threaded_mainloop;
typedef struct lo_pa_mainloop_api lo_pa_mainloop_api;
typedef struct lo_pa_context lo_pa_context;
typedef struct lo_pa_stream lo_pa_stream;
typedef struct lo_pa_operation lo_pa_operation;
typedef uint64_t lo_pa_usec_t;

typedef struct {
    int format;
    uint32_t rate;
    uint8_t channels;
} lo_pa_sample_spec;

typedef struct {
    uint32_t maxlength, tlength, prebuf, minreq, fragsize;
} lo_pa_buffer_attr;

typedef struct {
    struct timeval timestamp;
    int synchronized_clocks;
    lo_pa_usec_t sink_usec;
    lo_pa_usec_t source_usec;
    lo_pa_usec_t transport_usec;
    int playing;
    int write_index_corrupt;
    int64_t write_index;
    int read_index_corrupt;
    int64_t read_index;
    lo_pa_usec_t configured_sink_usec;
    lo_pa_usec_t configured_source_usec;
    int64_t since_underrun;
} lo_pa_timing_info;

enum {
    LO_PA_SAMPLE_S16LE = 3,
    LO_PA_CONTEXT_NOAUTOSPAWN = 1,
    LO_PA_CONTEXT_READY = 4,
    LO_PA_CONTEXT_FAILED = 5,
    LO_PA_CONTEXT_TERMINATED = 6,
    LO_PA_STREAM_READY = 2,
    LO_PA_STREAM_FAILED = 3,
    LO_PA_STREAM_TERMINATED = 4,
    LO_PA_STREAM_ADJUST_LATENCY = 0x2000,
};

#if __has_include(<pulse/pulseaudio.h>)
#include <pulse/pulseaudio.h>
#include <stddef.h>
_Static_assert(LO_PA_SAMPLE_S16LE == PA_SAMPLE_S16LE, "libpulse ABI");
_Static_assert(LO_PA_CONTEXT_NOAUTOSPAWN == PA_CONTEXT_NOAUTOSPAWN, "libpulse ABI");
_Static_assert(LO_PA_CONTEXT_READY == PA_CONTEXT_READY && LO_PA_CONTEXT_FAILED == PA_CONTEXT_FAILED, "libpulse ABI");
_Static_assert(LO_PA_CONTEXT_TERMINATED == PA_CONTEXT_TERMINATED, "libpulse ABI");
_Static_assert(LO_PA_STREAM_READY == PA_STREAM_READY && LO_PA_STREAM_FAILED == PA_STREAM_FAILED, "libpulse ABI");
_Static_assert(LO_PA_STREAM_TERMINATED == PA_STREAM_TERMINATED, "libpulse ABI");
_Static_assert(LO_PA_STREAM_ADJUST_LATENCY == PA_STREAM_ADJUST_LATENCY, "libpulse ABI");
_Static_assert(sizeof(lo_pa_sample_spec) == sizeof(pa_sample_spec), "libpulse ABI");
_Static_assert(offsetof(lo_pa_sample_spec, channels) == offsetof(pa_sample_spec, channels), "libpulse ABI");
_Static_assert(sizeof(lo_pa_buffer_attr) == sizeof(pa_buffer_attr), "libpulse ABI");
_Static_assert(offsetof(lo_pa_buffer_attr, fragsize) == offsetof(pa_buffer_attr, fragsize), "libpulse ABI");
_Static_assert(sizeof(lo_pa_timing_info) == sizeof(pa_timing_info), "libpulse ABI");
_Static_assert(offsetof(lo_pa_timing_info, source_usec) == offsetof(pa_timing_info, source_usec), "libpulse ABI");
_Static_assert(offsetof(lo_pa_timing_info, playing) == offsetof(pa_timing_info, playing), "libpulse ABI");
_Static_assert(offsetof(lo_pa_timing_info, write_index) == offsetof(pa_timing_info, write_index), "libpulse ABI");
_Static_assert(offsetof(lo_pa_timing_info, read_index) == offsetof(pa_timing_info, read_index), "libpulse ABI");
#endif

typedef void (*lo_context_notify)(lo_pa_context *, void *);
typedef void (*lo_stream_notify)(lo_pa_stream *, void *);
typedef void (*lo_stream_request)(lo_pa_stream *, size_t, void *);
typedef void (*lo_stream_success)(lo_pa_stream *, int, void *);

/// libpulse's functions, loaded once.
static struct {
    lo_pa_threaded_mainloop *(*mainloop_new)(void);
    void (*mainloop_free)(lo_pa_threaded_mainloop *);
    int (*mainloop_start)(lo_pa_threaded_mainloop *);
    void (*mainloop_stop)(lo_pa_threaded_mainloop *);
    void (*mainloop_lock)(lo_pa_threaded_mainloop *);
    void (*mainloop_unlock)(lo_pa_threaded_mainloop *);
    lo_pa_mainloop_api *(*mainloop_get_api)(lo_pa_threaded_mainloop *);
    lo_pa_context *(*context_new)(lo_pa_mainloop_api *, const char *);
    void (*context_set_state_callback)(lo_pa_context *, lo_context_notify, void *);
    int (*context_connect)(lo_pa_context *, const char *, int, const void *);
    int (*context_get_state)(const lo_pa_context *);
    int (*context_errno)(const lo_pa_context *);
    void (*context_disconnect)(lo_pa_context *);
    void (*context_unref)(lo_pa_context *);
    const char *(*strerror)(int);
    lo_pa_stream *(*stream_new)(lo_pa_context *, const char *, const lo_pa_sample_spec *, const void *);
    void (*stream_set_state_callback)(lo_pa_stream *, lo_stream_notify, void *);
    void (*stream_set_read_callback)(lo_pa_stream *, lo_stream_request, void *);
    int (*stream_connect_record)(lo_pa_stream *, const char *, const lo_pa_buffer_attr *, int);
    int (*stream_get_state)(const lo_pa_stream *);
    int (*stream_peek)(lo_pa_stream *, const void **, size_t *);
    int (*stream_drop)(lo_pa_stream *);
    lo_pa_operation *(*stream_update_timing_info)(lo_pa_stream *, lo_stream_success, void *);
    const lo_pa_timing_info *(*stream_get_timing_info)(lo_pa_stream *);
    int (*stream_disconnect)(lo_pa_stream *);
    void (*stream_unref)(lo_pa_stream *);
    void (*operation_unref)(lo_pa_operation *);
} pulse;

static pthread_once_t pulse_once = PTHREAD_ONCE_INIT;
static char pulse_load_error[256];

static void load_pulse(void) {
    void *library = dlopen("libpulse.so.0", RTLD_NOW | RTLD_LOCAL);
    if (!library) {
        snprintf(pulse_load_error, sizeof pulse_load_error,
                 "libpulse is not installed (sudo apt install libpulse0): %s", dlerror());
        return;
    }
    struct {
        void **slot;
        const char *name;
    } symbols[] = {
        {(void **)&pulse.mainloop_new, "pa_threaded_mainloop_new"},
        {(void **)&pulse.mainloop_free, "pa_threaded_mainloop_free"},
        {(void **)&pulse.mainloop_start, "pa_threaded_mainloop_start"},
        {(void **)&pulse.mainloop_stop, "pa_threaded_mainloop_stop"},
        {(void **)&pulse.mainloop_lock, "pa_threaded_mainloop_lock"},
        {(void **)&pulse.mainloop_unlock, "pa_threaded_mainloop_unlock"},
        {(void **)&pulse.mainloop_get_api, "pa_threaded_mainloop_get_api"},
        {(void **)&pulse.context_new, "pa_context_new"},
        {(void **)&pulse.context_set_state_callback, "pa_context_set_state_callback"},
        {(void **)&pulse.context_connect, "pa_context_connect"},
        {(void **)&pulse.context_get_state, "pa_context_get_state"},
        {(void **)&pulse.context_errno, "pa_context_errno"},
        {(void **)&pulse.context_disconnect, "pa_context_disconnect"},
        {(void **)&pulse.context_unref, "pa_context_unref"},
        {(void **)&pulse.strerror, "pa_strerror"},
        {(void **)&pulse.stream_new, "pa_stream_new"},
        {(void **)&pulse.stream_set_state_callback, "pa_stream_set_state_callback"},
        {(void **)&pulse.stream_set_read_callback, "pa_stream_set_read_callback"},
        {(void **)&pulse.stream_connect_record, "pa_stream_connect_record"},
        {(void **)&pulse.stream_get_state, "pa_stream_get_state"},
        {(void **)&pulse.stream_peek, "pa_stream_peek"},
        {(void **)&pulse.stream_drop, "pa_stream_drop"},
        {(void **)&pulse.stream_update_timing_info, "pa_stream_update_timing_info"},
        {(void **)&pulse.stream_get_timing_info, "pa_stream_get_timing_info"},
        {(void **)&pulse.stream_disconnect, "pa_stream_disconnect"},
        {(void **)&pulse.stream_unref, "pa_stream_unref"},
        {(void **)&pulse.operation_unref, "pa_operation_unref"},
    };
    for (size_t i = 0; i < sizeof symbols / sizeof symbols[0]; i++) {
        *symbols[i].slot = dlsym(library, symbols[i].name);
        if (!*symbols[i].slot) {
            snprintf(pulse_load_error, sizeof pulse_load_error, "libpulse.so.0 has no %s", symbols[i].name);
            return;
        }
    }
}

/// How often the server is asked for the stream's timing, nanoseconds.
static const int64_t timing_interval = 100000000;

struct lightorgan_pulse_recorder {
    lo_pa_threaded_mainloop *mainloop;
    lo_pa_context *context;
    lo_pa_stream *stream;
    int pipe_write;  // -1 once closed
    int nice;
    int niced;  // the mainloop thread's priority was set
    unsigned frame_bytes;
    unsigned rate;
    // Mainloop thread only:
    int64_t consumed_bytes;  // taken from the stream (holes as silence)
    int64_t dropped_bytes;   // taken but not written: the pipe was full
    int64_t last_request;    // monotonic ns of the last timing request
    int timing_pending;
    char failure[256];
    // Shared with the reading thread, under `lock`:
    pthread_mutex_t lock;
    int timing_known;
    int64_t frame, made_at, lag;
};

static int64_t monotonic_ns(void) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (int64_t)now.tv_sec * 1000000000 + now.tv_nsec;
}

static int64_t realtime_ns(void) {
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    return (int64_t)now.tv_sec * 1000000000 + now.tv_nsec;
}

static void close_pipe(lightorgan_pulse_recorder *r) {
    if (r->pipe_write >= 0) {
        close(r->pipe_write);
        r->pipe_write = -1;
    }
}

/// Mainloop thread: the first callback gives the thread the recorder's priority.
static void keep_time(lightorgan_pulse_recorder *r) {
    if (!r->niced) {
        r->niced = 1;
        setpriority(PRIO_PROCESS, (id_t)gettid(), r->nice);
    }
}

static void fail(lightorgan_pulse_recorder *r, const char *what) {
    if (!r->failure[0]) {
        snprintf(r->failure, sizeof r->failure, "%s: %s", what,
                 pulse.strerror(pulse.context_errno(r->context)));
    }
    close_pipe(r);
}

static void on_context_state(lo_pa_context *context, void *userdata) {
    lightorgan_pulse_recorder *r = userdata;
    keep_time(r);
    int state = pulse.context_get_state(context);
    if (state == LO_PA_CONTEXT_FAILED || state == LO_PA_CONTEXT_TERMINATED) fail(r, "the sound server went away");
}

static void on_stream_state(lo_pa_stream *stream, void *userdata) {
    lightorgan_pulse_recorder *r = userdata;
    int state = pulse.stream_get_state(stream);
    if (state == LO_PA_STREAM_FAILED || state == LO_PA_STREAM_TERMINATED) fail(r, "the record stream ended");
}

/// The server's reply to a timing request: sample `write_index` had been made `source_usec` before
/// the server's `timestamp` (what the source still held, and what was on its way to the stream's
/// queue). The pipe's frames lag the server's indexes by what the server skipped (`read_index` less
/// what was taken) and what the full pipe lost.
static void on_timing(lo_pa_stream *stream, int success, void *userdata) {
    lightorgan_pulse_recorder *r = userdata;
    r->timing_pending = 0;
    const lo_pa_timing_info *timing = success ? pulse.stream_get_timing_info(stream) : NULL;
    if (!timing || timing->write_index_corrupt || timing->read_index_corrupt) return;
    if (!timing->playing) {  // the source paused (an idle sink): its next audio is timed anew
        pthread_mutex_lock(&r->lock);
        r->timing_known = 0;
        pthread_mutex_unlock(&r->lock);
        return;
    }
    int64_t now = monotonic_ns();
    int64_t stamped = (int64_t)timing->timestamp.tv_sec * 1000000000 + (int64_t)timing->timestamp.tv_usec * 1000;
    int64_t made_at = now - (realtime_ns() - stamped) - (int64_t)timing->source_usec * 1000;
    int64_t skipped = timing->read_index - r->consumed_bytes;
    int64_t frame = (timing->write_index - skipped - r->dropped_bytes) / r->frame_bytes;
    // The newest audio taken is (write_index - read_index) older than the sample at write_index.
    int64_t waiting = (timing->write_index - timing->read_index) / r->frame_bytes;
    int64_t lag = now - (made_at - waiting * 1000000000 / r->rate);
    pthread_mutex_lock(&r->lock);
    r->timing_known = 1;
    r->frame = frame;
    r->made_at = made_at;
    r->lag = lag;
    pthread_mutex_unlock(&r->lock);
}

static void write_all(lightorgan_pulse_recorder *r, const void *data, size_t length) {
    if (r->pipe_write < 0) return;
    const char *bytes = data;
    size_t left = length;
    while (left > 0) {
        ssize_t written = write(r->pipe_write, bytes, left);
        if (written < 0 && errno == EINTR) continue;
        if (written <= 0) break;  // full (the reader is stuck) or closed: the rest is lost
        bytes += written;
        left -= (size_t)written;
    }
    r->dropped_bytes += (int64_t)left;
}

static void on_read(lo_pa_stream *stream, size_t readable, void *userdata) {
    (void)readable;
    lightorgan_pulse_recorder *r = userdata;
    keep_time(r);
    static const char silence[4096];
    for (;;) {
        const void *data;
        size_t length;
        if (pulse.stream_peek(stream, &data, &length) < 0 || length == 0) break;
        if (data) {
            write_all(r, data, length);
        } else {  // a hole: silence, so the frame count stays true
            for (size_t left = length; left > 0;) {
                size_t piece = left < sizeof silence ? left : sizeof silence;
                write_all(r, silence, piece);
                left -= piece;
            }
        }
        r->consumed_bytes += (int64_t)length;
        pulse.stream_drop(stream);
    }
    int64_t now = monotonic_ns();
    if (!r->timing_pending && now - r->last_request >= timing_interval) {
        lo_pa_operation *operation = pulse.stream_update_timing_info(stream, on_timing, r);
        if (operation) {
            pulse.operation_unref(operation);
            r->timing_pending = 1;
            r->last_request = now;
        }
    }
}

static void free_recorder(lightorgan_pulse_recorder *r) {
    if (r->mainloop) pulse.mainloop_stop(r->mainloop);
    if (r->stream) pulse.stream_unref(r->stream);
    if (r->context) {
        pulse.context_disconnect(r->context);
        pulse.context_unref(r->context);
    }
    if (r->mainloop) pulse.mainloop_free(r->mainloop);
    close_pipe(r);
    pthread_mutex_destroy(&r->lock);
    free(r);
}

/// Waits, unlocked, until `ready` says 1 (ready) or -1 (failed), for at most 3 s; 0 on time out.
static int wait_until(lightorgan_pulse_recorder *r, int (*ready)(lightorgan_pulse_recorder *)) {
    for (int waited = 0; waited < 300; waited++) {
        pulse.mainloop_lock(r->mainloop);
        int state = ready(r);
        pulse.mainloop_unlock(r->mainloop);
        if (state != 0) return state;
        usleep(10000);
    }
    return 0;
}

static int context_ready(lightorgan_pulse_recorder *r) {
    int state = pulse.context_get_state(r->context);
    return state == LO_PA_CONTEXT_READY ? 1 : (state == LO_PA_CONTEXT_FAILED || state == LO_PA_CONTEXT_TERMINATED) ? -1 : 0;
}

static int stream_ready(lightorgan_pulse_recorder *r) {
    int state = pulse.stream_get_state(r->stream);
    return state == LO_PA_STREAM_READY ? 1 : (state == LO_PA_STREAM_FAILED || state == LO_PA_STREAM_TERMINATED) ? -1 : 0;
}

lightorgan_pulse_recorder *lightorgan_pulse_record(const char *device, const char *client_name, unsigned rate,
                                                   unsigned channels, unsigned block_bytes, int nice,
                                                   int *descriptor, char *error, size_t error_size) {
    pthread_once(&pulse_once, load_pulse);
    if (pulse_load_error[0]) {
        snprintf(error, error_size, "%s", pulse_load_error);
        return NULL;
    }
    lightorgan_pulse_recorder *r = calloc(1, sizeof *r);
    if (!r) {
        snprintf(error, error_size, "out of memory");
        return NULL;
    }
    pthread_mutex_init(&r->lock, NULL);
    r->pipe_write = -1;
    r->nice = nice;
    r->rate = rate;
    r->frame_bytes = 2 * channels;
    int ends[2];
    if (pipe2(ends, O_CLOEXEC) != 0) {
        snprintf(error, error_size, "cannot make a pipe: %s", strerror(errno));
        free_recorder(r);
        return NULL;
    }
    // A second and more of audio, so a capture thread held up for a moment loses nothing.
    fcntl(ends[1], F_SETPIPE_SZ, 1 << 20);
    fcntl(ends[1], F_SETFL, O_NONBLOCK);
    r->pipe_write = ends[1];

    r->mainloop = pulse.mainloop_new();
    r->context = r->mainloop ? pulse.context_new(pulse.mainloop_get_api(r->mainloop), client_name) : NULL;
    if (!r->context) {
        snprintf(error, error_size, "libpulse could not start");
        close(ends[0]);
        free_recorder(r);
        return NULL;
    }
    pulse.context_set_state_callback(r->context, on_context_state, r);
    if (pulse.context_connect(r->context, NULL, LO_PA_CONTEXT_NOAUTOSPAWN, NULL) < 0 ||
        pulse.mainloop_start(r->mainloop) < 0) {
        snprintf(error, error_size, "no sound server answers: %s", pulse.strerror(pulse.context_errno(r->context)));
        close(ends[0]);
        free_recorder(r);
        return NULL;
    }
    int state = wait_until(r, context_ready);
    if (state != 1) {
        snprintf(error, error_size, "no sound server answers: %s",
                 state == 0 ? "no answer within 3 s" : pulse.strerror(pulse.context_errno(r->context)));
        close(ends[0]);
        free_recorder(r);
        return NULL;
    }
    lo_pa_sample_spec spec = {LO_PA_SAMPLE_S16LE, rate, (uint8_t)channels};
    lo_pa_buffer_attr attributes = {UINT32_MAX, UINT32_MAX, UINT32_MAX, UINT32_MAX, block_bytes};
    pulse.mainloop_lock(r->mainloop);
    r->stream = pulse.stream_new(r->context, "lightorgan", &spec, NULL);
    if (r->stream) {
        pulse.stream_set_state_callback(r->stream, on_stream_state, r);
        pulse.stream_set_read_callback(r->stream, on_read, r);
    }
    int connected = r->stream && pulse.stream_connect_record(r->stream, device, &attributes,
                                                             LO_PA_STREAM_ADJUST_LATENCY) == 0;
    pulse.mainloop_unlock(r->mainloop);
    state = connected ? wait_until(r, stream_ready) : -1;
    if (state != 1) {
        pulse.mainloop_lock(r->mainloop);
        snprintf(error, error_size, "the sound server refused to record %s: %s", device,
                 state == 0 ? "no answer within 3 s" : pulse.strerror(pulse.context_errno(r->context)));
        pulse.mainloop_unlock(r->mainloop);
        close(ends[0]);
        free_recorder(r);
        return NULL;
    }
    *descriptor = ends[0];
    return r;
}

int lightorgan_pulse_timing(lightorgan_pulse_recorder *r, int64_t *frame, int64_t *made_at, int64_t *lag) {
    pthread_mutex_lock(&r->lock);
    int known = r->timing_known;
    *frame = r->frame;
    *made_at = r->made_at;
    *lag = r->lag;
    pthread_mutex_unlock(&r->lock);
    return known;
}

const char *lightorgan_pulse_failure(lightorgan_pulse_recorder *r) {
    pulse.mainloop_lock(r->mainloop);
    const char *failure = r->failure;
    pulse.mainloop_unlock(r->mainloop);
    return failure;
}

void lightorgan_pulse_stop(lightorgan_pulse_recorder *r) {
    pulse.mainloop_lock(r->mainloop);
    if (r->stream && stream_ready(r) == 1) pulse.stream_disconnect(r->stream);
    close_pipe(r);
    pulse.mainloop_unlock(r->mainloop);
    free_recorder(r);
}
