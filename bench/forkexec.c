/* forkexec: N x (fork, exec /bin/true, wait); total wall time.
 *
 *     forkexec [N] [PROGRAM]      (N = 300, PROGRAM = /bin/true)
 *
 * Prints one line: "forkexec <N> <total ms> ms <per-iteration us> us/iter".
 * Exits non-zero if any child did not exit 0.
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
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
    long n = argc > 1 ? atol(argv[1]) : 300;
    const char *prog = argc > 2 ? argv[2] : "/bin/true";
    int bad = 0;
    if (n < 1)
        n = 1;
    double t0 = now_ns();
    for (long i = 0; i < n; i++) {
        pid_t pid = fork();
        if (pid < 0) {
            perror("forkexec: fork");
            return 1;
        }
        if (pid == 0) {
            execl(prog, prog, (char *)NULL);
            _exit(127);
        }
        int status;
        if (waitpid(pid, &status, 0) < 0) {
            perror("forkexec: waitpid");
            return 1;
        }
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
            bad++;
    }
    double t1 = now_ns();
    printf("forkexec %ld %.1f ms %.1f us/iter\n", n, (t1 - t0) / 1e6, (t1 - t0) / 1e3 / n);
    if (bad) {
        fprintf(stderr, "forkexec: %d of %ld children failed\n", bad, n);
        return 1;
    }
    return 0;
}
