/* The egress policy: allow rules, host names pinned at start, and the
 * per-run summary of destinations (see net.h). */
#include "net-stub/net.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <stddef.h>
#include <errno.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "audit/json.h"

static const unsigned char v4mapped[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };

/* The family, address bytes and port of an inet sockaddr, with an
 * IPv4-mapped IPv6 address turned into IPv4.  false if not inet. */
static bool dest_of(const struct sockaddr *sa, socklen_t len, int *family, unsigned char *addr,
		    int *port)
{
	if (len >= sizeof(struct sockaddr_in) && sa->sa_family == AF_INET) {
		const struct sockaddr_in *in = (const struct sockaddr_in *)sa;
		*family = AF_INET;
		memcpy(addr, &in->sin_addr, 4);
		*port = ntohs(in->sin_port);
		return true;
	}
	/* The kernel takes the 24-byte form without the scope id. */
	if (len >= offsetof(struct sockaddr_in6, sin6_scope_id) && sa->sa_family == AF_INET6) {
		const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)sa;
		*port = ntohs(in6->sin6_port);
		if (memcmp(in6->sin6_addr.s6_addr, v4mapped, 12) == 0) {
			*family = AF_INET;
			memcpy(addr, in6->sin6_addr.s6_addr + 12, 4);
		} else {
			*family = AF_INET6;
			memcpy(addr, in6->sin6_addr.s6_addr, 16);
		}
		return true;
	}
	return false;
}

bool net_addr_text(const struct sockaddr *sa, socklen_t len, char *addr, size_t alen, int *port)
{
	int family;
	unsigned char a[16];
	if (!dest_of(sa, len, &family, a, port))
		return false;
	return inet_ntop(family, a, addr, (socklen_t)alen) != NULL;
}

static bool in_prefix(const unsigned char *a, const unsigned char *net, int prefix)
{
	int full = prefix / 8, rest = prefix % 8;
	if (memcmp(a, net, (size_t)full) != 0)
		return false;
	if (rest == 0)
		return true;
	unsigned char mask = (unsigned char)(0xff << (8 - rest));
	return (a[full] & mask) == (net[full] & mask);
}

/* Loopback and the unspecified address (a connect to 0.0.0.0 or :: goes
 * to the local host): the private world's. */
static bool is_local(int family, const unsigned char *a)
{
	static const unsigned char zero[16], one6[16] = { [15] = 1 };
	if (family == AF_INET)
		return a[0] == 127 || memcmp(a, zero, 4) == 0;
	return memcmp(a, one6, 16) == 0 || memcmp(a, zero, 16) == 0;
}

/* A rule that names the host's loopback itself (within 127.0.0.0/8, or
 * ::1): not 0.0.0.0/0, whose network address merely looks local. */
static bool names_loopback(const struct net_rule *r)
{
	static const unsigned char one6[16] = { [15] = 1 };
	if (r->family == AF_INET)
		return r->prefix >= 8 && r->addr[0] == 127;
	return r->prefix == 128 && memcmp(r->addr, one6, 16) == 0;
}

enum net_dest net_policy_check(const struct net *n, const struct sockaddr *sa, socklen_t len,
			       const struct net_rule **rule)
{
	int family, port;
	unsigned char a[16];
	*rule = NULL;
	if (!dest_of(sa, len, &family, a, &port))
		return ND_INVALID;
	bool local = is_local(family, a), addr_named = false;
	for (int i = 0; i < n->nrule; i++) {
		const struct net_rule *r = &n->rule[i];
		if (r->family != family || !in_prefix(a, r->addr, r->prefix))
			continue;
		/* A loopback destination is the host's only when a rule
		 * names loopback itself: 0.0.0.0/0 opens the internet, not
		 * the host's own services. */
		if (local && !names_loopback(r))
			continue;
		addr_named = true;
		if (port >= r->port_lo && port <= r->port_hi) {
			*rule = r;
			return ND_ALLOW;
		}
	}
	if (local)
		return ND_PRIVATE;
	return addr_named ? ND_DENY_PORT : ND_DENY_HOST;
}

const char *net_pinned_name(const struct net *n, const struct sockaddr *sa, socklen_t len)
{
	int family, port;
	unsigned char a[16];
	if (!dest_of(sa, len, &family, a, &port))
		return NULL;
	for (int i = 0; i < n->npin; i++)
		if (n->pin[i].family == family &&
		    memcmp(n->pin[i].addr, a, family == AF_INET ? 4 : 16) == 0)
			return n->pin[i].host;
	return NULL;
}

void net_seen(struct net *n, const char *what, bool allowed)
{
	struct net_seen *s = NULL;
	/* Compared as stored: a long name is the same destination each time. */
	size_t cmp = sizeof n->seen[0].what - 1;
	for (int i = 0; i < n->nseen && !s; i++)
		if (strncmp(n->seen[i].what, what, cmp) == 0)
			s = &n->seen[i];
	if (!s) {
		if (n->nseen == NET_MAX_SEEN) {
			n->seen_dropped++;
			return;
		}
		s = &n->seen[n->nseen++];
		snprintf(s->what, sizeof s->what, "%s", what);
	}
	s->tried++;
	if (allowed)
		s->allowed++;
	else
		s->denied++;
}

/* PORT or LO-HI; "*" for any. */
static int parse_ports(const char *s, struct net_rule *r)
{
	if (strcmp(s, "*") == 0) {
		r->port_lo = 0;
		r->port_hi = 65535;
		return 0;
	}
	char *end;
	errno = 0;
	long lo = strtol(s, &end, 10), hi = lo;
	if (end == s || errno)
		return -1;
	if (*end == '-') {
		const char *h = end + 1;
		hi = strtol(h, &end, 10);
		if (end == h || errno)
			return -1;
	}
	if (*end || lo < 1 || hi > 65535 || lo > hi)
		return -1;
	r->port_lo = (uint16_t)lo;
	r->port_hi = (uint16_t)hi;
	return 0;
}

static bool valid_host(const char *s)
{
	size_t len = strlen(s);
	if (len == 0 || len > 253)
		return false;
	for (const char *p = s; *p; p++)
		if (!isalnum((unsigned char)*p) && *p != '-' && *p != '.' && *p != '_')
			return false;
	return true;
}

static int add_rule(struct net *n, const struct net_rule *r, char *err, size_t errlen)
{
	if (n->nrule == NET_MAX_RULES) {
		snprintf(err, errlen, "more than %d network rules", NET_MAX_RULES);
		return -1;
	}
	n->rule[n->nrule++] = *r;
	return 0;
}

static int add_pin(struct net *n, const char *host, int family, const void *addr)
{
	for (int i = 0; i < n->npin; i++)
		if (n->pin[i].family == family && strcmp(n->pin[i].host, host) == 0 &&
		    memcmp(n->pin[i].addr, addr, family == AF_INET ? 4 : 16) == 0)
			return 0;
	if (n->npin == NET_MAX_PINS)
		return -1;
	struct net_pin *p = &n->pin[n->npin++];
	snprintf(p->host, sizeof p->host, "%s", host);
	p->family = family;
	memcpy(p->addr, addr, family == AF_INET ? 4 : 16);
	return 0;
}

int net_policy_add(struct net *n, const char *arg, char *err, size_t errlen)
{
	struct net_rule r = { .port_lo = 0, .port_hi = 65535 };
	snprintf(r.spec, sizeof r.spec, "%s", arg);
	char buf[300];
	if (snprintf(buf, sizeof buf, "%s", arg) >= (int)sizeof buf) {
		snprintf(err, errlen, "--allow-net: rule too long");
		return -1;
	}
	char *host = buf, *ports = NULL;
	if (buf[0] == '[') {
		/* [ADDR6[/LEN]][:PORT] */
		char *close = strchr(buf, ']');
		if (!close || (close[1] && close[1] != ':')) {
			snprintf(err, errlen, "--allow-net %s: expected [IPV6]:PORT", arg);
			return -1;
		}
		*close = '\0';
		host = buf + 1;
		if (close[1] == ':')
			ports = close + 2;
	} else if (strchr(buf, ':') == strrchr(buf, ':')) {
		/* At most one colon: HOST:PORT or IPV4:PORT. */
		char *colon = strchr(buf, ':');
		if (colon) {
			*colon = '\0';
			ports = colon + 1;
		}
	} /* else: a bare IPv6 address or network, no port */
	if (ports && parse_ports(ports, &r) < 0) {
		snprintf(err, errlen, "--allow-net %s: the port must be 1-65535, a range N-M, or *",
			 arg);
		return -1;
	}
	char *slash = strchr(host, '/');
	long prefix = -1;
	if (slash) {
		char *end;
		*slash = '\0';
		prefix = strtol(slash + 1, &end, 10);
		if (end == slash + 1 || *end || prefix < 0) {
			snprintf(err, errlen, "--allow-net %s: bad prefix length", arg);
			return -1;
		}
	}
	unsigned char a[16];
	if (inet_pton(AF_INET, host, a) == 1) {
		r.family = AF_INET;
		memcpy(r.addr, a, 4);
		r.prefix = prefix < 0 ? 32 : (int)prefix;
		if (r.prefix > 32) {
			snprintf(err, errlen, "--allow-net %s: an IPv4 prefix is at most 32", arg);
			return -1;
		}
		return add_rule(n, &r, err, errlen);
	}
	if (inet_pton(AF_INET6, host, a) == 1) {
		r.family = AF_INET6;
		memcpy(r.addr, a, 16);
		r.prefix = prefix < 0 ? 128 : (int)prefix;
		if (r.prefix > 128) {
			snprintf(err, errlen, "--allow-net %s: an IPv6 prefix is at most 128", arg);
			return -1;
		}
		if (memcmp(a, v4mapped, 12) == 0 && r.prefix >= 96) {
			/* Rules are matched on IPv4 for mapped addresses. */
			r.family = AF_INET;
			memmove(r.addr, a + 12, 4);
			memset(r.addr + 4, 0, 12);
			r.prefix -= 96;
		}
		return add_rule(n, &r, err, errlen);
	}
	if (slash || !valid_host(host)) {
		snprintf(err, errlen, "--allow-net %s: not an address, a network or a host name",
			 arg);
		return -1;
	}
	/* A name: resolved once, now, by moat; the sandbox finds it in
	 * /etc/hosts and cannot have it re-pointed mid-run. */
	struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM };
	struct addrinfo *res;
	int g = getaddrinfo(host, NULL, &hints, &res);
	if (g != 0) {
		snprintf(err, errlen, "--allow-net %s: cannot resolve %s: %s", arg, host,
			 g == EAI_SYSTEM ? strerror(errno) : gai_strerror(g));
		return -1;
	}
	snprintf(r.host, sizeof r.host, "%s", host);
	int rc = 0, ninet = 0;
	for (struct addrinfo *ai = res; ai && rc == 0; ai = ai->ai_next) {
		int family, port;
		if (!dest_of(ai->ai_addr, ai->ai_addrlen, &family, r.addr, &port))
			continue;
		ninet++;
		memset(r.addr + (family == AF_INET ? 4 : 16), 0, family == AF_INET ? 12 : 0);
		r.family = family;
		r.prefix = family == AF_INET ? 32 : 128;
		bool dup = false;
		for (int i = 0; i < n->nrule; i++)
			if (!strcmp(n->rule[i].spec, r.spec) && n->rule[i].family == family &&
			    !memcmp(n->rule[i].addr, r.addr, 16))
				dup = true;
		if (dup)
			continue;
		rc = add_rule(n, &r, err, errlen);
		if (rc == 0 && add_pin(n, host, family, r.addr) < 0) {
			snprintf(err, errlen, "more than %d pinned addresses", NET_MAX_PINS);
			rc = -1;
		}
	}
	freeaddrinfo(res);
	if (rc == 0 && ninet == 0) {
		snprintf(err, errlen, "--allow-net %s: %s has no IPv4 or IPv6 address", arg, host);
		return -1;
	}
	return rc;
}

int net_policy_load(struct net *n, const char *file, char *err, size_t errlen)
{
	/* Never waited on (a FIFO left where the file was) and only a
	 * regular file. */
	int fd = open(file, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	struct stat st;
	if (fd >= 0 && (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))) {
		close(fd);
		snprintf(err, errlen, "--net-policy %s: not a regular file", file);
		return -1;
	}
	FILE *f = fd >= 0 ? fdopen(fd, "re") : NULL;
	if (!f) {
		snprintf(err, errlen, "--net-policy %s: %s", file, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	char line[512];
	int lineno = 0, rc = 0;
	while (rc == 0 && fgets(line, sizeof line, f)) {
		lineno++;
		char *hash = strchr(line, '#');
		if (hash)
			*hash = '\0';
		char *s = line;
		while (isspace((unsigned char)*s))
			s++;
		char *e = s + strlen(s);
		while (e > s && isspace((unsigned char)e[-1]))
			*--e = '\0';
		if (!*s)
			continue;
		/* "allow RULE" reads as well as "RULE". */
		if (strncmp(s, "allow", 5) == 0 && isspace((unsigned char)s[5]))
			for (s += 5; isspace((unsigned char)*s);)
				s++;
		char sub[400];
		if (net_policy_add(n, s, sub, sizeof sub) < 0) {
			snprintf(err, errlen, "--net-policy %s, line %d: %s", file, lineno,
				 strncmp(sub, "--allow-net ", 12) == 0 ? sub + 12 : sub);
			rc = -1;
		}
	}
	fclose(f);
	return rc;
}

void net_json_destinations(FILE *f, const struct net *n)
{
	fputc('[', f);
	for (int i = 0; i < n->nseen; i++) {
		const struct net_seen *s = &n->seen[i];
		fputs(i ? ",{\"destination\":" : "{\"destination\":", f);
		if (json_str(f, s->what)) {
			fputs(",\"destination-hex\":", f);
			json_hex(f, s->what, strlen(s->what));
		}
		fprintf(f, ",\"tried\":%u,\"allowed\":%u,\"denied\":%u}", s->tried, s->allowed,
			s->denied);
	}
	fputc(']', f);
}

void net_summary_fields(FILE *f, const void *ctx)
{
	const struct net *n = ctx;
	fputs("\"loopback\":", f);
	json_str(f, n->mode == NET_NETNS ? "netns" : n->mode == NET_USERNS ? "userns" : "none");
	fputs(",\"destinations\":", f);
	net_json_destinations(f, n);
	if (n->dns_unrecorded)
		fprintf(f, ",\"unrecorded\":%u", n->dns_unrecorded);
}

void net_summary(const struct net *n, FILE *f)
{
	unsigned denied = 0, dests = 0;
	for (int i = 0; i < n->nseen; i++)
		if (n->seen[i].denied) {
			denied += n->seen[i].denied;
			dests++;
		}
	if (!denied)
		return;
	fprintf(f, "moat: network: refused %u attempt%s to %u destination%s%s (%s):\n", denied,
		denied == 1 ? "" : "s", dests, dests == 1 ? "" : "s",
		n->seen_dropped ? " and more" : "",
		n->nrule
			? "not in the allow list; add them with --allow-net"
			: "the sandbox has no network; allow destinations with --allow-net HOST[:PORT]");
	unsigned shown = 0;
	for (int i = 0; i < n->nseen; i++) {
		const struct net_seen *s = &n->seen[i];
		if (!s->denied)
			continue;
		if (shown++ == 5) {
			fprintf(f,
				"moat:   ... %u more (the audit log, --audit-log, has them all)\n",
				dests - 5);
			break;
		}
		char safe[sizeof s->what * 4]; /* a DNS question is the sandbox's choice */
		text_safe(safe, sizeof safe, s->what);
		fprintf(f, "moat:   %s (%u time%s)\n", safe, s->denied, s->denied == 1 ? "" : "s");
	}
}
