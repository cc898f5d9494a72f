#ifndef LIGHTORGAN_SPI_H
#define LIGHTORGAN_SPI_H
#include <stddef.h>
#include <stdint.h>

/// spidev's ioctls, which Swift cannot spell (their numbers are C macros built from sizes).

/// Sets SPI mode 0, 8 bits per word and `speed_hz` on the open spidev `fd`.
/// Returns 0, or -1 with errno.
int lightorgan_spi_configure(int fd, uint32_t speed_hz);

/// Sends `count` bytes as ONE transfer (SPI_IOC_MESSAGE(1)) at `speed_hz`; nothing is read.
/// Returns the bytes sent, or -1 with errno (EMSGSIZE: more than spidev's bufsiz).
int lightorgan_spi_write(int fd, const uint8_t *bytes, size_t count, uint32_t speed_hz);

#endif
