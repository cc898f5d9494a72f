#include "lightorgan_spi.h"

#include <linux/spi/spidev.h>
#include <string.h>
#include <sys/ioctl.h>

int lightorgan_spi_configure(int fd, uint32_t speed_hz) {
    uint8_t mode = SPI_MODE_0;
    uint8_t bits = 8;
    if (ioctl(fd, SPI_IOC_WR_MODE, &mode) < 0) return -1;
    if (ioctl(fd, SPI_IOC_WR_BITS_PER_WORD, &bits) < 0) return -1;
    if (ioctl(fd, SPI_IOC_WR_MAX_SPEED_HZ, &speed_hz) < 0) return -1;
    return 0;
}

int lightorgan_spi_write(int fd, const uint8_t *bytes, size_t count, uint32_t speed_hz) {
    struct spi_ioc_transfer transfer;
    memset(&transfer, 0, sizeof transfer);
    transfer.tx_buf = (uintptr_t)bytes;
    transfer.len = (uint32_t)count;
    transfer.speed_hz = speed_hz;
    transfer.bits_per_word = 8;
    return ioctl(fd, SPI_IOC_MESSAGE(1), &transfer);
}
