/* esc_udp_autobind — open a UDP port in the host's network namespace
 * without bind, connect or an addressed send.
 *
 * An early non-root moat let the sandbox's inet sockets start in the host's
 * namespace and moved one to the private world only when it went through
 * bind, listen, connect or an addressed send.  But the kernel binds an
 * unbound UDP socket by itself on its first send
 * (inet_send_prepare -> inet_autobind), before udp_sendmsg finds there is
 * no destination: write(2) (and sendto with no address, which the filter
 * lets run in the kernel) fails EDESTADDRREQ and leaves the socket bound to
 * 0.0.0.0:<ephemeral> of the host.  Anyone on the host or its network can
 * then send into the sandbox, which reads it with recvfrom — the inbound
 * half of what host_udp_peer() exists to prevent, and nothing is audited.
 * Under moat every TCP/UDP socket of the sandbox is made in its private
 * world (docs/network.md "Two worlds"): the port it gets is not the host's.
 *
 * Fixture: udp_spray.py, a host process that sends $ESC_TOKEN to every UDP
 * port of the host's /proc/net/udp held by a process of this attempt's pid
 * namespace (the attacker outside; never another program's port).
 *
 * usage: ESC_TOKEN=... esc_udp_autobind [SECONDS]
 */
#include "esc.h"
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>

int main(int argc, char **argv)
{
	esc_token();
	int wait_s = argc > 1 ? atoi(argv[1]) : 5;
	int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (s < 0)
		esc_usage("socket(AF_INET, SOCK_DGRAM) failed");
	/* No address anywhere: the kernel, not moat, decides this one. */
	esc_udp_write_and_listen(s, wait_s);
	return esc_finish();
}
