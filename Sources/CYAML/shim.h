#ifndef LIGHTORGAN_CYAML_SHIM_H
#define LIGHTORGAN_CYAML_SHIM_H
#include <yaml.h>
#endif
