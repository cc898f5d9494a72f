#include "lightorgan_ws2812.h"

#if defined(__aarch64__)
#include <arm_neon.h>
#endif

// A LED byte's three SPI bytes, each from a few of its bits (b7 first):
//   first:  1 b7 0 1 b6 0 1 b5  = 0x92 | b7 << 6 | b6 << 3 | b5     (index: the byte >> 5)
//   second: 0 1 b4 0 1 b3 0 1   = 0x49 | b4 << 5 | b3 << 2          (index: the byte >> 3 & 3)
//   third:  b2 0 1 b1 0 1 b0 0  = 0x24 | b2 << 7 | b1 << 4 | b0 << 1 (index: the byte & 7)
// 16 entries each so that NEON's table lookup can use them as they are (the rest never indexed).
static const uint8_t first_byte[16] = {0x92, 0x93, 0x9A, 0x9B, 0xD2, 0xD3, 0xDA, 0xDB};
static const uint8_t second_byte[16] = {0x49, 0x4D, 0x69, 0x6D};
static const uint8_t third_byte[16] = {0x24, 0x26, 0x34, 0x36, 0xA4, 0xA6, 0xB4, 0xB6};

static inline uint8_t *put(uint8_t value, uint8_t *spi) {
    spi[0] = first_byte[value >> 5];
    spi[1] = second_byte[value >> 3 & 3];
    spi[2] = third_byte[value & 7];
    return spi + 3;
}

void lightorgan_ws2812_encode_rgb(const uint8_t *rgb, size_t pixels, unsigned first, unsigned second,
                                  unsigned third, uint8_t *spi) {
    size_t pixel = 0;
#if defined(__aarch64__)
    const uint8x16_t firsts = vld1q_u8(first_byte), seconds = vld1q_u8(second_byte),
                     thirds = vld1q_u8(third_byte);
    const uint8x16_t three = vdupq_n_u8(3), seven = vdupq_n_u8(7);
    for (; pixel + 16 <= pixels; pixel += 16) {
        // 16 pixels' colours, one register a colour, stored back in the wire's order.
        uint8x16x3_t colors = vld3q_u8(rgb + 3 * pixel);
        uint8x16x3_t wire = {{colors.val[first], colors.val[second], colors.val[third]}};
        uint8_t leds[48];
        vst3q_u8(leds, wire);
        for (int part = 0; part < 3; part++) {
            uint8x16_t value = vld1q_u8(leds + 16 * part);
            uint8x16x3_t bytes = {{
                vqtbl1q_u8(firsts, vshrq_n_u8(value, 5)),
                vqtbl1q_u8(seconds, vandq_u8(vshrq_n_u8(value, 3), three)),
                vqtbl1q_u8(thirds, vandq_u8(value, seven)),
            }};
            vst3q_u8(spi, bytes);
            spi += 48;
        }
    }
#endif
    for (; pixel < pixels; pixel++) {
        const uint8_t *color = rgb + 3 * pixel;
        spi = put(color[first], spi);
        spi = put(color[second], spi);
        spi = put(color[third], spi);
    }
}
