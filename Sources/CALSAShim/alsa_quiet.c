#include "alsa_quiet.h"
#include <alsa/asoundlib.h>
#include <stdarg.h>
#include <stdio.h>

static __thread char last_message[512];

/* alsa-lib's handler is variadic, which Swift cannot implement: this is the whole reason for C here. */
static void keep_last(const char *file, int line, const char *function, int err, const char *fmt, ...) {
    (void)file; (void)line; (void)function; (void)err;
    va_list args;
    va_start(args, fmt);
    vsnprintf(last_message, sizeof last_message, fmt, args);
    va_end(args);
}

void lightorgan_alsa_quiet(void) { snd_lib_error_set_handler(keep_last); }

const char *lightorgan_alsa_last_message(void) { return last_message; }
