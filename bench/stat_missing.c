/* stat_missing: ns per stat() of a path that does not exist.
 *
 *     stat_missing [N] [PATH]      (N = 20000, PATH = /nonexistent-moat-bench/x)
 *
 * Under moat, stat names a path, so every call is a supervised call: a seccomp
 * notification, the supervisor's own path walk (which fails at the first
 * component), and the reply.  Natively it is a plain failing lookup.  Prints
 * one line: "stat_missing <ns> ns/call".
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e9 + ts.tv_nsec;
}

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 20000;
    const char *path = argc > 2 ? argv[2] : "/nonexistent-moat-bench/x";
    struct stat st;
    if (n < 1)
        n = 1;
    /* warm up (and check the path really is missing) */
    for (int i = 0; i < 100; i++) {
        if (stat(path, &st) == 0 || errno != ENOENT) {
            fprintf(stderr, "stat_missing: stat(%s) did not fail with ENOENT\n", path);
            return 1;
        }
    }
    double t0 = now_ns();
    for (long i = 0; i < n; i++)
        stat(path, &st);
    double t1 = now_ns();
    printf("stat_missing %.1f ns/call\n", (t1 - t0) / n);
    return 0;
}
