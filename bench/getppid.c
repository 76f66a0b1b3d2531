/* getppid: ns per getppid() — the cost of a call the kernel serves directly
 * (under moat: one pass through the BPF filter, no notification).
 *
 *     getppid [N]      (N = 2000000)
 *
 * Prints one line: "getppid <ns> ns/call".
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e9 + ts.tv_nsec;
}

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 2000000;
    if (n < 1)
        n = 1;
    for (int i = 0; i < 1000; i++)
        syscall(SYS_getppid);
    double t0 = now_ns();
    for (long i = 0; i < n; i++)
        syscall(SYS_getppid); /* the raw call: no libc caching */
    double t1 = now_ns();
    printf("getppid %.1f ns/call\n", (t1 - t0) / n);
    return 0;
}
