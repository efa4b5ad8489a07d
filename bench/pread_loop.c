/* The ceiling of a psync engine: a bare loop of pread of BS bytes at random
 * offsets aligned to BS within FILE's first SIZE bytes, for SECONDS, one
 * thread, no timing per operation, no histogram, no bookkeeping beyond a
 * count; prints operations per second, and after them the CPU time the
 * loop used per operation in nanoseconds (user + system, getrusage): on a
 * busy host that second figure moves much less than the first. The offsets come from xorshift64*
 * and a multiply-high bound, the cheapest generator there is, so that what
 * is left is the system call and the copy. Usage:
 *   pread_loop FILE [SECONDS] [BS] [SIZE]
 * (defaults 5 s, 4096 bytes, the file's length). The file must exist and
 * hold data (lay it out first, as the benchmark scripts do). */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}

/* CPU time of this process so far, in seconds. */
static double cpu(void) {
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 + ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: %s FILE [SECONDS] [BS] [SIZE]\n", argv[0]);
        return 2;
    }
    int fd = open(argv[1], O_RDONLY);
    if (fd < 0) { perror(argv[1]); return 1; }
    double seconds = argc > 2 ? atof(argv[2]) : 5;
    size_t bs = argc > 3 ? strtoull(argv[3], NULL, 0) : 4096;
    struct stat st;
    if (fstat(fd, &st) < 0) { perror("fstat"); return 1; }
    uint64_t size = argc > 4 ? strtoull(argv[4], NULL, 0) : (uint64_t)st.st_size;
    uint64_t blocks = size / bs;
    if (blocks == 0) { fprintf(stderr, "%s is shorter than one block\n", argv[1]); return 1; }
    /* Random access, as storlab and fio advise for a random pattern. */
    posix_fadvise(fd, 0, size, POSIX_FADV_RANDOM);
    char *buf = aligned_alloc(4096, bs);
    if (!buf) { perror("aligned_alloc"); return 1; }
    uint64_t x = 0x9E3779B97F4A7C15ull, ops = 0;
    double c0 = cpu(), t0 = now(), t;
    do {
        /* The clock is read once per 1024 operations: its cost is not the
         * loop's. */
        for (int i = 0; i < 1024; i++) {
            x ^= x >> 12; x ^= x << 25; x ^= x >> 27;
            uint64_t r = x * 0x2545F4914F6CDD1Dull;
            uint64_t b = (uint64_t)(((unsigned __int128)r * blocks) >> 64);
            if (pread(fd, buf, bs, (off_t)(b * bs)) != (ssize_t)bs) {
                perror("pread");
                return 1;
            }
        }
        ops += 1024;
        t = now();
    } while (t - t0 < seconds);
    printf("%.0f %.1f\n", ops / (t - t0), (cpu() - c0) * 1e9 / ops);
    return 0;
}
