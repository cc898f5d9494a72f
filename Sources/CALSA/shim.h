#ifndef LIGHTORGAN_CALSA_SHIM_H
#define LIGHTORGAN_CALSA_SHIM_H
#include <alsa/asoundlib.h>
#endif
