/* esc_unix_path_host — connect to a host AF_UNIX socket outside the view
 * (a server in the secret's directory under /var/tmp) by its absolute path,
 * through a symlink we make in /tmp, and by a relative path with `..`.
 *
 * Attacks rule 1 (a sockaddr is memory: the supervisor walks the path in
 * the virtual filesystem and connects to the inode it decided on) and the
 * default view (/var is not in it).  A host socket file is a door into a
 * host daemon (docker.sock, the D-Bus system bus, ssh-agent).  The runner
 * starts the server (token_server.py path) before both runs.  Under moat
 * every way must answer ENOENT, audited `connect` with rule fs.outside-view.
 *
 * usage: ESC_TOKEN=... esc_unix_path_host /var/tmp/moat-sec.XXXXXX/sock
 */
#include "esc.h"
#include <stddef.h>
#include <sys/socket.h>
#include <sys/un.h>

static void attempt(const char *how, const char *path)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	if (strlen(path) >= sizeof sa.sun_path) {
		esc_held("%s: %s is too long for sun_path", how, path);
		return;
	}
	strcpy(sa.sun_path, path);
	int s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (s < 0) {
		esc_held("%s: socket(AF_UNIX): %s", how, esc_errname(errno));
		return;
	}
	if (connect(s, (struct sockaddr *)&sa, sizeof sa) < 0) {
		esc_held("%s: connect(%s): %s", how, path, esc_errname(errno));
	} else {
		char buf[4096];
		ssize_t n = esc_read_all(s, buf, sizeof buf);
		if (n > 0 && esc_is_token(buf, (size_t)n))
			esc_won("%s: connect(%s) reached the host server: read the token", how, path);
		else
			esc_won("%s: connect(%s) reached a host socket (read %zd bytes, not the token)", how,
				path, n);
	}
	close(s);
}

int main(int argc, char **argv)
{
	const char *sock = esc_secret_arg(argc, argv); /* an absolute path, as the secret's */

	attempt("absolute path", sock);

	/* A symlink we own, in a writable place, to the host path: followed by
	 * the kernel, it would lead out; walked virtually, it leads nowhere. */
	char dir[] = "/tmp/esc-unix-XXXXXX", link[64];
	if (mkdtemp(dir)) {
		snprintf(link, sizeof link, "%s/s", dir);
		if (symlink(sock, link) == 0) {
			attempt("symlink in /tmp", link);
			unlink(link);
		} else {
			esc_held("symlink(%s): %s", link, esc_errname(errno));
		}
		rmdir(dir);
	} else {
		esc_held("mkdtemp(/tmp/esc-unix-XXXXXX): %s", esc_errname(errno));
	}

	/* Relative, climbing from the cwd: `..` stops at the virtual root. */
	char rel[4096];
	snprintf(rel, sizeof rel, "../../../../../../../..%s", sock);
	if (strlen(rel) < sizeof((struct sockaddr_un *)0)->sun_path)
		attempt("relative path", rel);
	return esc_finish();
}
