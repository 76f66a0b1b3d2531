/* esc_kill_host — signal processes outside the sandbox.
 *
 * Attacks rule 9 (signals stay inside: kill, tgkill, tkill, rt_sigqueueinfo
 * and pidfd_send_signal reach only sandbox processes, and kill(-1, ...) means
 * every *sandbox* process).  The runner starts one victim per way (a plain
 * `sleep` outside moat, inside the runner's own pid namespace) and checks
 * afterwards that every victim is still alive; this program reports what
 * each call returned.  A call returning 0 on a victim counts as an escape.
 * kill(-1) returns 0 whenever anything at all was signalled, so its effect is
 * judged by watching the last victim through a pidfd (natively) — under moat
 * that pidfd is refused and the runner's liveness check is the judge.
 *
 * usage: esc_kill_host PID_KILL PID_TGKILL PID_TKILL PID_SIGQUEUE PID_PIDFD PID_ALL
 */
#include "esc.h"
#include <poll.h>
#include <signal.h>
#include <sys/syscall.h>

static int victim(char **argv, int i)
{
	int pid = atoi(argv[i]);
	if (pid <= 1 || pid == getpid())
		esc_usage("victim pids must be other processes");
	return pid;
}

static void note(const char *call, int pid, long r)
{
	if (r == 0)
		esc_won("%s(%d, SIGKILL) returned 0", call, pid);
	else
		esc_held("%s(%d): %s", call, pid, esc_errname(errno));
}

int main(int argc, char **argv)
{
	if (argc != 7)
		esc_usage("esc_kill_host PID_KILL PID_TGKILL PID_TKILL PID_SIGQUEUE PID_PIDFD PID_ALL");
	int p;

	p = victim(argv, 1);
	note("kill", p, kill(p, SIGKILL));

	p = victim(argv, 2);
	note("tgkill", p, syscall(SYS_tgkill, p, p, SIGKILL));

	p = victim(argv, 3);
	note("tkill", p, syscall(SYS_tkill, p, SIGKILL));

	p = victim(argv, 4);
	siginfo_t si = {0};
	si.si_signo = SIGKILL;
	si.si_code = SI_QUEUE; /* a negative code: what the kernel allows for another process */
	si.si_pid = getpid();
	si.si_uid = getuid();
	note("rt_sigqueueinfo", p, syscall(SYS_rt_sigqueueinfo, p, SIGKILL, &si));

	p = victim(argv, 5);
	int pfd = (int)syscall(SYS_pidfd_open, p, 0);
	if (pfd < 0) {
		esc_held("pidfd_open(%d): %s", p, esc_errname(errno));
	} else {
		note("pidfd_send_signal", p, syscall(SYS_pidfd_send_signal, pfd, SIGKILL, NULL, 0));
		close(pfd);
	}

	/* kill(-1): every process we may signal.  Watch the last victim. */
	p = victim(argv, 6);
	int watch = (int)syscall(SYS_pidfd_open, p, 0);
	int watch_errno = errno;
	long r = kill(-1, SIGKILL);
	int kerr = errno;
	if (watch >= 0) {
		struct pollfd pf = {.fd = watch, .events = POLLIN};
		if (poll(&pf, 1, 2000) == 1)
			esc_won("kill(-1, SIGKILL) killed %d", p);
		else
			esc_held("kill(-1, SIGKILL) returned %ld (%s) and %d lives", r,
				 r ? esc_errname(kerr) : "ok", p);
		close(watch);
	} else {
		esc_held("kill(-1, SIGKILL) returned %ld (%s); %d not watchable (pidfd_open: %s), the runner checks it",
			 r, r ? esc_errname(kerr) : "ok", p, esc_errname(watch_errno));
	}
	return esc_finish();
}
