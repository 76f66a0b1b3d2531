/* probe_pidfd — pidfd_open of the probe's own processes: of a child, of
 * itself, with PIDFD_NONBLOCK (the file's flags), of a bad pid and with bad
 * flags; what the pidfd then does (poll before and after the child's end,
 * pidfd_send_signal, waitid(P_PIDFD)), and that it keeps naming its own
 * child once that child is gone. */
#include "probe.h"
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>

#ifndef PIDFD_NONBLOCK
#define PIDFD_NONBLOCK O_NONBLOCK
#endif
#ifndef P_PIDFD
#define P_PIDFD 3
#endif

static long pidfd_open(pid_t pid, unsigned flags)
{
	return syscall(SYS_pidfd_open, pid, flags);
}

static void readable(const char *step, int fd)
{
	struct pollfd p = { fd, POLLIN, 0 };
	int n = poll(&p, 1, 0);
	printf("%s: %s\n", step, n < 0 ? ename(errno) : n && (p.revents & POLLIN) ? "yes" : "no");
}

int main(void)
{
	probe_init();
	pid_t child = fork();
	if (child == 0) {
		pause();
		_exit(3);
	}
	int fd = okfd("pidfd_open child", pidfd_open(child, 0));
	if (fd >= 0) {
		int fl = fcntl(fd, F_GETFL);
		printf("flags: %s%s\n", (fl & O_ACCMODE) == O_RDWR ? "rdwr" : "other",
		       fl & O_NONBLOCK ? " nonblock" : "");
		int fdfl = fcntl(fd, F_GETFD);
		printf("cloexec: %s\n", fdfl & FD_CLOEXEC ? "yes" : "no");
		readable("readable while it runs", fd);
	}
	int nb = okfd("pidfd_open PIDFD_NONBLOCK", pidfd_open(child, PIDFD_NONBLOCK));
	if (nb >= 0) {
		printf("nonblock flags: %s\n", fcntl(nb, F_GETFL) & O_NONBLOCK ? "nonblock" : "-");
		siginfo_t si;
		memset(&si, 0, sizeof si);
		ok("waitid nonblocking before the end",
		   syscall(SYS_waitid, P_PIDFD, nb, &si, WEXITED, NULL));
		close(nb);
	}
	ok("pidfd_send_signal SIGTERM", syscall(SYS_pidfd_send_signal, fd, SIGTERM, NULL, 0));
	siginfo_t si;
	memset(&si, 0, sizeof si);
	ok("waitid P_PIDFD", syscall(SYS_waitid, P_PIDFD, fd, &si, WEXITED, NULL));
	printf("child: code %d status %d\n", si.si_code, si.si_status);
	readable("readable after its end", fd);
	/* the child is reaped: the pidfd still names it, not its number */
	ok("pidfd_send_signal after the reap", syscall(SYS_pidfd_send_signal, fd, 0, NULL, 0));
	close(fd);
	int self = okfd("pidfd_open self", pidfd_open(getpid(), 0));
	if (self >= 0) {
		ok("pidfd_send_signal 0 to self", syscall(SYS_pidfd_send_signal, self, 0, NULL, 0));
		close(self);
	}
	okfd("pidfd_open 0", pidfd_open(0, 0));
	okfd("pidfd_open -1", pidfd_open(-1, 0));
	okfd("pidfd_open bad flags", pidfd_open(getpid(), 0x1));
	return 0;
}
