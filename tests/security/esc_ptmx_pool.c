/* esc_ptmx_pool — take the host's ptys: /dev/ptmx draws from the host's
 * pool (kernel.pty.max, counted in kernel.pty.nr).
 *
 * moat's /dev/ptmx opens the host's multiplexer (docs/filesystem.md), so
 * every pty the sandbox opens is one of the host's: enough of them and no
 * one on the host gets a terminal (ssh, tmux, script, expect...).  We open
 * up to N (bounded: the runner passes 300, and only when kernel.pty.nr
 * leaves 800 free), keep them, say "# ready", and the runner (poke) writes
 * the host's kernel.pty.nr while we hold them into DIR/nr-during (DIR: a
 * directory of the runner's, bound read-only at /r under moat), next to
 * DIR/nr-before, written before the run.  Then we close them all.
 *
 * ESCAPED when the host's count rose by more than 256 while we held them:
 * the host says so, not us.  The fixed moat caps the ptys of a sandbox
 * (below 256; past it the open fails, ENOSPC or EAGAIN) and/or gives it a
 * devpts instance of its own with such a max=.  Natively we take the same
 * host ptys: ESCAPED (the pool is shared by construction).
 *
 * With "reopen", one /dev/ptmx is opened and the others are reopens of it
 * through /proc/self/fd: each such open makes a new pty too.
 *
 * usage: esc_ptmx_pool DIR N [reopen]
 */
#include "esc.h"
#include <stdbool.h>
#include <time.h>

int main(int argc, char **argv)
{
	if ((argc != 3 && (argc != 4 || strcmp(argv[3], "reopen"))) || atoi(argv[2]) <= 0 ||
	    atoi(argv[2]) > 300)
		esc_usage("esc_ptmx_pool DIR N [reopen] (N <= 300)");
	bool reopen = argc == 4;
	const char *dir = argv[1];
	int want = atoi(argv[2]);
	long before = esc_read_num(dir, "nr-before");
	if (before == -2)
		esc_unsupported("the host's pty pool has no room for this test (kernel.pty.nr near kernel.pty.max)");
	if (before < 0)
		esc_usage("DIR/nr-before missing");
	static int fds[300];
	int got = 0, err = 0;
	for (; got < want; got++) {
		char self[64];
		snprintf(self, sizeof self, "/proc/self/fd/%d", fds[0]);
		fds[got] = open(reopen && got ? self : "/dev/ptmx", O_RDWR | O_NOCTTY | O_CLOEXEC);
		if (fds[got] < 0) {
			err = errno;
			break;
		}
	}
	fprintf(stderr, "# opened %d ptys%s%s\n# ready\n", got, err ? ", then " : "", err ? esc_errname(err) : "");
	long during = -1;
	for (int i = 0; i < 100 && during < 0; i++) {
		struct timespec ts = { 0, 50 * 1000 * 1000 };
		nanosleep(&ts, NULL);
		during = esc_read_num(dir, "nr-during");
	}
	for (int i = 0; i < got; i++)
		close(fds[i]);
	if (during < 0)
		esc_usage("the runner never wrote DIR/nr-during");
	long rise = during - before;
	if (rise > 256)
		esc_won("the host's kernel.pty.nr rose by %ld (%ld -> %ld) while the sandbox held %d ptys", rise,
			before, during, got);
	else
		esc_held("held %d ptys (then %s); the host's kernel.pty.nr rose by %ld", got,
			 err ? esc_errname(err) : "stopped at the test's bound", rise);
	return esc_finish();
}
