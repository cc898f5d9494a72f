#include "lightorgan_gpio.h"
#include <gpiod.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

/* Copies `text` (NULL: nothing) into `buffer` of `size` bytes, cut to fit, always terminated. */
static void copy_text(char *buffer, size_t size, const char *text) {
    strncpy(buffer, text ? text : "", size - 1);
    buffer[size - 1] = 0;
}

#ifdef GPIOD_LINE_BULK_MAX_LINES  /* this macro exists only in libgpiod 1.x */
#error "lightorgan needs libgpiod 2 (this is libgpiod 1.x: bookworm's libgpiod-dev 1.6, whose v1 API Debian's arm64 kernel no longer offers). scripts/demo, scripts/test and scripts/build-pi fetch it (scripts/lib/prepare.sh, ensure_libgpiod)."
#endif

#include <dirent.h>
#include <stdio.h>

struct lightorgan_gpio {
    struct gpiod_chip *chip;
    struct gpiod_line_request *request;
    size_t count;
};

int lightorgan_gpio_api_version(void) { return 2; }

/* v2 opens chips by path only: accept a path, a name (gpiochip0), a number, or a label. */
static struct gpiod_chip *open_chip(const char *spec) {
    char path[PATH_MAX];
    if (spec[0] == '/') return gpiod_chip_open(spec);
    if (strncmp(spec, "gpiochip", 8) == 0) {
        snprintf(path, sizeof path, "/dev/%s", spec);
        return gpiod_chip_open(path);
    }
    if (spec[0] >= '0' && spec[0] <= '9' && strspn(spec, "0123456789") == strlen(spec)) {
        snprintf(path, sizeof path, "/dev/gpiochip%s", spec);
        return gpiod_chip_open(path);
    }
    DIR *dev = opendir("/dev");
    if (!dev) return NULL;
    struct dirent *entry;
    while ((entry = readdir(dev))) {
        if (strncmp(entry->d_name, "gpiochip", 8) != 0) continue;
        snprintf(path, sizeof path, "/dev/%s", entry->d_name);
        struct gpiod_chip *chip = gpiod_chip_open(path);
        if (!chip) continue;
        struct gpiod_chip_info *info = gpiod_chip_get_info(chip);
        int match = info && strcmp(gpiod_chip_info_get_label(info), spec) == 0;
        if (info) gpiod_chip_info_free(info);
        if (match) { closedir(dev); return chip; }
        gpiod_chip_close(chip);
    }
    closedir(dev);
    errno = ENOENT;
    return NULL;
}

lightorgan_gpio *lightorgan_gpio_open(const char *chip_name, const unsigned *offsets, size_t count, int active_low) {
    if (count == 0 || count > 64) { errno = EINVAL; return NULL; }
    struct gpiod_chip *chip = open_chip(chip_name);
    if (!chip) return NULL;
    struct gpiod_chip_info *info = gpiod_chip_get_info(chip);
    size_t lines = info ? gpiod_chip_info_get_num_lines(info) : 0;
    if (info) gpiod_chip_info_free(info);
    for (size_t i = 0; i < count; i++) {
        if (offsets[i] >= lines) { gpiod_chip_close(chip); errno = ERANGE; return NULL; }
    }
    struct gpiod_line_settings *settings = gpiod_line_settings_new();
    struct gpiod_line_config *line_config = gpiod_line_config_new();
    struct gpiod_request_config *request_config = gpiod_request_config_new();
    struct gpiod_line_request *request = NULL;
    if (settings && line_config && request_config) {
        gpiod_line_settings_set_direction(settings, GPIOD_LINE_DIRECTION_OUTPUT);
        gpiod_line_settings_set_active_low(settings, active_low != 0);
        gpiod_line_settings_set_output_value(settings, GPIOD_LINE_VALUE_INACTIVE);
        gpiod_request_config_set_consumer(request_config, "lightorgan");
        if (gpiod_line_config_add_line_settings(line_config, offsets, count, settings) == 0)
            request = gpiod_chip_request_lines(chip, request_config, line_config);
    }
    int saved = errno;
    if (settings) gpiod_line_settings_free(settings);
    if (line_config) gpiod_line_config_free(line_config);
    if (request_config) gpiod_request_config_free(request_config);
    if (!request) { gpiod_chip_close(chip); errno = saved; return NULL; }
    lightorgan_gpio *gpio = calloc(1, sizeof *gpio);
    if (!gpio) { gpiod_line_request_release(request); gpiod_chip_close(chip); errno = ENOMEM; return NULL; }
    gpio->chip = chip;
    gpio->request = request;
    gpio->count = count;
    return gpio;
}

int lightorgan_gpio_set(lightorgan_gpio *gpio, const int *values) {
    enum gpiod_line_value converted[64];
    for (size_t i = 0; i < gpio->count; i++) converted[i] = values[i] ? GPIOD_LINE_VALUE_ACTIVE : GPIOD_LINE_VALUE_INACTIVE;
    return gpiod_line_request_set_values(gpio->request, converted);
}

void lightorgan_gpio_close(lightorgan_gpio *gpio) {
    if (!gpio) return;
    int inactive[64] = {0};
    lightorgan_gpio_set(gpio, inactive);
    gpiod_line_request_release(gpio->request);
    gpiod_chip_close(gpio->chip);
    free(gpio);
}

int lightorgan_gpio_chip_info(const char *path, char *name, size_t name_size, char *label, size_t label_size,
                              unsigned *lines) {
    struct gpiod_chip *chip = gpiod_chip_open(path);
    if (!chip) return -1;
    struct gpiod_chip_info *info = gpiod_chip_get_info(chip);
    if (!info) { gpiod_chip_close(chip); return -1; }
    copy_text(name, name_size, gpiod_chip_info_get_name(info));
    copy_text(label, label_size, gpiod_chip_info_get_label(info));
    *lines = (unsigned)gpiod_chip_info_get_num_lines(info);
    gpiod_chip_info_free(info);
    gpiod_chip_close(chip);
    return 0;
}

int lightorgan_gpio_line_consumer(const char *chip_name, unsigned offset, char *consumer, size_t size) {
    consumer[0] = 0;
    struct gpiod_chip *chip = open_chip(chip_name);
    if (!chip) return -1;
    struct gpiod_line_info *info = gpiod_chip_get_line_info(chip, offset);
    if (info) {
        copy_text(consumer, size, gpiod_line_info_get_consumer(info));
        gpiod_line_info_free(info);
    }
    gpiod_chip_close(chip);
    return 0;
}

