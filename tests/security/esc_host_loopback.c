/* esc_host_loopback — connect to a host TCP server on 127.0.0.1 (and the
 * same through an AF_INET6 socket as ::ffff:127.0.0.1) and read what it
 * sends.
 *
 * Attacks the network stub (docs/network.md: deny by default; the
 * sandbox's loopback is private and reaches nothing outside).  A host's
 * loopback services (databases, admin ports, metadata proxies, other users'
 * dev servers) are the first thing untrusted code would try.  The runner
 * starts the server (token_server.py tcp) before both runs.  Under moat the
 * socket lives in the sandbox's own network namespace, whose loopback
 * holds only what the sandbox itself serves: ECONNREFUSED, recorded as
 * `connect` net.private-loopback (the host's loopback was never tried).
 *
 * usage: ESC_TOKEN=... esc_host_loopback PORT
 */
#include "esc.h"
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

static void attempt(const char *how, int family, const struct sockaddr *sa, socklen_t len)
{
	int s = socket(family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (s < 0) {
		esc_held("%s: socket: %s", how, esc_errname(errno));
		return;
	}
	if (connect(s, sa, len) < 0) {
		esc_held("%s: connect: %s", how, esc_errname(errno));
	} else {
		char buf[4096];
		ssize_t n = esc_read_all(s, buf, sizeof buf);
		if (n > 0 && esc_is_token(buf, (size_t)n))
			esc_won("%s reached the host server: read the token", how);
		else
			esc_won("%s connected to the host's loopback (read %zd bytes, not the token)", how, n);
	}
	close(s);
}

int main(int argc, char **argv)
{
	int port = argc == 2 ? atoi(argv[1]) : 0;
	if (port <= 0 || port > 65535)
		esc_usage("esc_host_loopback PORT");
	esc_token();

	struct sockaddr_in a4 = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
	a4.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	attempt("AF_INET 127.0.0.1", AF_INET, (struct sockaddr *)&a4, sizeof a4);

	struct sockaddr_in6 a6 = {.sin6_family = AF_INET6, .sin6_port = htons((uint16_t)port)};
	inet_pton(AF_INET6, "::ffff:127.0.0.1", &a6.sin6_addr);
	attempt("AF_INET6 ::ffff:127.0.0.1", AF_INET6, (struct sockaddr *)&a6, sizeof a6);
	return esc_finish();
}
