/* esc_host_iface — learn the host's interfaces and speak multicast on its
 * network through a socket of the host's network namespace: a UDP socket
 * connected to an allowed destination (127.0.0.1:ALLOWED, with
 * --allow-net; without root every socket of the sandbox starts there),
 * then SO_BINDTOIFINDEX to each index 1..64 (a fresh socket each: a bound
 * one cannot be rebound without CAP_NET_RAW) with getsockopt
 * (SO_BINDTODEVICE) telling its name, and IP_ADD_MEMBERSHIP of
 * 239.255.77.1 on 127.0.0.1 (an IGMP report on the host's lo only).
 *
 * Attacks the network stub (docs/network.md: the sandbox reaches
 * nothing outside; docs/network.md "options"): a socket moat put in the
 * host's namespace is the host's, and options that name interfaces or join
 * groups reach beyond the socket: the interface list (eth0, docker0,
 * wg0...) tells what the host is attached to, and a multicast join sends
 * reports onto the LAN, a channel no allow rule opened.  Natively any name
 * other than lo, and the join, escape (a host with lo alone cannot show
 * the first part).  Under moat both are refused EPERM on a host-namespace
 * socket, recorded as `setsockopt` net.host-interface (on the sandbox's own
 * namespace the same options only ever find lo).
 *
 * usage: ESC_TOKEN=... esc_host_iface ALLOWED
 */
#include "esc.h"
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#ifndef SO_BINDTOIFINDEX
#define SO_BINDTOIFINDEX 62
#endif

static struct sockaddr_in allowed = {.sin_family = AF_INET};

/* A UDP socket connected to the allowed destination. */
static int host_socket(void)
{
	int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (s < 0 || connect(s, (struct sockaddr *)&allowed, sizeof allowed) < 0)
		esc_usage("connect to the allowed destination failed");
	return s;
}

int main(int argc, char **argv)
{
	if (argc != 2 || atoi(argv[1]) <= 0)
		esc_usage("esc_host_iface ALLOWED");
	esc_token();
	allowed.sin_port = htons((uint16_t)atoi(argv[1]));
	allowed.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	char names[512] = "";
	int found = 0, others = 0, first_err = 0;
	for (int i = 1; i <= 64; i++) {
		int s = host_socket();
		int r = setsockopt(s, SOL_SOCKET, SO_BINDTOIFINDEX, &i, sizeof i);
		if (r < 0) {
			if (errno != ENODEV && !first_err)
				first_err = errno;
			close(s);
			continue;
		}
		char dev[32] = "";
		socklen_t l = sizeof dev;
		if (getsockopt(s, SOL_SOCKET, SO_BINDTODEVICE, dev, &l) == 0 && dev[0]) {
			found++;
			if (strcmp(dev, "lo") != 0)
				others++;
			size_t o = strlen(names);
			snprintf(names + o, sizeof names - o, "%s%d:%s", o ? " " : "", i, dev);
		}
		close(s);
	}
	int s = host_socket();
	if (others)
		esc_won("the host's interfaces: %s", names);
	else if (first_err)
		esc_held("SO_BINDTOIFINDEX: %s", esc_errname(first_err));
	else
		esc_held("interfaces seen: %s", found ? names : "none");

	struct ip_mreq m = {0};
	inet_pton(AF_INET, "239.255.77.1", &m.imr_multiaddr);
	m.imr_interface.s_addr = htonl(INADDR_LOOPBACK);
	if (setsockopt(s, IPPROTO_IP, IP_ADD_MEMBERSHIP, &m, sizeof m) == 0)
		esc_won("joined 239.255.77.1 on the host's lo (a membership report went out)");
	else
		esc_held("IP_ADD_MEMBERSHIP: %s", esc_errname(errno));
	return esc_finish();
}
