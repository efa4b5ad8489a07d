/* Memory copy bandwidth, the ceiling of a 1 MiB read from tmpfs (which is a
 * copy from page-cache pages to the user's buffer): copies 1 MiB blocks in
 * sequence out of a 1 GiB buffer into one 1 MiB buffer for SECONDS and
 * prints bytes per second. Usage: memcpy_bw [SECONDS] */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}

int main(int argc, char **argv) {
    double seconds = argc > 1 ? atof(argv[1]) : 5;
    size_t big = 1UL << 30, block = 1UL << 20;
    char *src = malloc(big), *dst = aligned_alloc(4096, block);
    if (!src || !dst) { perror("malloc"); return 1; }
    memset(src, 0x5a, big);
    memset(dst, 0, block);
    double t0 = now(), t;
    size_t bytes = 0, off = 0;
    do {
        for (int i = 0; i < 64; i++) {
            memcpy(dst, src + off, block);
            off = (off + block) % big;
            bytes += block;
        }
        __asm__ volatile("" : : "r"(dst) : "memory");
        t = now();
    } while (t - t0 < seconds);
    printf("%.0f\n", bytes / (t - t0));
    return 0;
}
