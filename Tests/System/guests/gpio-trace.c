/* The guest's own eyes on gpio-sim, for Tests/System/test_kernel_devices.py (built static on the host).
 *
 *   gpio-trace lines BASE SECONDS NAME   samples lines 5, 6 and 13 (BASE/sim_gpioN/value, the kernel
 *                                        side of the chip) as fast as it can for SECONDS, at nice 19
 *                                        (the test's own load must not starve the receiver), and prints
 *                                        "VM: trace NAME START END SAMPLES EVENT..."
 *   gpio-trace watch CPU SECONDS NAME    pinned to CPU at SCHED_FIFO, sleeps 1 ms at a time for SECONDS
 *                                        and prints "VM: stalls NAME START END EVENT..."
 *
 * Times are CLOCK_MONOTONIC microseconds, START and END absolute, events relative to START:
 * "T=BMT" the lines became B M T (0/1, bass mid treble) between two samples (T is the middle of them),
 * "T!D" no sample (or no wake-up) for D µs from T on. Under TCG the guest's clock follows the host's:
 * a vCPU the busy host did not run for a while shows as a stall here, and the test judges the lines
 * only where nothing stalled. A sampler gap is one over 1 ms, a watcher's stall one over 3 ms. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

static long long now_us(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1000000LL + t.tv_nsec / 1000;
}

static int value(int fd) {
    char c = '0';
    if (pread(fd, &c, 1, 0) != 1) return 0;
    return c == '1';
}

static void event(char **out, size_t *used, size_t *size, const char *text) {
    size_t length = strlen(text);
    if (*used + length + 1 > *size) {
        *size = (*size + length + 1) * 2;
        *out = realloc(*out, *size);
    }
    memcpy(*out + *used, text, length + 1);
    *used += length;
}

static int lines(const char *base, double seconds, const char *name) {
    static const int numbers[3] = {5, 6, 13};
    int fds[3];
    setpriority(PRIO_PROCESS, 0, 19);
    for (int i = 0; i < 3; i++) {
        char path[512];
        snprintf(path, sizeof path, "%s/sim_gpio%d/value", base, numbers[i]);
        if ((fds[i] = open(path, O_RDONLY)) < 0) { perror(path); return 1; }
    }
    size_t size = 1 << 16, used = 0;
    char *out = malloc(size), text[64];
    out[0] = 0;
    long long start = now_us(), end = start + (long long)(seconds * 1e6), previous = start, samples = 0;
    int last = -1;
    for (;;) {
        int state = value(fds[0]) << 2 | value(fds[1]) << 1 | value(fds[2]);
        long long at = now_us();
        samples++;
        if (at - previous > 1000) {
            snprintf(text, sizeof text, " %lld!%lld", previous - start, at - previous);
            event(&out, &used, &size, text);
        }
        if (state != last) {
            long long middle = last < 0 ? 0 : (previous + at) / 2 - start;
            snprintf(text, sizeof text, " %lld=%d%d%d", middle, state >> 2 & 1, state >> 1 & 1, state & 1);
            event(&out, &used, &size, text);
            last = state;
        }
        previous = at;
        if (at >= end) break;
    }
    printf("VM: trace %s %lld %lld %lld%s\n", name, start, previous, samples, out);
    fflush(stdout);
    return 0;
}

static int watch(int cpu, double seconds, const char *name) {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    if (sched_setaffinity(0, sizeof set, &set) != 0) { perror("sched_setaffinity"); return 1; }
    struct sched_param priority = {.sched_priority = 50};
    if (sched_setscheduler(0, SCHED_FIFO, &priority) != 0) perror("sched_setscheduler");
    size_t size = 1 << 12, used = 0;
    char *out = malloc(size), text[64];
    out[0] = 0;
    long long start = now_us(), end = start + (long long)(seconds * 1e6), previous = start;
    struct timespec nap = {0, 1000000};
    while (previous < end) {
        nanosleep(&nap, NULL);
        long long at = now_us();
        if (at - previous > 3000) {
            snprintf(text, sizeof text, " %lld!%lld", previous - start, at - previous);
            event(&out, &used, &size, text);
        }
        previous = at;
    }
    printf("VM: stalls %s %lld %lld%s\n", name, start, previous, out);
    fflush(stdout);
    return 0;
}

int main(int argc, char **argv) {
    if (argc == 5 && strcmp(argv[1], "lines") == 0) return lines(argv[2], atof(argv[3]), argv[4]);
    if (argc == 5 && strcmp(argv[1], "watch") == 0) return watch(atoi(argv[2]), atof(argv[3]), argv[4]);
    fprintf(stderr, "usage: gpio-trace lines BASE SECONDS NAME | watch CPU SECONDS NAME\n");
    return 2;
}
