#ifndef LIGHTORGAN_CMOSQUITTO_SHIM_H
#define LIGHTORGAN_CMOSQUITTO_SHIM_H
#include <mosquitto.h>
#endif
