/* esc_scm_foreign — pass file descriptors we never opened through
 * SCM_RIGHTS: every number from 3 to 255 except our own socket pair is
 * sent over the pair, and what arrives is read.
 *
 * Attacks the network stub's SCM_RIGHTS rule (docs/network.md;
 * docs/network.md: SCM_RIGHTS passes only fds the sandbox already has).
 * The supervisor performs sendmsg itself; one that passed the numbers on
 * as they are would send from its own table: the seccomp listener, the
 * audit log, the layers' directories.  The runner holds the secret on fd 7
 * during both runs.  Natively fd 7 is inherited, so it passes and reads the
 * token (ESCAPED).  Under moat the sandbox starts with fds 0-2 only, and
 * each number is taken from the caller's own table: EBADF, recorded as
 * `sendmsg` net.foreign-fd.
 *
 * usage: ESC_TOKEN=... esc_scm_foreign
 */
#include "esc.h"
#include <sys/socket.h>

int main(void)
{
	esc_token();
	int sv[2];
	if (socketpair(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0, sv) < 0)
		esc_usage("socketpair failed");
	int passed = 0, refused = 0;
	for (int fd = 3; fd < 256; fd++) {
		if (fd == sv[0] || fd == sv[1])
			continue;
		char c = 'x', cbuf[CMSG_SPACE(sizeof(int))];
		struct iovec iov = {&c, 1};
		struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf,
				   .msg_controllen = sizeof cbuf};
		struct cmsghdr *cm = CMSG_FIRSTHDR(&m);
		cm->cmsg_level = SOL_SOCKET;
		cm->cmsg_type = SCM_RIGHTS;
		cm->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(cm), &fd, sizeof fd);
		if (sendmsg(sv[0], &m, 0) < 0) {
			refused++;
			continue;
		}
		passed++;
		m.msg_controllen = sizeof cbuf;
		if (recvmsg(sv[1], &m, MSG_CMSG_CLOEXEC) < 0 || !(cm = CMSG_FIRSTHDR(&m)) ||
		    cm->cmsg_type != SCM_RIGHTS)
			continue;
		int got;
		memcpy(&got, CMSG_DATA(cm), sizeof got);
		fcntl(got, F_SETFL, O_NONBLOCK); /* a pipe or socket must not hang us */
		char link[256] = "", path[64];
		snprintf(path, sizeof path, "/proc/self/fd/%d", got);
		ssize_t n = readlink(path, link, sizeof link - 1);
		link[n > 0 ? n : 0] = '\0';
		if (esc_fd_has_token(got))
			esc_won("fd %d passed and read: the token", fd);
		else
			esc_won("fd %d, which we never opened, passed (%s)", fd, link);
		close(got);
	}
	if (!passed)
		esc_held("all %d foreign numbers refused", refused);
	return esc_finish();
}
