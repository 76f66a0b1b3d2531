/* esc_fcntl_setown — aim SIGIO at processes outside the sandbox: make a
 * host process the owner of a pipe (F_SETOWN, F_SETOWN_EX with F_OWNER_PID
 * and F_OWNER_TID, and a host process group through F_SETOWN(-pgrp) and
 * F_OWNER_PGRP), switch on O_ASYNC and write to the pipe, so that the
 * kernel signals the owner.  SIGIO's default action kills a `sleep`.
 *
 * Attacks rule 9 (signals stay inside): fcntl's owner commands name a
 * process that will get a signal later, from the kernel, where no kill()
 * passes the supervisor.  Under moat they must answer ESRCH (audited
 * `fcntl`, signal.outside-sandbox).  The runner starts the victims (the
 * last two lead their own process group) and checks that they all die
 * natively and all live under moat; like esc_kill_host we also watch each
 * victim through a pidfd where we may.
 *
 * usage: esc_fcntl_setown PID_SETOWN PID_EX_PID PID_EX_TID PGRP_SETOWN PGRP_EX
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

/* Own a fresh pipe's read end with `how`, switch on O_ASYNC, make it
 * readable, and see whether the victim dies. */
static void attempt(const char *how, int pid, int cmd, int type, long owner)
{
	int p[2];
	if (pipe2(p, O_CLOEXEC) < 0)
		esc_usage("pipe2 failed");
	int watch = (int)syscall(SYS_pidfd_open, pid, 0);
	int watch_errno = errno;

	long r;
	int err = 0;
	if (cmd == F_SETOWN_EX) {
		struct f_owner_ex own = {.type = type, .pid = (pid_t)owner};
		r = fcntl(p[0], F_SETOWN_EX, &own);
	} else {
		r = fcntl(p[0], F_SETOWN, (int)owner);
	}
	if (r < 0)
		err = errno;
	/* Whatever the owner call said: the rest costs nothing. */
	int fl = fcntl(p[0], F_GETFL);
	if (fl < 0 || fcntl(p[0], F_SETFL, fl | O_ASYNC) < 0)
		fprintf(stderr, "# %s: F_SETFL O_ASYNC: %s\n", how, esc_errname(errno));
	if (write(p[1], "x", 1) != 1)
		fprintf(stderr, "# %s: write: %s\n", how, esc_errname(errno));

	int died = -1; /* unknown */
	if (watch >= 0) {
		struct pollfd pf = {.fd = watch, .events = POLLIN};
		died = poll(&pf, 1, r == 0 ? 2000 : 300) == 1;
		close(watch);
	}
	if (r == 0 && died == 1)
		esc_won("%s(%ld) returned 0 and SIGIO killed %d", how, owner, pid);
	else if (r == 0)
		esc_won("%s(%ld) returned 0 (a host process owns our pipe; %d %s)", how, owner, pid,
			died == 0 ? "still lives" : "is not watchable: the runner checks it");
	else if (died == 1)
		esc_won("%s(%ld): %s, yet %d died", how, owner, esc_errname(err), pid);
	else
		esc_held("%s(%ld): %s%s", how, owner, esc_errname(err),
			 watch < 0 ? (watch_errno == ESRCH ? " (pidfd_open: ESRCH)" : " (not watchable)") : "");
	close(p[0]);
	close(p[1]);
}

int main(int argc, char **argv)
{
	if (argc != 6)
		esc_usage("esc_fcntl_setown PID_SETOWN PID_EX_PID PID_EX_TID PGRP_SETOWN PGRP_EX");
	int p;

	p = victim(argv, 1);
	attempt("fcntl(F_SETOWN, pid)", p, F_SETOWN, 0, p);
	p = victim(argv, 2);
	attempt("fcntl(F_SETOWN_EX, F_OWNER_PID)", p, F_SETOWN_EX, F_OWNER_PID, p);
	p = victim(argv, 3);
	attempt("fcntl(F_SETOWN_EX, F_OWNER_TID)", p, F_SETOWN_EX, F_OWNER_TID, p);
	p = victim(argv, 4); /* leads its own group: pgid == pid */
	attempt("fcntl(F_SETOWN, -pgrp)", p, F_SETOWN, 0, -(long)p);
	p = victim(argv, 5);
	attempt("fcntl(F_SETOWN_EX, F_OWNER_PGRP)", p, F_SETOWN_EX, F_OWNER_PGRP, p);
	return esc_finish();
}
