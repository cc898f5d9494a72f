/*
 * Linked into the packaged lightorgan (scripts/build-pi), never into a normal build: lets a binary built
 * against Debian sid's glibc (the only Debian with Swift >= 6.2) run with bookworm's glibc 2.36.
 *
 * Code compiled against glibc 2.38 and later binds some symbols to versions newer than 2.36:
 *  - math functions whose new versions only dropped the old SVID error handling (fmod at 2.38,
 *    float functions such as sinhf at 2.43): the same results, so the old versions serve;
 *  - C23 variants of the strto* and sscanf family (__isoc23_strtol, 2.38), which only add "0b" binary prefixes;
 *  - strlcpy and strlcat (2.38), which we define here (as in the BSDs).
 * Definitions in the executable take precedence over the shared libraries, so the Swift runtime,
 * Foundation and our code all reach these. scripts/build-pi checks the highest GLIBC version the binary
 * needs and names the symbols to add here when it grows.
 *
 * Compiled as C11 without _GNU_SOURCE, so strtol here is the plain one, not redirected to __isoc23_strtol.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>

#if defined(__aarch64__)
#define LIGHTORGAN_GLIBC_BASE "GLIBC_2.17"  /* the first glibc for aarch64 */
#elif defined(__x86_64__)
#define LIGHTORGAN_GLIBC_BASE "GLIBC_2.2.5"  /* the first glibc for x86_64 */
#else
#error "glibc_compat.c knows the base symbol versions of aarch64 and x86_64 only"
#endif

/* OLD_VERSION(type, name, (parameters), (arguments)): name() calls name@LIGHTORGAN_GLIBC_BASE. */
#define OLD_VERSION(type, name, parameters, arguments)                                   \
    type lightorgan_old_##name parameters;                                               \
    __asm__(".symver lightorgan_old_" #name ", " #name "@" LIGHTORGAN_GLIBC_BASE);      \
    type name parameters;                                                                \
    type name parameters { return lightorgan_old_##name arguments; }

OLD_VERSION(double, fmod, (double x, double y), (x, y))
OLD_VERSION(float, fmodf, (float x, float y), (x, y))
OLD_VERSION(double, remainder, (double x, double y), (x, y))
OLD_VERSION(float, remainderf, (float x, float y), (x, y))
OLD_VERSION(float, acosf, (float x), (x))
OLD_VERSION(float, asinf, (float x), (x))
OLD_VERSION(float, atan2f, (float y, float x), (y, x))
OLD_VERSION(float, acoshf, (float x), (x))
OLD_VERSION(float, atanhf, (float x), (x))
OLD_VERSION(float, coshf, (float x), (x))
OLD_VERSION(float, sinhf, (float x), (x))
OLD_VERSION(float, log10f, (float x), (x))
OLD_VERSION(float, sqrtf, (float x), (x))
OLD_VERSION(float, lgammaf, (float x), (x))
OLD_VERSION(float, tgammaf, (float x), (x))
OLD_VERSION(float, lgammaf_r, (float x, int *sign), (x, sign))

long strtol(const char *text, char **end, int base);
long long strtoll(const char *text, char **end, int base);
unsigned long strtoul(const char *text, char **end, int base);
unsigned long long strtoull(const char *text, char **end, int base);

long __isoc23_strtol(const char *text, char **end, int base);
long __isoc23_strtol(const char *text, char **end, int base) { return strtol(text, end, base); }
long long __isoc23_strtoll(const char *text, char **end, int base);
long long __isoc23_strtoll(const char *text, char **end, int base) { return strtoll(text, end, base); }
unsigned long __isoc23_strtoul(const char *text, char **end, int base);
unsigned long __isoc23_strtoul(const char *text, char **end, int base) { return strtoul(text, end, base); }
unsigned long long __isoc23_strtoull(const char *text, char **end, int base);
unsigned long long __isoc23_strtoull(const char *text, char **end, int base) { return strtoull(text, end, base); }

/* C23's sscanf only adds %b and "0b" for %i; compiled as C11, vsscanf here is the C99 one. */
int __isoc23_sscanf(const char *text, const char *format, ...);
int __isoc23_sscanf(const char *text, const char *format, ...) {
    va_list arguments;
    va_start(arguments, format);
    int result = vsscanf(text, format, arguments);
    va_end(arguments);
    return result;
}

/* strlcpy: copies at most size - 1 bytes and terminates; returns strlen(source). */
size_t strlcpy(char *destination, const char *source, size_t size);
size_t strlcpy(char *destination, const char *source, size_t size) {
    size_t length = 0;
    while (source[length] != 0) length++;
    if (size > 0) {
        size_t copied = length < size - 1 ? length : size - 1;
        for (size_t i = 0; i < copied; i++) destination[i] = source[i];
        destination[copied] = 0;
    }
    return length;
}

/* strlcat: appends to a terminated destination within size bytes; returns the length it tried to make. */
size_t strlcat(char *destination, const char *source, size_t size);
size_t strlcat(char *destination, const char *source, size_t size) {
    size_t used = 0;
    while (used < size && destination[used] != 0) used++;
    if (used == size) {
        size_t length = 0;
        while (source[length] != 0) length++;
        return size + length;
    }
    return used + strlcpy(destination + used, source, size - used);
}
