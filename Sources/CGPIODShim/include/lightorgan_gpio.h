#ifndef LIGHTORGAN_GPIO_H
#define LIGHTORGAN_GPIO_H
#include <stddef.h>

/// The few calls of libgpiod 2 the receiver makes, in a C API Swift can call (libgpiod's own needs
/// enums and bulk requests Swift imports poorly). Swift sees only this.
typedef struct lightorgan_gpio lightorgan_gpio;

/// The libgpiod API this build uses: 2.
int lightorgan_gpio_api_version(void);

/// Opens `chip` (a name such as "gpiochip0", a path such as "/dev/gpiochip0", or a label) and requests
/// `count` lines as outputs, all inactive, for consumer "lightorgan". Returns NULL and sets errno on
/// failure (ENOENT: no such chip; EINVAL: no such line; EBUSY: a line is taken; EACCES/EPERM).
lightorgan_gpio *lightorgan_gpio_open(const char *chip, const unsigned *offsets, size_t count, int active_low);

/// Sets every requested line at once: values[i] is 1 (active) or 0, in the order of the request.
/// Returns 0, or -1 with errno.
int lightorgan_gpio_set(lightorgan_gpio *gpio, const int *values);

/// Sets every line inactive, releases the lines and closes the chip.
void lightorgan_gpio_close(lightorgan_gpio *gpio);

/// Name, label and line count of the chip at `path`; 0, or -1 with errno.
int lightorgan_gpio_chip_info(const char *path, char *name, size_t name_size, char *label, size_t label_size,
                              unsigned *lines);

/// The consumer holding line `offset` of `chip` (empty if free or unknown); 0, or -1 with errno.
int lightorgan_gpio_line_consumer(const char *chip, unsigned offset, char *consumer, size_t size);

#endif
