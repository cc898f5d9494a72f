/* The least a sender can do per frame, as a yardstick for scripts/bench-sender: connect to a
 * receiver on 127.0.0.1:PORT and, 100 times a second on an absolute clock, wake up and send one
 * 3-byte frame. No audio, no analysis: what is left is this machine's price of a wake-up and of a
 * loopback send (whose delivery to the receiver's socket the kernel charges to the sender).
 * With PORT "-" it only wakes up: the price of 100 wake-ups a second alone. */
#define _GNU_SOURCE
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

int main(int argc, char **argv) {
    if (argc != 2) return fprintf(stderr, "usage: sender_floor PORT|-\n"), 2;
    int sends = strcmp(argv[1], "-") != 0;
    int fd = socket(AF_INET, SOCK_STREAM, 0), one = 1;
    struct sockaddr_in address = {.sin_family = AF_INET, .sin_port = htons(atoi(argv[1])),
                                  .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    if (sends && connect(fd, (struct sockaddr *)&address, sizeof address) != 0) return perror("connect"), 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    struct timespec due;
    clock_gettime(CLOCK_MONOTONIC, &due);
    for (unsigned char frame[3] = {0, 0, 0};; frame[0]++) {
        due.tv_nsec += 10000000;
        if (due.tv_nsec >= 1000000000) due.tv_nsec -= 1000000000, due.tv_sec++;
        clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &due, NULL);
        if (sends && send(fd, frame, sizeof frame, MSG_DONTWAIT | MSG_NOSIGNAL) < 0) return 0;
    }
}
