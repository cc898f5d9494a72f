#ifndef LIGHTORGAN_CGPIOD_SHIM_H
#define LIGHTORGAN_CGPIOD_SHIM_H
#include <gpiod.h>
#endif
