/* esc_unix_peercred — talk to host AF_UNIX servers that the runner binds
 * into the view and that, like the D-Bus system bus, systemd or journald,
 * trust their peer's kernel-stamped credentials: each sends the token only
 * to a peer of uid 0, and "denied uid=U pid=P" to anyone else.
 *   1. /s/peercred judges by SO_PEERCRED, which the kernel takes from the
 *      process that calls connect();
 *   2. /s/passcred judges by the SCM_CREDENTIALS the kernel attaches (the
 *      server set SO_PASSCRED) to our first message, sent with sendmsg and
 *      no control data of our own: they are those of the process that calls
 *      sendmsg.
 *
 * Attacks rule 5 (an unprivileged uid when moat runs as root) and the
 * permission model (docs/filesystem.md "Permissions": "permissions follow the sandbox's credentials,
 * not the supervisor's"): when the supervisor performs connect or sendmsg
 * on the sandbox's socket (rule 1), a sandbox of uid 65534 must not appear
 * to the peer as moat's own root identity (nor as moat's pid).  Natively we
 * are root and get the token twice.  Under moat (default uid 65534) both
 * servers must see 65534 and refuse: an answer of the servers, not a moat
 * denial, so no audit record is expected.
 *
 * usage: ESC_TOKEN=... esc_unix_peercred /s/peercred /s/passcred
 */
#include "esc.h"
#include <stdbool.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <sys/un.h>

static void attempt(const char *how, const char *path, bool send_first)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	if (strlen(path) >= sizeof sa.sun_path)
		esc_usage("socket path too long");
	strcpy(sa.sun_path, path);
	int s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (s < 0) {
		esc_held("%s: socket(AF_UNIX): %s", how, esc_errname(errno));
		return;
	}
	if (connect(s, (struct sockaddr *)&sa, sizeof sa) < 0) {
		esc_held("%s: connect(%s): %s", how, path, esc_errname(errno));
		close(s);
		return;
	}
	if (send_first) {
		char hello[] = "hello\n";
		struct iovec iov = {.iov_base = hello, .iov_len = sizeof hello - 1};
		struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1};
		if (sendmsg(s, &mh, 0) < 0) {
			esc_held("%s: sendmsg: %s", how, esc_errname(errno));
			close(s);
			return;
		}
	}
	char buf[4096];
	ssize_t n = esc_read_all(s, buf, sizeof buf);
	if (n > 0 && esc_is_token(buf, (size_t)n)) {
		esc_won("%s: the root-only server %s took us (uid %d) for root: read the token", how,
			path, (int)getuid());
	} else {
		while (n > 0 && buf[n - 1] == '\n')
			buf[--n] = '\0';
		esc_held("%s: %s answered \"%s\"", how, path, n > 0 ? buf : "");
	}
	close(s);
}

int main(int argc, char **argv)
{
	if (argc != 3 || argv[1][0] != '/' || argv[2][0] != '/')
		esc_usage("esc_unix_peercred /ABS/peercred-socket /ABS/passcred-socket");
	esc_token();
	fprintf(stderr, "# uid %d pid %d\n", (int)getuid(), (int)getpid());
	attempt("connect (SO_PEERCRED)", argv[1], false);
	attempt("sendmsg (SCM_CREDENTIALS)", argv[2], true);
	return esc_finish();
}
