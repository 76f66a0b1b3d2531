/* esc_late_children — outlive the sandbox: children born while moat is
 * killing what the first process left behind.
 *
 * A liveness check, not an escape (see esc_fifo_hang.c).  It attacks the
 * run's end (docs/design.md: after the first process exits, every loop
 * iteration kills what is left, so children born while their parents were
 * dying go too).  A moat that kills the processes it knows once, when the
 * first process exits, misses a child whose fork was under way — created by
 * the kernel, not yet reported to moat.  That child lives on, and moat,
 * waiting for its last process, does not exit.
 *
 * As the first process we start a crowd of 1024 children that pause(), and
 * 8 fork chains; we let the chains run for 100 ms, and exit.  A chain is
 * one process at a time that forks and lets its parent exit at once, so a
 * child is always being born (and a chain never holds more than a process
 * or two: no fork bomb); it ends by itself after 10 s.  The crowd makes
 * moat's killing take a while, so that some chain is likely in the middle
 * of a fork meanwhile (with 256 the old moat hung 4 times in 6, with 1024
 * 8 in 8).  Every process carries MARKER in its argv.  We cannot see what
 * happens after our own exit, so the runner judges, inside its pid
 * namespace: moat must exit within its short timeout, and `pgrep -f MARKER`
 * must find nothing afterwards.  Our final line (HELD) only says that the
 * chains were started; a moat that hangs or leaves anything behind fails
 * the run however we ended.
 *
 * Natively there is no supervisor to fail: the runner passes --native and
 * we run the workload as a check of itself, in a child S that plays the
 * first process, in a process group of its own: crowd and chains must
 * outlive S
 * (they hold a pipe open), and then we kill S's group and wait until the
 * last of them is gone (we are their subreaper, and reap as they die), and
 * say UNSUPPORTED (SKIP-NATIVE).  Under moat nothing is denied, so no audit
 * record is expected.  Takes about 2 s under moat (1024 forks, each
 * reported to moat by ptrace), a quarter of a second natively.
 *
 * usage: esc_late_children [--native] MARKER
 */
#include "esc.h"
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>

enum { CROWD = 1024, CHAINS = 8, LIFE_MS = 10000 };

static long now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Start the crowd and the chains (they inherit every fd of ours).
 * Returns how many chains started. */
static int start_chains(void)
{
	for (int k = 0; k < CROWD; k++) {
		pid_t c = fork();
		if (c < 0)
			esc_usage("fork failed (the crowd)");
		if (c == 0)
			for (;;)
				pause();
	}
	long end = now_ms() + LIFE_MS;
	int started = 0;
	for (int k = 0; k < CHAINS; k++) {
		pid_t c = fork();
		if (c < 0)
			break;
		if (c == 0) {
			while (now_ms() < end)
				if (fork() != 0) /* the parent (or a failed fork) steps aside */
					_exit(0);
			_exit(0);
		}
		started++;
	}
	return started;
}

static void reap_all(void)
{
	while (waitpid(-1, NULL, WNOHANG) > 0)
		;
}

/* Native self-check: S plays the first process. */
static void native_check(void)
{
	int life[2];
	if (prctl(PR_SET_CHILD_SUBREAPER, 1) < 0 || pipe(life) < 0)
		esc_usage("prctl or pipe failed");
	pid_t s = fork();
	if (s < 0)
		esc_usage("fork failed");
	if (s == 0) {
		setpgid(0, 0);
		close(life[0]);
		int n = start_chains(); /* they hold life[1] */
		nanosleep(&(struct timespec){ .tv_nsec = 100 * 1000 * 1000 }, NULL);
		_exit(n == CHAINS ? 0 : 1);
	}
	setpgid(s, s); /* either of us may get there first */
	close(life[1]);
	int st;
	if (waitpid(s, &st, 0) != s || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
		esc_usage("natively the chains did not all start");
	/* 100 ms after S, the chains must still be there (the pipe has writers),
	 * while we reap their dead as they hop. */
	struct pollfd pfd = { .fd = life[0], .events = POLLIN };
	for (long end = now_ms() + 100; now_ms() < end;) {
		reap_all();
		if (poll(&pfd, 1, 1) != 0)
			esc_usage("natively the chains did not outlive the process that started them");
	}
	/* Now end them: the whole group, until the pipe says the last is gone. */
	for (long end = now_ms() + 3000; now_ms() < end;) {
		kill(-s, SIGKILL);
		reap_all();
		if (poll(&pfd, 1, 10) == 1 && (pfd.revents & POLLHUP)) {
			reap_all();
			return;
		}
	}
	esc_usage("natively the chains could not be ended within 3 s");
}

int main(int argc, char **argv)
{
	int native = 0, i = 1;
	if (argc > 1 && strcmp(argv[1], "--native") == 0)
		native = 1, i++;
	if (argc != i + 1 || strlen(argv[i]) < 8)
		esc_usage("esc_late_children [--native] MARKER");
	if (native) {
		native_check();
		esc_unsupported("liveness check: natively there is no supervisor; the workload ran (%d paused "
				"children and %d fork chains outlived the process that started them, then were "
				"killed)",
				CROWD, CHAINS);
	}
	int n = start_chains();
	nanosleep(&(struct timespec){ .tv_nsec = 100 * 1000 * 1000 }, NULL);
	esc_held("the first process exits now, leaving %d paused children and %d fork chains; the runner "
		 "checks that moat ends them all and exits",
		 CROWD, n);
	return esc_finish();
}
