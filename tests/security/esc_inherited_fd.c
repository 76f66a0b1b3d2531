/* esc_inherited_fd — use a descriptor the host left open: any fd 3..64 we
 * inherited, and any fd 3..64 of our parent, taken with pidfd_getfd.
 *
 * Attacks rule 5 (the sandbox starts with only fds 0-2) and rule 8
 * (pidfd_getfd is refused; under moat our parent is the supervisor, which
 * itself inherited the runner's fd 5 on the secret).  The runner opens fd 5
 * on the secret in its own shell before both runs.
 *
 * usage: ESC_TOKEN=... esc_inherited_fd
 */
#include "esc.h"
#include <sys/stat.h>
#include <sys/syscall.h>

int main(void)
{
	int open_fds = 0;
	for (int fd = 3; fd <= 64; fd++) {
		struct stat st;
		if (fstat(fd, &st) < 0)
			continue;
		open_fds++;
		if (esc_fd_has_token(fd))
			esc_won("inherited fd %d holds the secret", fd);
		else
			esc_won("inherited fd %d is open (not the secret)", fd);
	}
	if (!open_fds)
		esc_held("no fd 3..64 open (fstat: EBADF)");

	pid_t pp = getppid();
	int pidfd = (int)syscall(SYS_pidfd_open, pp, 0);
	if (pidfd < 0) {
		esc_held("pidfd_open(parent %d): %s", (int)pp, esc_errname(errno));
		return esc_finish();
	}
	int stolen = 0, last_err = 0;
	for (int fd = 3; fd <= 64; fd++) {
		int mine = (int)syscall(SYS_pidfd_getfd, pidfd, fd, 0);
		if (mine < 0) {
			if (errno != EBADF || !last_err)
				last_err = errno;
			if (errno == EPERM || errno == ENOSYS || errno == EACCES)
				break; /* refused outright: every fd will be */
			continue;
		}
		stolen++;
		if (esc_fd_has_token(mine))
			esc_won("pidfd_getfd(parent %d, fd %d) holds the secret", (int)pp, fd);
		close(mine);
	}
	if (!stolen)
		esc_held("pidfd_getfd(parent %d, 3..64): %s", (int)pp, esc_errname(last_err));
	close(pidfd);
	return esc_finish();
}
