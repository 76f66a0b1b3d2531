/* The sandbox's network: the egress policy, the private loopback, the DNS
 * stub and the per-run summary (docs/network.md).
 *
 * Two worlds hold sockets.  The private world is a network namespace made
 * for this sandbox: only `lo`, so its 127.0.0.1 and ::1 reach nothing but
 * the sandbox.  The host world is moat's own namespace: a socket of the
 * sandbox lives there only when moat put it there, connected (or about to
 * send) to a destination the policy allows.  Every connect, bind, listen
 * and addressed send is decided by the supervisor from a copy of the
 * address and performed by it on the socket of the right world. */
#ifndef MOAT_NET_H
#define MOAT_NET_H

#include <netinet/in.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/socket.h>

/* One allow rule: a network (a single address for a host name) and ports. */
struct net_rule {
	int family;             /* AF_INET or AF_INET6 */
	unsigned char addr[16]; /* network, in network byte order (v4: 4 bytes) */
	int prefix;             /* bits */
	uint16_t port_lo, port_hi;
	char spec[128]; /* as given (--allow-net ARG), for the audit */
	char host[128]; /* the host name it came from, or "" */
};

/* A host name pinned at start: written to the synthetic /etc/hosts. */
struct net_pin {
	char host[128];
	int family;
	unsigned char addr[16];
};

/* What the policy says about one destination. */
enum net_dest {
	ND_PRIVATE,   /* loopback (or the unspecified address): the private world */
	ND_ALLOW,     /* an allow rule matches: the host world */
	ND_DENY_HOST, /* no rule names this address: ENETUNREACH */
	ND_DENY_PORT, /* rules name the address, not the port: ECONNREFUSED */
	ND_INVALID,   /* not an inet address of its length: EINVAL */
};

enum net_mode {
	NET_NETNS,  /* moat is root: the sandbox lives in the private namespace */
	NET_USERNS, /* moat is not root: a helper process in a user and network
		     * namespace of its own makes every TCP/UDP socket of the
		     * sandbox there (socket() is supervised in this mode) */
	NET_NONE,   /* no private namespace: loopback is refused too */
};

/* One destination of the per-run summary. */
struct net_seen {
	char what[160]; /* "93.184.216.34:443 (example.com)", "dns pypi.org" */
	unsigned tried, allowed, denied;
};

#define NET_MAX_RULES 256
#define NET_MAX_PINS 256
#define NET_MAX_SEEN 128

struct net {
	enum net_mode mode;
	char id[17]; /* the sandbox's id: abstract names live under moat-ID/ */
	struct net_rule rule[NET_MAX_RULES];
	int nrule;
	struct net_pin pin[NET_MAX_PINS];
	int npin;
	int host_ns, priv_ns; /* namespace fds (NET_NETNS), else -1 */
	uint64_t host_cookie, priv_cookie;
	int dns_fd;  /* the stub resolver's socket (private world), or -1 */
	int factory; /* NET_USERNS: the helper's end of our socket pair */
	int factory_pid;
	struct net_seen seen[NET_MAX_SEEN];
	int nseen;
	unsigned seen_dropped; /* destinations past NET_MAX_SEEN */
	/* DNS records: a burst of 200, then 50 a second; past that a
	 * question is answered and counted but not recorded on its own (a
	 * program flooding the stub must not flood the log). */
	double dns_tokens;
	uint64_t dns_last_ns;
	unsigned dns_unrecorded;
	/* Who sent from which local port to the stub: DNS records name them. */
	struct {
		uint16_t port;
		int pid, tid;
	} dns_src[64];
	unsigned dns_src_next;
};

/* The stub resolver's address in the private world. */
#define NET_DNS_ADDR "127.0.0.53"

/* ---- policy (policy.c) ---- */

/* Add the rule ARG of --allow-net (HOST[:PORT], ADDR[/LEN][:PORT],
 * [ADDR6[/LEN]][:PORT]; PORT may be N or N-M).  A host name is resolved
 * now, once, and pinned.  0, or -1 with a one-line reason in err. */
int net_policy_add(struct net *n, const char *arg, char *err, size_t errlen);
/* Add every rule of FILE (one per line, # comments).  0 or -1 + err. */
int net_policy_load(struct net *n, const char *file, char *err, size_t errlen);
/* Decide a destination.  *rule: the matching rule (ND_ALLOW, else NULL). */
enum net_dest net_policy_check(const struct net *n, const struct sockaddr *sa, socklen_t len,
			       const struct net_rule **rule);
/* The pinned name of an address, or NULL. */
const char *net_pinned_name(const struct net *n, const struct sockaddr *sa, socklen_t len);
/* The destinations tried as a JSON array (the run report's), and the
 * fields of the audit log's "net-summary" record (audit_summary): the
 * loopback in force and every destination tried.  ctx: the struct net. */
void net_json_destinations(FILE *f, const struct net *n);
void net_summary_fields(FILE *f, const void *ctx);
/* Tell the user what the network refused (nothing if nothing was). */
void net_summary(const struct net *n, FILE *f);
/* Count an attempt in the summary. */
void net_seen(struct net *n, const char *what, bool allowed);
/* Address and port of an inet sockaddr as text ("1.2.3.4", 443); an
 * IPv4-mapped IPv6 address prints as IPv4.  false if not inet. */
bool net_addr_text(const struct sockaddr *sa, socklen_t len, char *addr, size_t alen, int *port);

/* ---- worlds (netns.c) ---- */

struct creds;
struct audit;

/* Make the private world: a network namespace with `lo` up and the stub
 * resolver bound in it — moat's own when root (NET_NETNS), else a helper
 * process's in an unprivileged user namespace (NET_USERNS).  When neither
 * can be made: NET_NONE, and -1 + err saying why. */
int net_setup(struct net *n, bool root, char *err, size_t errlen);
void net_teardown(struct net *n);
/* The namespace the sandbox's first process enters (setns) before it
 * drops its capabilities, or -1: none to enter. */
int net_enter_fd(const struct net *n);
/* Is there a private world (a loopback of the sandbox's own)? */
static inline bool net_private(const struct net *n)
{
	return n->mode != NET_NONE;
}
/* Which world socket `fd` lives in: 1 private, 0 host, -1 neither/unknown. */
int net_world(const struct net *n, int fd);
/* A new socket in the private (priv) or host world, made with the
 * sandbox's ids.  -errno on failure. */
int net_socket(struct net *n, const struct creds *cr, bool priv, int domain, int type, int proto);

/* ---- DNS (dns.c) ---- */

/* The first question of DNS message `msg`: its name ("a.b.c") and type
 * ("A", "AAAA", "TXT", or the number).  false if msg is not a query. */
bool dns_question(const unsigned char *msg, size_t len, char *name, size_t nlen, char *type,
		  size_t tlen);
/* Answer every query waiting on the stub's socket (called by the loop). */
void net_dns_serve(struct net *n, struct audit *audit);
/* Remember that thread tid sent to the stub from local port `port`. */
void net_dns_note_source(struct net *n, uint16_t port, int pid, int tid);

#endif
