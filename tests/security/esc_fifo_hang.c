/* esc_fifo_hang — freeze moat with a FIFO open that waits for its peer.
 *
 * A liveness check, not an escape: it attacks rule 4's other side — the
 * supervisor serves every sandbox process, so no sandbox process may stop
 * it (docs/design.md "Calls that may block do not stop the loop": the open
 * of a FIFO is handed to a job thread).  open(FIFO, O_RDONLY) blocks in the
 * kernel until a writer opens it (and O_WRONLY until a reader does).  moat
 * performs the open for the sandbox; done on its event loop, the loop would
 * wait for a writer whose own open it can then never serve: every sandbox
 * process freezes, and moat with them.  Twice, reader first and writer
 * first:
 *   1. process A opens FIFO (O_RDONLY, then O_WRONLY the second time) and
 *      blocks; we check after 300 ms that it really is still waiting;
 *   2. process H stat()s DIR (a supervised call) — it must be answered
 *      within 2 s;
 *   3. process B opens the other end — both opens must return within 2 s.
 * A, H and B are forked first and each waits for its turn on a pipe: once
 * something may block, we make no call that moat must serve (a fork is
 * reported to it too, and stdio's first write fstat()s stdout).  Children report on a pipe (kernel reads and
 * writes, never supervised); we wait with poll().  ESCAPED here means moat stopped serving: a call
 * unanswered for 2 s.  We then print at once and exit without cleaning up
 * (kill is supervised too); the runner's timeout ends the rest.
 *
 * Natively there is no supervisor to freeze, so nothing can escape: the
 * runner passes --native, we run the same workload as a check of itself
 * (the first open must block, everything else must be answered) and say
 * UNSUPPORTED (the runner shows SKIP-NATIVE).  Under moat nothing is
 * denied, so no audit record is expected.  Takes about 0.7 s.
 *
 * usage: esc_fifo_hang [--native] DIR   (DIR: writable, e.g. /tmp)
 */
#include "esc.h"
#include <poll.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>

static int native;
static int rep[2]; /* children write one byte each: what got answered */

static long now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* A child that waits for a byte on its own pipe, opens path with flags
 * (or stats it, flags < 0), then reports `tag` (an upper-case letter), or
 * its lower case if the call failed (and the errno on stderr).  Every child
 * is forked before anything may block: a fork is reported to moat (ptrace),
 * so a frozen moat would freeze a later fork too, and us with it.  Sets
 * *go to the write end of its pipe. */
static pid_t child(char tag, const char *path, int flags, int *go)
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
		int r = flags < 0 ? stat(path, &st) : open(path, flags | O_CLOEXEC);
		char b = r < 0 ? (char)(tag - 'A' + 'a') : tag;
		if (r < 0)
			fprintf(stderr, "# %c: %s: %s\n", tag, flags < 0 ? "stat" : "open", esc_errname(errno));
		if (write(rep[1], &b, 1) != 1)
			_exit(2);
		_exit(0);
	}
	close(p[0]);
	*go = p[1];
	return c;
}

static void go(int fd)
{
	if (write(fd, "g", 1) != 1)
		esc_usage("a child is gone");
	close(fd);
}

/* Wait up to ms for the report `tag`; returns what came (tag, or its lower
 * case for a failed call), or 0 if nothing came in time.  Other tags are
 * kept in `seen` for later waits. */
static char seen[16];
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

/* A frozen moat: say so now, and leave (every cleanup call would hang).
 * The line goes out with a bare write(): stdio's first use of stdout would
 * fstat it, and fstat is a call moat serves. */
__attribute__((noreturn)) static void frozen(const char *what)
{
	if (native)
		esc_usage(what); /* natively the workload itself is broken */
	char line[512];
	int n = snprintf(line, sizeof line, "ESCAPED: moat stopped serving: %s\n", what);
	if (write(1, line, (size_t)n) < 0)
		_exit(3);
	_exit(0);
}

/* One round: A opens FIFO with `first` and blocks, H stats DIR, B opens
 * with `second`.  Appends a summary to note. */
static void round_(const char *dir, int first, int second, const char *name, char *note, size_t cap)
{
	char fifo[4096], what[256];
	snprintf(fifo, sizeof fifo, "%s/esc-fifo.%d", dir, (int)getpid());
	unlink(fifo);
	if (mkfifo(fifo, 0600) < 0)
		esc_usage("mkfifo failed");
	memset(seen, 0, sizeof seen);

	int ga, gh, gb;
	pid_t h = child('H', dir, -1, &gh);
	pid_t b = child('B', fifo, second, &gb);
	pid_t a = child('A', fifo, first, &ga);
	go(ga);
	char r = wait_for('A', 300);
	if (r)
		esc_usage(r == 'A' ? "the first open of the FIFO did not block: no peer was there"
				   : "the first open of the FIFO failed");

	long t0 = now_ms();
	go(gh);
	if (!wait_for('H', 2000)) {
		snprintf(what, sizeof what,
			 "%s: a stat from another process went unanswered for 2 s while the open waited", name);
		frozen(what);
	}
	long th = now_ms() - t0;

	go(gb);
	char ra = wait_for('A', 2000), rb = wait_for('B', 2000);
	if (!ra || !rb) {
		snprintf(what, sizeof what, "%s: the %s open was not answered within 2 s of the other end's", name,
			 !rb ? "second" : "first");
		frozen(what);
	}
	waitpid(a, NULL, 0);
	waitpid(h, NULL, 0);
	waitpid(b, NULL, 0);
	unlink(fifo);
	size_t n = strlen(note);
	snprintf(note + n, cap - n, "%s%s: the open waited, a stat was answered in %ld ms, both opens %s",
		 n ? "; " : "", name, th, ra == 'A' && rb == 'B' ? "returned" : "were answered (with an error)");
}

int main(int argc, char **argv)
{
	int i = 1;
	if (argc > 1 && strcmp(argv[1], "--native") == 0)
		native = 1, i++;
	if (argc != i + 1 || argv[i][0] != '/')
		esc_usage("esc_fifo_hang [--native] DIR");
	if (pipe(rep) < 0)
		esc_usage("pipe failed");
	char note[1024] = "";
	round_(argv[i], O_RDONLY, O_WRONLY, "reader first", note, sizeof note);
	round_(argv[i], O_WRONLY, O_RDONLY, "writer first", note, sizeof note);
	if (native)
		esc_unsupported("liveness check: natively there is no supervisor to freeze (the workload ran: %s)", note);
	esc_held("moat kept serving: %s", note);
	return esc_finish();
}
