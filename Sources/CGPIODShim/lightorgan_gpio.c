#include "lightorgan_gpio.h"
#include <gpiod.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#ifdef GPIOD_LINE_BULK_MAX_LINES  /* libgpiod 1.x: this macro exists only there */

struct lightorgan_gpio {
    struct gpiod_chip *chip;
    struct gpiod_line_bulk bulk;
};

int lightorgan_gpio_api_version(void) { return 1; }

lightorgan_gpio *lightorgan_gpio_open(const char *chip_name, const unsigned *offsets, size_t count, int active_low) {
    if (count == 0 || count > GPIOD_LINE_BULK_MAX_LINES) { errno = EINVAL; return NULL; }
    struct gpiod_chip *chip = gpiod_chip_open_lookup(chip_name);
    if (!chip) return NULL;
    for (size_t i = 0; i < count; i++) {
        if (offsets[i] >= gpiod_chip_num_lines(chip)) { gpiod_chip_close(chip); errno = ERANGE; return NULL; }
    }
    lightorgan_gpio *gpio = calloc(1, sizeof *gpio);
    if (!gpio) { gpiod_chip_close(chip); errno = ENOMEM; return NULL; }
    gpio->chip = chip;
    if (gpiod_chip_get_lines(chip, (unsigned *)offsets, (unsigned)count, &gpio->bulk) < 0) {
        int saved = errno; gpiod_chip_close(chip); free(gpio); errno = saved; return NULL;
    }
    struct gpiod_line_request_config config = {
        .consumer = "lightorgan",
        .request_type = GPIOD_LINE_REQUEST_DIRECTION_OUTPUT,
        .flags = active_low ? GPIOD_LINE_REQUEST_FLAG_ACTIVE_LOW : 0,
    };
    int inactive[GPIOD_LINE_BULK_MAX_LINES] = {0};
    if (gpiod_line_request_bulk(&gpio->bulk, &config, inactive) < 0) {
        int saved = errno; gpiod_chip_close(chip); free(gpio); errno = saved; return NULL;
    }
    return gpio;
}

int lightorgan_gpio_set(lightorgan_gpio *gpio, const int *values) {
    return gpiod_line_set_value_bulk(&gpio->bulk, (int *)values);
}

void lightorgan_gpio_close(lightorgan_gpio *gpio) {
    if (!gpio) return;
    int inactive[GPIOD_LINE_BULK_MAX_LINES] = {0};
    gpiod_line_set_value_bulk(&gpio->bulk, inactive);
    gpiod_line_release_bulk(&gpio->bulk);
    gpiod_chip_close(gpio->chip);
    free(gpio);
}

int lightorgan_gpio_chip_info(const char *path, char *name, size_t name_size, char *label, size_t label_size,
                              unsigned *lines) {
    struct gpiod_chip *chip = gpiod_chip_open(path);
    if (!chip) return -1;
    strncpy(name, gpiod_chip_name(chip), name_size - 1); name[name_size - 1] = 0;
    strncpy(label, gpiod_chip_label(chip), label_size - 1); label[label_size - 1] = 0;
    *lines = gpiod_chip_num_lines(chip);
    gpiod_chip_close(chip);
    return 0;
}

int lightorgan_gpio_line_consumer(const char *chip_name, unsigned offset, char *consumer, size_t size) {
    consumer[0] = 0;
    struct gpiod_chip *chip = gpiod_chip_open_lookup(chip_name);
    if (!chip) return -1;
    struct gpiod_line *line = gpiod_chip_get_line(chip, offset);
    if (line && gpiod_line_update(line) == 0 && gpiod_line_consumer(line)) {
        strncpy(consumer, gpiod_line_consumer(line), size - 1); consumer[size - 1] = 0;
    }
    gpiod_chip_close(chip);
    return 0;
}

#else
#error "libgpiod 2.x support is not written yet: install libgpiod-dev 1.6 (bookworm) for now"
#endif
