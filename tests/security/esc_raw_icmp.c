/* esc_raw_icmp — open raw sockets: SOCK_RAW for ICMP (IPv4 and IPv6) and
 * an ICMP "ping" datagram socket, and send an echo request to 127.0.0.1
 * through the raw one.
 *
 * Attacks the network stub's deny by default for raw sockets (docs/network.md "The
 * network stub": raw sockets are refused).  A raw socket builds its own
 * headers: spoofed sources, scans, covert channels in ICMP payloads, and a
 * way around every port rule.  Natively as root each opens (ESCAPED); the
 * echo goes to loopback only.  Under moat: EPERM for SOCK_RAW (what Linux
 * gives a process without CAP_NET_RAW) and EACCES for the ping socket (as
 * outside net.ipv4.ping_group_range), recorded as `socket` net.raw-socket.
 *
 * usage: ESC_TOKEN=... esc_raw_icmp
 */
#include "esc.h"
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/ip_icmp.h>
#include <sys/socket.h>

static void try_socket(const char *how, int family, int type, int proto, int echo)
{
	int s = socket(family, type | SOCK_CLOEXEC, proto);
	if (s < 0) {
		esc_held("%s: %s", how, esc_errname(errno));
		return;
	}
	if (!echo) {
		esc_won("%s: opened", how);
		close(s);
		return;
	}
	struct icmphdr h = {.type = ICMP_ECHO};
	h.un.echo.id = htons(0x6d6f);
	h.checksum = htons((uint16_t)~((ICMP_ECHO << 8) + 0x6d6f)); /* the header's words summed */
	struct sockaddr_in lo = {.sin_family = AF_INET};
	lo.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	ssize_t r = sendto(s, &h, sizeof h, 0, (struct sockaddr *)&lo, sizeof lo);
	if (r < 0)
		esc_won("%s: opened (the echo to 127.0.0.1: %s)", how, esc_errname(errno));
	else
		esc_won("%s: opened, and an ICMP echo of our own making went to 127.0.0.1", how);
	close(s);
}

int main(void)
{
	esc_token();
	try_socket("socket(AF_INET, SOCK_RAW, IPPROTO_ICMP)", AF_INET, SOCK_RAW, IPPROTO_ICMP, 1);
	try_socket("socket(AF_INET6, SOCK_RAW, IPPROTO_ICMPV6)", AF_INET6, SOCK_RAW, IPPROTO_ICMPV6, 0);
	try_socket("socket(AF_INET, SOCK_RAW, IPPROTO_RAW)", AF_INET, SOCK_RAW, IPPROTO_RAW, 0);
	try_socket("socket(AF_INET, SOCK_DGRAM, IPPROTO_ICMP)", AF_INET, SOCK_DGRAM, IPPROTO_ICMP, 0);
	return esc_finish();
}
