/* esc_sockopt_moat — have moat perform a socket option for us: iptables'
 * IPT_SO_SET_REPLACE (and IPv6's) on a socket of the private world.
 *
 * Attacks the network stub's setsockopt handling (docs/network.md: only the
 * socket's own options run in the kernel; moat performs the interface and
 * multicast ones and refuses the rest).  An option moat performs runs with
 * moat's memory — ipt_replace carries a pointer to a counters buffer, which
 * the kernel fills in the caller's address space: moat's — and, without
 * root, with moat's standing as owner of the private world's user
 * namespace (CAP_NET_ADMIN there).  A reviewer turned that into a write of
 * chosen bytes over moat's allow list.  This attempt sends a replace whose
 * table is empty: any answer but ENOPROTOOPT (refused by moat) or EPERM
 * (refused for want of the capability) means the option reached netfilter
 * on moat's behalf (ESCAPED).  Never natively: as root it would address
 * the host's firewall (--native: UNSUPPORTED).  Under moat: ENOPROTOOPT,
 * recorded as `setsockopt` net.sockopt.
 *
 * usage: ESC_TOKEN=... esc_sockopt_moat --native | --moat
 */
#include "esc.h"
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#define IPT_SO_SET_REPLACE 64  /* the same number for IPv6's ip6tables */

int main(int argc, char **argv)
{
	if (argc != 2 || (strcmp(argv[1], "--native") && strcmp(argv[1], "--moat")))
		esc_usage("esc_sockopt_moat --native | --moat");
	esc_token();
	if (!strcmp(argv[1], "--native"))
		esc_unsupported("natively it would address the host's firewall");
	static const struct { int family, level; const char *name; } k[] = {
		{ AF_INET, IPPROTO_IP, "IPT_SO_SET_REPLACE" },
		{ AF_INET6, IPPROTO_IPV6, "IP6T_SO_SET_REPLACE" },
	};
	for (int i = 0; i < 2; i++) {
		int s = socket(k[i].family, SOCK_STREAM | SOCK_CLOEXEC, 0);
		struct sockaddr_storage a = { .ss_family = (sa_family_t)k[i].family };
		socklen_t al = k[i].family == AF_INET ? sizeof(struct sockaddr_in) : sizeof(struct sockaddr_in6);
		if (k[i].family == AF_INET)
			((struct sockaddr_in *)&a)->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		else
			((struct sockaddr_in6 *)&a)->sin6_addr = in6addr_loopback;
		if (s < 0 || bind(s, (struct sockaddr *)&a, al) < 0) {
			esc_held("%s: no socket of the private world (%s)", k[i].name, esc_errname(errno));
			continue;
		}
		/* name "filter", valid_hooks 0, one entry, size 0: an empty table
		 * netfilter rejects after reading it from the caller. */
		unsigned char rep[128] = { 0 };
		memcpy(rep, "filter", 6);
		if (setsockopt(s, k[i].level, IPT_SO_SET_REPLACE, rep, sizeof rep) == 0)
			esc_won("%s: performed", k[i].name);
		else if (errno == ENOPROTOOPT || errno == EPERM)
			esc_held("%s: %s", k[i].name, esc_errname(errno));
		else
			esc_won("%s reached netfilter on moat's behalf (%s)", k[i].name, esc_errname(errno));
		close(s);
	}
	return esc_finish();
}
