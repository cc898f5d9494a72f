#ifndef LIGHTORGAN_ALSA_QUIET_H
#define LIGHTORGAN_ALSA_QUIET_H

/// Routes alsa-lib's own error messages ("ALSA lib pcm.c:…") away from stderr: they are kept,
/// the last one only, for lightorgan to put into its own one-line message.
void lightorgan_alsa_quiet(void);

/// The last message alsa-lib wanted to print, or "" (valid until the next alsa-lib error).
const char *lightorgan_alsa_last_message(void);

#endif
