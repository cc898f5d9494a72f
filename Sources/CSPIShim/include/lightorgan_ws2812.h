#ifndef LIGHTORGAN_WS2812_H
#define LIGHTORGAN_WS2812_H
#include <stddef.h>
#include <stdint.h>

/// WS2812 SPI encoding of RGB pixels for the strip's writer thread: the same bytes as the core's
/// `WS2812Encoding.encode` (each LED bit 3 SPI bits, 1 -> 110, 0 -> 100, most significant first),
/// written for the machine. On arm64, 16 pixels at a time with NEON (a structured load picks the
/// wire order, three table lookups make a byte's 3 SPI bytes, a structured store lays them out);
/// elsewhere, and for the last pixels, a byte at a time.

/// Writes the 9 SPI bytes of each of `pixels` pixels of `rgb` (3 bytes a pixel: red, green,
/// blue) to `spi`, the pixel's colours in the order `first`, `second`, `third` (indices 0, 1, 2
/// into red, green, blue; GRB is 1, 0, 2). Writes exactly 9 x `pixels` bytes; no reset.
void lightorgan_ws2812_encode_rgb(const uint8_t *rgb, size_t pixels, unsigned first, unsigned second,
                                  unsigned third, uint8_t *spi);

#endif
