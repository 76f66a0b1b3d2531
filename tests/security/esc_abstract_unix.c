/* esc_abstract_unix — connect to a host server listening on an abstract
 * AF_UNIX name and read what it sends.
 *
 * Attacks the network stub (docs/network.md: abstract names are
 * private to the sandbox) and through it rule 1: the abstract namespace
 * belongs to the network namespace, which the sandbox shares with the host,
 * so a connect passed to the kernel as the sandbox wrote it would reach any
 * host service on an abstract name (X11's @/tmp/.X11-unix/X0, containerd,
 * systemd's private buses).  The runner starts the server (token_server.py
 * abstract NAME) before both runs.  Under moat (as root) the sandbox's
 * socket lives in its own network namespace, whose abstract names are its
 * own: nothing listens there, ECONNREFUSED, recorded as
 * net.private-abstract (without a private namespace the supervisor
 * connects under the sandbox's prefix, \0moat-<id>/NAME, instead).
 *
 * usage: ESC_TOKEN=... esc_abstract_unix NAME      (the name without its NUL)
 */
#include "esc.h"
#include <stddef.h>
#include <sys/socket.h>
#include <sys/un.h>

int main(int argc, char **argv)
{
	if (argc != 2 || !argv[1][0] || strlen(argv[1]) > 100)
		esc_usage("esc_abstract_unix NAME");
	esc_token();
	const char *name = argv[1];
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	memcpy(sa.sun_path + 1, name, strlen(name));
	socklen_t len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + strlen(name));

	int s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (s < 0) {
		esc_held("socket(AF_UNIX): %s", esc_errname(errno));
		return esc_finish();
	}
	if (connect(s, (struct sockaddr *)&sa, len) < 0) {
		esc_held("connect(@%s): %s", name, esc_errname(errno));
	} else {
		char buf[4096];
		ssize_t n = esc_read_all(s, buf, sizeof buf);
		if (n > 0 && esc_is_token(buf, (size_t)n))
			esc_won("connect(@%s) reached the host server: read the token", name);
		else
			esc_held("connect(@%s) succeeded but it sent %zd bytes, not the token", name, n);
	}
	close(s);
	return esc_finish();
}
