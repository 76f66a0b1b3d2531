/* esc_loop_fifo — freeze moat's event loop by reopening a FIFO through its
 * magic link, then see whether a limit or a signal still ends the run.
 *
 * A moat-side attempt (run.sh: side=moat).  moat hands the open of a FIFO
 * by its name to a job thread (esc_fifo_hang), but a FIFO can also be
 * reopened through the fd that already holds it: /proc/self/fd/N and its
 * other spellings.  An open of a FIFO with no peer waits in the kernel; a
 * moat that performs that open on its single event loop waits with it, and
 * then serves nobody: no other sandbox process, no limit, no signal.  Six
 * ways, one after another, each on a FIFO of its own in DIR:
 *
 *   proc-self-fd   fd R (O_RDONLY|O_NONBLOCK: no writer), a child opens
 *                  /proc/self/fd/R O_RDONLY: waits for a writer;
 *   dev-fd-write   fd W (O_WRONLY, its reader closed again), a child opens
 *                  /dev/fd/W O_WRONLY: waits for a reader;
 *   proc-pid-fd    a child opens /proc/<our pid>/fd/R: our fd, not its own;
 *   thread-self    /proc/thread-self/fd/R;
 *   dirfd          openat(open("/proc/self/fd"), "R", O_RDONLY);
 *   o-path         fd P (O_PATH), a child opens /proc/self/fd/P O_RDONLY.
 *
 * For each: the child's open must still be waiting after 200 ms (natively
 * this proves the open really blocks), then another process's stat() of DIR
 * must be answered within 1 s — or moat has stopped serving: we say ESCAPED
 * at once (a bare write) and stay.  Every child is forked before anything
 * may block (a fork is reported to moat).
 *
 * Then we wait, without a supervised call, for the end: the runner gives
 * moat `--wall-time-limit 2` and requires it gone within 3 s (loop_fifo),
 * or sends it SIGTERM at 1.5 s (and again at 2 s) and requires it gone
 * within 3 s (loop_fifo_term).  Whatever the sandbox does to the loop, the
 * limit and the signal must still end the run: a fixed moat performs these
 * opens where its loop does not wait (a job thread, as a FIFO by name), or
 * answers them without waiting, and ends the run on time even with such
 * opens still pending.
 *
 * Natively (--native) we run the same and answer UNSUPPORTED (nothing to
 * freeze); the children are killed.  About 1.5 s.
 *
 * usage: esc_loop_fifo [--native] DIR
 * (ESC_LOOP_ONLY=K in the environment: way K alone, for trying one by hand)
 */
#include "esc.h"
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>

enum { NWAYS = 6 };
static const char *const ways[NWAYS] = { "proc-self-fd", "dev-fd-write", "proc-pid-fd",
					 "thread-self", "dirfd", "o-path" };
static int native;
static int rep[2];
static int fds[NWAYS];
static pid_t parent;

static long now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void say(const char *s)
{
	if (write(2, s, strlen(s)) < 0)
		_exit(3);
}

/* The blocking open of way k, in a child. */
static int way_open(int k)
{
	char p[128];
	switch (k) {
	case 0:
	case 5:
		snprintf(p, sizeof p, "/proc/self/fd/%d", fds[k]);
		return open(p, O_RDONLY | O_CLOEXEC);
	case 1:
		snprintf(p, sizeof p, "/dev/fd/%d", fds[k]);
		return open(p, O_WRONLY | O_CLOEXEC);
	case 2:
		snprintf(p, sizeof p, "/proc/%d/fd/%d", (int)parent, fds[k]);
		return open(p, O_RDONLY | O_CLOEXEC);
	case 3:
		snprintf(p, sizeof p, "/proc/thread-self/fd/%d", fds[k]);
		return open(p, O_RDONLY | O_CLOEXEC);
	default: {
		int d = open("/proc/self/fd", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (d < 0)
			return -1;
		snprintf(p, sizeof p, "%d", fds[k]);
		return openat(d, p, O_RDONLY | O_CLOEXEC);
	}
	}
}

/* A child that waits for its go byte, then runs way k (k >= 0) or stats
 * dir (k < 0), and reports tag (lower case: the call failed). */
static pid_t child(int k, char tag, const char *dir, int *go)
{
	int p[2];
	if (pipe(p) < 0)
		esc_usage("pipe failed");
	pid_t c = fork();
	if (c < 0)
		esc_usage("fork failed");
	if (c == 0) {
		char g;
		close(p[1]);
		if (read(p[0], &g, 1) != 1)
			_exit(2);
		struct stat st;
		int r = k < 0 ? stat(dir, &st) : way_open(k);
		char b = r < 0 ? (char)(tag - 'A' + 'a') : tag;
		if (write(rep[1], &b, 1) != 1)
			_exit(2);
		_exit(0);
	}
	close(p[0]);
	*go = p[1];
	return c;
}

static char seen[64];
static char wait_for(char tag, int ms)
{
	long end = now_ms() + ms;
	for (;;) {
		for (char *p = seen; *p; p++)
			if (*p == tag || *p == tag - 'A' + 'a')
				return *p;
		long left = end - now_ms();
		if (left <= 0)
			return 0;
		struct pollfd pfd = { .fd = rep[0], .events = POLLIN };
		if (poll(&pfd, 1, (int)left) == 1) {
			char b;
			if (read(rep[0], &b, 1) == 1 && strlen(seen) < sizeof seen - 1)
				seen[strlen(seen)] = b;
		}
	}
}

int main(int argc, char **argv)
{
	int i = 1;
	if (argc > 1 && strcmp(argv[1], "--native") == 0)
		native = 1, i++;
	if (argc != i + 1 || argv[i][0] != '/')
		esc_usage("esc_loop_fifo [--native] DIR");
	const char *dir = argv[i];
	parent = getpid();
	if (pipe(rep) < 0)
		esc_usage("pipe failed");

	char fifo[NWAYS][4096];
	for (int k = 0; k < NWAYS; k++) {
		snprintf(fifo[k], sizeof fifo[k], "%s/esc-loop.%d.%d", dir, (int)parent, k);
		unlink(fifo[k]);
		if (mkfifo(fifo[k], 0600) < 0)
			esc_usage("mkfifo failed");
		if (k == 1) {
			int r = open(fifo[k], O_RDONLY | O_NONBLOCK | O_CLOEXEC);
			fds[k] = open(fifo[k], O_WRONLY | O_NONBLOCK | O_CLOEXEC);
			if (r < 0 || fds[k] < 0)
				esc_usage("could not open the FIFO's write end");
			close(r);
			/* blocking writes from here on: the reopen copies the flags
			 * it is given, not these */
			fcntl(fds[k], F_SETFL, 0);
		} else if (k == 5) {
			fds[k] = open(fifo[k], O_PATH | O_CLOEXEC);
		} else {
			fds[k] = open(fifo[k], O_RDONLY | O_NONBLOCK | O_CLOEXEC);
		}
		if (fds[k] < 0)
			esc_usage("could not open a FIFO");
	}
	/* Each child keeps the fds (no exec), so a reopen by number works in
	 * it too. */
	int go_open[NWAYS], go_stat[NWAYS];
	pid_t kids[2 * NWAYS];
	for (int k = 0; k < NWAYS; k++) {
		kids[2 * k] = child(k, (char)('A' + k), dir, &go_open[k]);
		kids[2 * k + 1] = child(-1, (char)('M' + k), dir, &go_stat[k]);
	}

	char note[2048] = "", line[512];
	const char *only = getenv("ESC_LOOP_ONLY");
	for (int k = 0; k < NWAYS; k++) {
		if (only && atoi(only) != k)
			continue;
		char a = (char)('A' + k), h = (char)('M' + k);
		if (write(go_open[k], "g", 1) != 1)
			esc_usage("a child is gone");
		char r = wait_for(a, 200);
		if (r && native)
			esc_usage("natively the reopen did not wait: the workload is broken");
		long t0 = now_ms();
		if (write(go_stat[k], "g", 1) != 1)
			esc_usage("a child is gone");
		if (!wait_for(h, 1000)) {
			if (native)
				esc_usage("natively a stat went unanswered");
			snprintf(line, sizeof line,
				 "ESCAPED: moat stopped serving: while a child's %s reopen of a FIFO waited, another "
				 "process's stat went unanswered for 1 s\n",
				 ways[k]);
			if (write(1, line, strlen(line)) < 0)
				_exit(3);
			for (;;)
				pause();
		}
		size_t n = strlen(note);
		snprintf(note + n, sizeof note - n, "%s%s: %s, stat in %ld ms", n ? "; " : "", ways[k],
			 r ? (r == a ? "returned" : "failed") : "waits", now_ms() - t0);
	}
	if (native) {
		for (int k = 0; k < 2 * NWAYS; k++)
			kill(kids[k], SIGKILL);
		for (int k = 0; k < 2 * NWAYS; k++)
			waitpid(kids[k], NULL, 0);
		for (int k = 0; k < NWAYS; k++)
			unlink(fifo[k]);
		esc_unsupported("moat-side: natively there is no loop to freeze (the workload ran: %s)", note);
	}
	snprintf(line, sizeof line, "# every way was served; now waiting for the limit or the signal\n");
	say("# ");
	say(note);
	say("\n");
	say(line);
	for (;;)
		pause();
}
