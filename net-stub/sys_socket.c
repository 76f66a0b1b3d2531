/* Socket calls (docs/network.md).
 *
 * socket(2) of AF_UNIX, and of AF_INET/AF_INET6 for TCP and UDP, runs in
 * the kernel: when moat is root the sandbox lives in its own network
 * namespace (net.h), so such a socket starts in the private world and can
 * reach the sandbox's loopback and nothing else.  Every call that names an
 * address — connect, bind, sendto/sendmsg/sendmmsg with a destination —
 * and listen come here: the address is copied once, decided, and the call
 * performed by the supervisor on the sandbox's own socket (a pidfd_getfd
 * copy of the same open file), or on a socket of the host world that moat
 * makes, connects and installs at the sandbox's fd number when the policy
 * allows the destination.  A thread rewriting the sockaddr after the copy
 * changes nothing.  AF_UNIX path names are walked in the virtual
 * filesystem; abstract names are the private world's own. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/netlink.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>

#include "core/creds.h"
#include "core/task.h"
#include "fs-emulation/fs.h"
#include "net-stub/async.h"
#include "net-stub/net.h"
#include "syscall-table/decode.h"
#include "syscall-table/handlers.h"

static bool is_inet(int family)
{
	return family == AF_INET || family == AF_INET6;
}

static int sock_int(int s, int level, int opt)
{
	int v = 0;
	socklen_t l = sizeof v;
	return getsockopt(s, level, opt, &v, &l) < 0 ? -1 : v;
}

static struct verdict deny_family(struct call *c, int family)
{
	const char *n = sc_family_name(family);
	snprintf(c->detail, sizeof c->detail, "family=%s", n ? n : "?");
	return v_deny(EAFNOSUPPORT, "net.family");
}

struct verdict sys_socket(struct call *c)
{
	int family = (int)c->arg[0], type = (int)c->arg[1], proto = (int)c->arg[2];
	int base = type & 0xf;
	if (is_inet(family)) {
		snprintf(c->detail, sizeof c->detail, "family=%s type=%d protocol=%d",
			 family == AF_INET ? "AF_INET" : "AF_INET6", base, proto);
		if (type & ~(0xf | SOCK_NONBLOCK | SOCK_CLOEXEC))
			return v_error(EINVAL);
		bool tcp = base == SOCK_STREAM && (proto == 0 || proto == IPPROTO_TCP);
		bool udp = base == SOCK_DGRAM && (proto == 0 || proto == IPPROTO_UDP);
		if (tcp || udp) {
			/* Only when the sandbox is not in a network namespace
			 * of its own (the filter's variant; moat not root):
			 * moat makes the socket in the private world, so it
			 * never holds a port of the host's (a UDP socket binds
			 * one on its first write, whatever the address). */
			struct net *n = c->net;
			if (n->mode == NET_NONE && udp)
				return v_deny(EACCES, "net.no-private-loopback");
			int s = net_socket(n, c->creds, n->mode != NET_NONE, family, type & ~SOCK_CLOEXEC,
					   proto);
			if (s < 0)
				return v_error(-s);
			return v_fd(s, type & SOCK_CLOEXEC ? O_CLOEXEC : 0);
		}
		/* What Linux tells a process without CAP_NET_RAW, and one
		 * outside net.ipv4.ping_group_range. */
		if (base == SOCK_RAW || base == SOCK_PACKET)
			return v_deny(EPERM, "net.raw-socket");
		if (base == SOCK_DGRAM && (proto == IPPROTO_ICMP || proto == IPPROTO_ICMPV6))
			return v_deny(EACCES, "net.raw-socket");
		return v_deny(EPROTONOSUPPORT, "net.protocol");
	}
	if (family == AF_NETLINK && proto == NETLINK_ROUTE && net_private(c->net)) {
		/* getifaddrs, if_nameindex and getaddrinfo's AI_ADDRCONFIG read
		 * the interface list: the private world's (lo alone), from a
		 * socket made there with the sandbox's ids and no capability. */
		int s = net_socket(c->net, c->creds, true, family, type & ~SOCK_CLOEXEC, proto);
		if (s < 0)
			return v_error(-s);
		return v_fd(s, type & SOCK_CLOEXEC ? O_CLOEXEC : 0);
	}
	return deny_family(c, family);
}

struct verdict sys_socketpair(struct call *c)
{
	if (is_inet((int)c->arg[0]))
		return v_error(EOPNOTSUPP); /* as Linux: no inet socket pairs */
	return deny_family(c, (int)c->arg[0]);
}

/* ---- addresses ---- */

/* Copy the sockaddr argument once.  0, or -1 with the verdict in *v. */
static int read_addr(struct call *c, uint64_t addr, socklen_t len, struct sockaddr_storage *ss,
		     struct verdict *v)
{
	if (len > sizeof *ss || (int)len < (int)sizeof(sa_family_t)) {
		*v = v_error(EINVAL);
		return -1;
	}
	memset(ss, 0, sizeof *ss);
	if (call_read(c, addr, ss, len) < 0) {
		*v = v_error(EFAULT);
		return -1;
	}
	return 0;
}

/* A sockaddr_un the supervisor can use for `sa` as the sandbox named it:
 * a path is walked and replaced by a /proc/self/fd link to the decided
 * inode (or its parent, for bind); an abstract name is kept when the
 * socket lives in the private world (whose abstract names are the
 * sandbox's alone), else it gets this sandbox's prefix.  `hold` keeps the
 * fd alive until the call is done. */
struct unix_target {
	union {
		struct sockaddr_un sun;
		struct sockaddr_storage any; /* AF_UNSPEC, netlink: as copied */
	};
	socklen_t len;
	int hold;
};

static int unix_target(struct call *c, int sock, const struct sockaddr_un *sa, socklen_t salen,
		       bool create, struct unix_target *out, struct verdict *v)
{
	out->hold = -1;
	if (salen > sizeof(struct sockaddr_un)) {
		*v = v_error(EINVAL); /* as the kernel: no longer name exists */
		return -1;
	}
	memset(&out->sun, 0, sizeof out->sun);
	out->sun.sun_family = AF_UNIX;
	size_t plen = salen - offsetof(struct sockaddr_un, sun_path);
	if (salen <= offsetof(struct sockaddr_un, sun_path)) {
		/* autobind (bind with only the family) */
		out->len = salen;
		return 0;
	}
	if (sa->sun_path[0] == '\0') {
		size_t nlen = plen - 1;
		snprintf(c->detail, sizeof c->detail, "@%.*s", (int)nlen, sa->sun_path + 1);
		if (net_world(c->net, sock) == 1) {
			memcpy(&out->sun, sa, salen);
			out->len = salen;
			return 0;
		}
		char name[sizeof sa->sun_path];
		memcpy(name, sa->sun_path + 1, nlen);
		int n = snprintf(out->sun.sun_path + 1, sizeof out->sun.sun_path - 1, "moat-%s/",
				 c->net->id);
		if ((size_t)n + 1 + nlen > sizeof out->sun.sun_path) {
			*v = v_error(EINVAL);
			return -1;
		}
		memcpy(out->sun.sun_path + 1 + n, name, nlen);
		out->len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + (size_t)n + nlen);
		return 0;
	}
	/* A path: copy it into the call's path slot so the walk and the
	 * audit see the same bytes. */
	size_t n = strnlen(sa->sun_path, plen);
	memcpy(c->path[0], sa->sun_path, n);
	c->path[0][n] = '\0';
	c->npath = 1;
	struct vfs_path p;
	int r = fs_walk_str(c, ARG_CWD, c->path[0], 0, create ? 0 : VW_FOLLOW, &p);
	if (r < 0) {
		*v = fs_fail(c, &p, r);
		return -1;
	}
	if (create) {
		if (p.exists) {
			*v = v_error(EADDRINUSE);
		} else if (p.outside) {
			*v = v_deny(ENOENT, "fs.outside-view");
		} else if ((r = vfs_make_writable(c->vfs, &p, VC_CREATE)) < 0) {
			*v = v_error(-r);
		} else {
			out->hold = p.parent; /* ownership moves to the target */
			p.parent = -1;
			int m = snprintf(out->sun.sun_path, sizeof out->sun.sun_path, "/proc/self/fd/%d/%s",
					 out->hold, p.name);
			if ((size_t)m >= sizeof out->sun.sun_path) {
				*v = v_error(ENAMETOOLONG);
				vfs_path_release(&p);
				return -1;
			}
			out->len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + (size_t)m + 1);
			vfs_path_release(&p);
			return 0;
		}
		vfs_path_release(&p);
		return -1;
	}
	if (!p.exists) {
		*v = fs_fail(c, &p, -ENOENT);
		vfs_path_release(&p);
		return -1;
	}
	if (!S_ISSOCK(p.st.st_mode)) {
		*v = v_error(ECONNREFUSED);
		vfs_path_release(&p);
		return -1;
	}
	out->hold = fs_opath(c, &p);
	vfs_path_release(&p);
	if (out->hold < 0) {
		*v = v_error(-out->hold);
		return -1;
	}
	int m = snprintf(out->sun.sun_path, sizeof out->sun.sun_path, "/proc/self/fd/%d", out->hold);
	out->len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + (size_t)m + 1);
	return 0;
}

/* Is `sa` one of the host's own addresses?  A rule wider than one address
 * (0.0.0.0/0, 10.0.0.0/8) opens the network, not the host's own services
 * listening on 0.0.0.0: binding a throwaway socket of moat's namespace to
 * the address tells (only a local address can be bound). */
static bool host_address(const struct sockaddr_storage *ss, socklen_t len)
{
	struct sockaddr_storage a;
	memcpy(&a, ss, len);
	if (a.ss_family == AF_INET)
		((struct sockaddr_in *)&a)->sin_port = 0;
	else
		((struct sockaddr_in6 *)&a)->sin6_port = 0;
	int s = socket(a.ss_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (s < 0)
		return true; /* cannot tell: fail closed */
	int r = bind(s, (struct sockaddr *)&a, len);
	int e = errno;
	close(s);
	return r == 0 || e != EADDRNOTAVAIL;
}

/* The policy's answer, with a wide rule's match on the host's own address
 * taken back (see host_address). */
static enum net_dest decide(struct net *n, const struct sockaddr_storage *ss, socklen_t len,
			    const struct net_rule **rule)
{
	enum net_dest d = net_policy_check(n, (const struct sockaddr *)ss, len, rule);
	if (d == ND_ALLOW && (*rule)->prefix < ((*rule)->family == AF_INET ? 32 : 128) &&
	    host_address(ss, len)) {
		*rule = NULL;
		return ND_DENY_HOST;
	}
	return d;
}

/* Fill c->dest (and the detail) for an inet destination. */
static void note_dest(struct call *c, const struct sockaddr *sa, socklen_t len,
		      const struct net_rule *rule)
{
	struct call_net *cn = &c->dest;
	if (!net_addr_text(sa, len, cn->address, sizeof cn->address, &cn->port))
		return;
	cn->family = sa->sa_family;
	cn->allowed = rule != NULL;
	const char *host = rule && rule->host[0] ? rule->host : net_pinned_name(c->net, sa, len);
	snprintf(cn->host, sizeof cn->host, "%s", host ? host : "");
	char d[200];
	sc_decode_sockaddr(d, sizeof d, sa, len);
	if (rule)
		snprintf(c->detail, sizeof c->detail, "%s allowed by --allow-net %s", d, rule->spec);
	else
		snprintf(c->detail, sizeof c->detail, "%s", d);
}

/* The summary's name of a destination: "1.2.3.4:443 (example.com)",
 * "dns pypi.org", "udp 192.0.2.1:9". */
static void seen_dest(struct call *c, bool udp, bool allowed)
{
	char what[200];
	const struct call_net *cn = &c->dest;
	if (cn->query[0])
		snprintf(what, sizeof what, "dns %s", cn->query);
	else
		snprintf(what, sizeof what, "%s%s%s%s:%d%s%s%s", udp ? "udp " : "",
			 cn->family == AF_INET6 && strchr(cn->address, ':') ? "[" : "", cn->address,
			 cn->family == AF_INET6 && strchr(cn->address, ':') ? "]" : "", cn->port,
			 cn->host[0] ? " (" : "", cn->host, cn->host[0] ? ")" : "");
	net_seen(c->net, what, allowed);
}

static struct verdict deny_dest(struct call *c, enum net_dest d, bool udp)
{
	seen_dest(c, udp, false);
	if (!net_private(c->net) && d == ND_PRIVATE)
		return v_deny(ECONNREFUSED, "net.no-private-loopback");
	if (d == ND_DENY_PORT)
		return v_deny(ECONNREFUSED, "net.port-not-allowed");
	return v_deny(ENETUNREACH, "net.deny-by-default");
}

/* A netlink address is used only on a netlink socket moat made in the
 * private world (sys_socket), where the kernel it talks to knows lo alone. */
static bool netlink_ok(struct call *c, int s, int family)
{
	return family == AF_NETLINK && net_private(c->net) &&
	       sock_int(s, SOL_SOCKET, SO_DOMAIN) == AF_NETLINK && net_world(c->net, s) == 1;
}

static struct verdict deny_addr_family(struct call *c, const struct sockaddr_storage *ss,
				       socklen_t len)
{
	char d[200];
	sc_decode_sockaddr(d, sizeof d, ss, len);
	snprintf(c->detail, sizeof c->detail, "%s", d);
	return v_deny(EAFNOSUPPORT, "net.family");
}

/* ---- the other world's socket ---- */

/* The options a client sets before connecting, carried over to the
 * socket that replaces it (what differs from a new socket's default). */
static void copy_options(int from, int to, int domain, int type)
{
	static const struct { int level, opt; } ints[] = {
		{ SOL_SOCKET, SO_REUSEADDR }, { SOL_SOCKET, SO_REUSEPORT },
		{ SOL_SOCKET, SO_KEEPALIVE }, { SOL_SOCKET, SO_BROADCAST },
		{ SOL_SOCKET, SO_OOBINLINE }, { SOL_SOCKET, SO_PRIORITY },
		{ SOL_SOCKET, SO_MARK }, { IPPROTO_TCP, TCP_NODELAY },
		{ IPPROTO_TCP, TCP_KEEPIDLE }, { IPPROTO_TCP, TCP_KEEPINTVL },
		{ IPPROTO_TCP, TCP_KEEPCNT }, { IPPROTO_TCP, TCP_USER_TIMEOUT },
		{ IPPROTO_TCP, TCP_SYNCNT }, { IPPROTO_TCP, TCP_FASTOPEN_CONNECT },
		{ IPPROTO_IP, IP_TOS }, { IPPROTO_IP, IP_TTL },
		{ IPPROTO_IPV6, IPV6_V6ONLY }, { IPPROTO_IPV6, IPV6_UNICAST_HOPS },
	};
	for (size_t i = 0; i < sizeof ints / sizeof ints[0]; i++) {
		int lv = ints[i].level;
		if ((lv == IPPROTO_TCP && type != SOCK_STREAM) || (lv == IPPROTO_IPV6 && domain != AF_INET6))
			continue;
		int a = sock_int(from, lv, ints[i].opt), b = sock_int(to, lv, ints[i].opt);
		if (a >= 0 && a != b)
			setsockopt(to, lv, ints[i].opt, &a, sizeof a);
	}
	/* Buffer sizes read back doubled; a default one is left alone. */
	for (int opt = SO_SNDBUF; opt <= SO_RCVBUF; opt += SO_RCVBUF - SO_SNDBUF) {
		int a = sock_int(from, SOL_SOCKET, opt), b = sock_int(to, SOL_SOCKET, opt);
		if (a > 0 && a != b) {
			a /= 2;
			setsockopt(to, SOL_SOCKET, opt, &a, sizeof a);
		}
	}
	struct timeval tv;
	struct linger lg;
	socklen_t l;
	for (int opt = SO_RCVTIMEO; opt <= SO_SNDTIMEO; opt++) {
		l = sizeof tv;
		if (getsockopt(from, SOL_SOCKET, opt, &tv, &l) == 0 && (tv.tv_sec || tv.tv_usec))
			setsockopt(to, SOL_SOCKET, opt, &tv, sizeof tv);
	}
	l = sizeof lg;
	if (getsockopt(from, SOL_SOCKET, SO_LINGER, &lg, &l) == 0 && lg.l_onoff)
		setsockopt(to, SOL_SOCKET, SO_LINGER, &lg, sizeof lg);
	int fl = fcntl(from, F_GETFL);
	if (fl >= 0)
		fcntl(to, F_SETFL, fl & O_NONBLOCK);
}

/* A socket like `s` (its domain, type, protocol and options) in the
 * other world.  -errno on failure. */
static int other_world(struct call *c, int s, bool priv)
{
	int domain = sock_int(s, SOL_SOCKET, SO_DOMAIN), type = sock_int(s, SOL_SOCKET, SO_TYPE);
	int proto = sock_int(s, SOL_SOCKET, SO_PROTOCOL);
	if (domain < 0 || type < 0 || proto < 0)
		return -ENOTSOCK;
	int n = net_socket(c->net, c->creds, priv, domain, type, proto);
	if (n >= 0)
		copy_options(s, n, domain, type);
	return n;
}

/* O_CLOEXEC when the caller's fd `fd` has FD_CLOEXEC (its fdinfo). */
static unsigned fd_cloexec(struct call *c, int fd)
{
	char path[64], line[128];
	snprintf(path, sizeof path, "/proc/%d/fdinfo/%d", c->task->proc->tgid, fd);
	FILE *f = fopen(path, "re");
	unsigned r = 0;
	while (f && fgets(line, sizeof line, f)) {
		unsigned long fl;
		if (sscanf(line, "flags: %lo", &fl) == 1)
			r = fl & O_CLOEXEC ? O_CLOEXEC : 0;
	}
	if (f)
		fclose(f);
	return r;
}

/* Put socket `n` at the caller's fd number `fd`.  0 or -errno. */
static int install(struct call *c, int n, int fd)
{
	int r = notif_install(c->notify_fd, c->id, n, fd, fd_cloexec(c, fd));
	return r < 0 ? r : 0;
}

/* ---- connect ---- */

/* Connect `s` (owned) to `addr`, on a job: a connect can wait for ever (a
 * full backlog, a silent host), and whether it blocks is a flag another
 * sandbox thread can flip at any time, so the loop serves everyone
 * meanwhile; the job connects with the sandbox's ids (SO_PEERCRED), and is
 * interrupted when its caller goes away (jobs_sweep).  `hold` (owned) keeps a unix target alive; install_at >= 0
 * puts `s` at that fd number of the caller once connected. */
static struct verdict connect_on(struct call *c, int s, const void *addr, socklen_t len, int hold,
				 int install_at, bool private_dest)
{
	struct net_job *j = net_job_new(c, NJ_CONNECT, s);
	if (j) {
		j->private_dest = private_dest;
		j->hold = hold;
		memcpy(&j->addr, addr, len);
		j->addrlen = len;
		if (install_at >= 0) {
			j->install_at = install_at;
			j->install_flags = fd_cloexec(c, install_at);
		}
		if (net_job_start(c, j) == 0)
			return v_pending();
		j->sock = j->hold = -1;
		net_job_free(j);
	}
	/* No thread (JOBS_MAX run, or none could be made): never the
	 * connect here, where it could stop the loop; the caller may retry. */
	call_putfd(s);
	if (hold >= 0)
		close(hold);
	return v_error(EAGAIN);
}

/* The local port of `s` went to the stub resolver: remember who. */
static void note_dns_source(struct call *c, int s, const struct sockaddr *to, socklen_t len)
{
	char a[46];
	int port;
	if (c->net->dns_fd < 0 || !net_addr_text(to, len, a, sizeof a, &port) || port != 53 ||
	    strcmp(a, NET_DNS_ADDR) != 0)
		return;
	struct sockaddr_storage me;
	socklen_t ml = sizeof me;
	char ma[46];
	int mport;
	if (getsockname(s, (struct sockaddr *)&me, &ml) == 0 &&
	    net_addr_text((struct sockaddr *)&me, ml, ma, sizeof ma, &mport))
		net_dns_note_source(c->net, (uint16_t)mport, c->task->proc->tgid, c->tid);
}

static struct verdict inet_connect(struct call *c, int fd, const struct sockaddr_storage *ss,
				   socklen_t len)
{
	struct net *n = c->net;
	const struct net_rule *rule;
	enum net_dest d = decide(n, ss, len, &rule);
	if (d == ND_INVALID)
		return v_error(EINVAL);
	note_dest(c, (const struct sockaddr *)ss, len, rule);
	int s = call_getfd(c, fd);
	if (s < 0)
		return v_error(EBADF);
	int world = net_world(n, s);
	int type = sock_int(s, SOL_SOCKET, SO_TYPE);
	bool udp = type == SOCK_DGRAM;
	if (world < 0 || !is_inet(sock_int(s, SOL_SOCKET, SO_DOMAIN))) {
		call_putfd(s);
		return v_error(world < 0 ? ENOTSOCK : EINVAL);
	}
	if (d == ND_DENY_HOST || d == ND_DENY_PORT || (d == ND_PRIVATE && !net_private(n))) {
		call_putfd(s);
		return deny_dest(c, d, udp);
	}
	bool want_priv = d == ND_PRIVATE;
	if (d == ND_ALLOW)
		seen_dest(c, udp, true);
	int install_at = -1;
	if (want_priv != (world == 1)) {
		/* The socket lives in the wrong world for this destination: a
		 * new one in the right world, connected by moat, takes its
		 * place. */
		int ns = other_world(c, s, want_priv);
		call_putfd(s);
		if (ns < 0)
			return v_error(-ns);
		s = ns;
		install_at = fd;
	}
	struct verdict v;
	if (udp) {
		/* A UDP connect does not wait: done here, so the stub
		 * resolver can learn the caller's port now. */
		int r = connect(s, (const struct sockaddr *)ss, len);
		int e = errno;
		if (r == 0 && install_at >= 0 && (r = install(c, s, install_at)) < 0)
			e = -r;
		if (r == 0)
			note_dns_source(c, s, (const struct sockaddr *)ss, len);
		call_putfd(s);
		v = r < 0 ? v_error(e) : v_value(0);
	} else {
		v = connect_on(c, s, ss, len, -1, install_at, want_priv);
	}
	return d == ND_ALLOW ? v_recorded(v, "net.allow") : v;
}

struct verdict sys_connect(struct call *c)
{
	struct sockaddr_storage ss;
	struct verdict v;
	socklen_t len = (socklen_t)c->arg[2];
	if (read_addr(c, c->arg[1], len, &ss, &v) < 0)
		return v;
	int fd = (int)c->arg[0];
	if (is_inet(ss.ss_family))
		return inet_connect(c, fd, &ss, len);
	int s = call_getfd(c, fd);
	if (s < 0)
		return v_error(EBADF);
	if (ss.ss_family != AF_UNIX && ss.ss_family != AF_UNSPEC && !netlink_ok(c, s, ss.ss_family)) {
		call_putfd(s);
		return deny_addr_family(c, &ss, len);
	}
	struct unix_target t = { .hold = -1 };
	if (ss.ss_family == AF_UNSPEC && is_inet(sock_int(s, SOL_SOCKET, SO_DOMAIN)) &&
	    sock_int(s, SOL_SOCKET, SO_TYPE) == SOCK_DGRAM && net_world(c->net, s) != 1) {
		/* Dissolving the association of a UDP socket moat put in the
		 * host's namespace would leave it unconnected there, and its
		 * next write would bind a host port: it goes back to the private
		 * world instead, unconnected, as the call asks. */
		int ns = other_world(c, s, true);
		call_putfd(s);
		if (ns < 0)
			return ns == -EACCES ? v_deny(EACCES, "net.no-private-loopback") : v_error(-ns);
		int r = install(c, ns, fd);
		call_putfd(ns);
		return r < 0 ? v_error(-r) : v_value(0);
	}
	if (ss.ss_family != AF_UNIX) {
		/* Dissolve a UDP association in the socket's own world, or
		 * a netlink socket's peer in the private one. */
		memcpy(&t.any, &ss, len); /* len <= sizeof ss (read_addr) */
		t.len = len;
	} else if (unix_target(c, s, (struct sockaddr_un *)&ss, len, false, &t, &v) < 0) {
		call_putfd(s);
		return v;
	}
	/* An abstract name is looked up among the private world's (or
	 * under this sandbox's prefix): never the host's. */
	bool abstract = ss.ss_family == AF_UNIX && len > offsetof(struct sockaddr_un, sun_path) &&
			((struct sockaddr_un *)&ss)->sun_path[0] == '\0';
	return connect_on(c, s, &t.sun, t.len, t.hold, -1, abstract);
}

/* ---- bind, listen ---- */

/* An inet socket the sandbox binds or listens on must live in the private
 * world.  A socket of the host's there is one moat put there for an
 * allowed destination: without root (NET_USERNS), an unbound one (its
 * connect failed) moves back (a new one takes its fd number); a bound one
 * stays, and is refused, as it always is as root.  0 with *s the socket to use, or -errno (-EACCES: refused). */
static int to_private(struct call *c, int fd, int *s)
{
	struct net *n = c->net;
	int world = net_world(n, *s);
	if (world == 1)
		return 0;
	if (world < 0)
		return -ENOTSOCK;
	if (n->mode != NET_USERNS)
		return -EACCES;
	struct sockaddr_storage me;
	socklen_t ml = sizeof me;
	char a[46];
	int port = 1;
	if (getsockname(*s, (struct sockaddr *)&me, &ml) < 0 ||
	    !net_addr_text((struct sockaddr *)&me, ml, a, sizeof a, &port) || port != 0)
		return -EACCES;
	int ns = other_world(c, *s, true);
	if (ns < 0)
		return ns;
	int r = install(c, ns, fd);
	if (r < 0) {
		call_putfd(ns);
		return r;
	}
	call_putfd(*s);
	*s = ns;
	return 0;
}

struct verdict sys_bind(struct call *c)
{
	struct sockaddr_storage ss;
	struct verdict v;
	socklen_t len = (socklen_t)c->arg[2];
	if (read_addr(c, c->arg[1], len, &ss, &v) < 0)
		return v;
	int s = call_getfd(c, (int)c->arg[0]);
	if (s < 0)
		return v_error(EBADF);
	struct unix_target t = { .hold = -1 };
	const void *addr = &ss;
	if (is_inet(ss.ss_family)) {
		/* Only in the private world, where the only addresses are the
		 * loopback's: the kernel there answers EADDRNOTAVAIL for any
		 * other.  A socket of the host world is never bound by the
		 * sandbox (it would be a port on the host). */
		note_dest(c, (struct sockaddr *)&ss, len, NULL);
		int r = to_private(c, (int)c->arg[0], &s);
		if (r < 0) {
			call_putfd(s);
			return r == -EACCES ? v_deny(EACCES, c->net->mode == NET_NONE
									 ? "net.no-private-loopback"
									 : "net.bind-host")
					    : v_error(-r);
		}
	} else if (ss.ss_family == AF_UNIX) {
		if (unix_target(c, s, (struct sockaddr_un *)&ss, len, true, &t, &v) < 0) {
			call_putfd(s);
			return v;
		}
		addr = &t.sun;
		len = t.len;
	} else if (!netlink_ok(c, s, ss.ss_family)) {
		call_putfd(s);
		return deny_addr_family(c, &ss, len);
	}
	/* With the sandbox's ids: a port below 1024 is refused as it would
	 * be to the sandbox. */
	mode_t old = umask(c->task->proc->fs->umask);
	creds_identity_begin(c->creds);
	int r = bind(s, (const struct sockaddr *)addr, len);
	int e = errno;
	creds_identity_end(c->creds);
	umask(old);
	call_putfd(s);
	if (t.hold >= 0)
		close(t.hold);
	return r < 0 ? v_error(e) : v_value(0);
}

struct verdict sys_listen(struct call *c)
{
	int s = call_getfd(c, (int)c->arg[0]);
	if (s < 0)
		return v_error(EBADF);
	int domain = sock_int(s, SOL_SOCKET, SO_DOMAIN);
	if (is_inet(domain)) {
		/* Listening on a socket of the host world would open a port on
		 * the host (a failed connect leaves it unbound again). */
		int r = to_private(c, (int)c->arg[0], &s);
		if (r < 0) {
			call_putfd(s);
			return r == -EACCES ? v_deny(EACCES, c->net->mode == NET_NONE
									 ? "net.no-private-loopback"
									 : "net.listen-host")
					    : v_error(-r);
		}
	}
	int r = listen(s, (int)c->arg[1]);
	int e = errno;
	call_putfd(s);
	return r < 0 ? v_error(e) : v_value(0);
}

/* ---- options ---- */

/* Options that reach interfaces and the network beyond the socket: binding
 * to a device (whose name getsockopt then tells: the host's interface list)
 * and multicast membership (IGMP/MLD reports on the host's LAN). */
static bool reaches_interfaces(int level, int opt)
{
	if (level == SOL_SOCKET)
		return opt == SO_BINDTODEVICE || opt == SO_BINDTOIFINDEX;
	if (level == IPPROTO_IP)
		return (opt >= IP_MULTICAST_IF && opt <= IP_DROP_SOURCE_MEMBERSHIP) ||
		       (opt >= MCAST_JOIN_GROUP && opt <= MCAST_MSFILTER) || opt == IP_MULTICAST_ALL ||
		       opt == IP_UNICAST_IF;
	if (level == IPPROTO_IPV6)
		return (opt >= IPV6_MULTICAST_IF && opt <= IPV6_DROP_MEMBERSHIP) ||
		       opt == IPV6_JOIN_ANYCAST || opt == IPV6_LEAVE_ANYCAST ||
		       (opt >= MCAST_JOIN_GROUP && opt <= MCAST_MSFILTER) || opt == IPV6_MULTICAST_ALL ||
		       opt == IPV6_UNICAST_IF || opt == IPV6_PKTINFO;
	return false;
}

/* An option outside the filter's allowlist.  moat performs only the
 * interface and multicast ones (values without pointers), and only on a
 * socket of the private world; everything else is refused ENOPROTOOPT:
 * an option moat performed would act with moat's memory (a value holding a
 * pointer — iptables' counters — would have the kernel write into it) and,
 * without root, with moat's standing as owner of the private world's
 * namespace (CAP_NET_ADMIN there). */
struct verdict sys_setsockopt(struct call *c)
{
	int level = (int)c->arg[1], opt = (int)c->arg[2];
	socklen_t len = (socklen_t)c->arg[4];
	static char buf[4096];
	snprintf(c->detail, sizeof c->detail, "level=%d option=%d", level, opt);
	if (!reaches_interfaces(level, opt))
		return v_deny(ENOPROTOOPT, "net.sockopt");
	if (len > sizeof buf)
		return v_error(ENOBUFS);
	if (len && call_read(c, c->arg[3], buf, len) < 0)
		return v_error(EFAULT);
	int s = call_getfd(c, (int)c->arg[0]);
	if (s < 0)
		return v_error(EBADF);
	if (net_world(c->net, s) != 1 && is_inet(sock_int(s, SOL_SOCKET, SO_DOMAIN))) {
		call_putfd(s);
		return v_deny(EPERM, "net.host-interface");
	}
	creds_bare_begin(c->creds);
	int r = setsockopt(s, level, opt, len ? buf : NULL, len);
	int e = errno;
	creds_identity_end(c->creds);
	call_putfd(s);
	return r < 0 ? v_error(e) : v_value(0);
}

/* ---- sends ---- */

static bool blocking(int fd)
{
	int fl = fcntl(fd, F_GETFL);
	return fl >= 0 && !(fl & O_NONBLOCK);
}

#define SEND_MAX (256 * 1024)

/* Send on socket `s` (owned) with copied data (one iovec) and a decided
 * address.  `rights`/`*nrights`: the supervisor fds the control data
 * names; a job that takes the send over takes them too (*nrights becomes
 * 0). */
static struct verdict send_copy(struct call *c, int s, struct msghdr *m, int flags, int *rights,
				int *nrights)
{
	/* SCM_CREDENTIALS (explicit, or implicit for SO_PASSCRED receivers)
	 * carry the sender's ids: the sandbox's, not the supervisor's.  Tried
	 * without waiting first: a full buffer must not stop the loop. */
	creds_identity_begin(c->creds);
	ssize_t r = sendmsg(s, m, flags | MSG_NOSIGNAL | MSG_DONTWAIT);
	int e = errno;
	creds_identity_end(c->creds);
	if (r < 0 && (e == EAGAIN || e == EWOULDBLOCK) && !(flags & MSG_DONTWAIT) && blocking(s) &&
	    m->msg_controllen <= sizeof(((struct net_job *)0)->ctl)) {
		struct net_job *j = net_job_new(c, NJ_SEND, s);
		size_t len = m->msg_iovlen ? m->msg_iov[0].iov_len : 0;
		if (j && (j->data = malloc(len ? len : 1))) {
			memcpy(j->data, m->msg_iovlen ? m->msg_iov[0].iov_base : "", len);
			j->len = len;
			if (m->msg_name) {
				memcpy(&j->addr, m->msg_name, m->msg_namelen);
				j->addrlen = m->msg_namelen;
			}
			if (m->msg_controllen)
				memcpy(j->ctl, m->msg_control, m->msg_controllen);
			j->ctllen = m->msg_controllen;
			j->flags = flags;
			for (int i = 0; nrights && i < *nrights; i++)
				j->rights[j->nrights++] = rights[i];
			if (net_job_start(c, j) == 0) {
				if (nrights)
					*nrights = 0;
				return v_pending();
			}
			j->nrights = 0;
		}
		if (j) {
			j->sock = -1;
			net_job_free(j);
		}
	}
	call_putfd(s);
	if (r < 0 && e == EPIPE && !(flags & MSG_NOSIGNAL))
		syscall(SYS_tgkill, c->task->proc->tgid, c->tid, SIGPIPE);
	return r < 0 ? v_error(e) : v_value(r);
}

/* A datagram socket of the host's network sends only as a connected one:
 * unconnected, its port would take datagrams from anyone on the host and
 * the network.  Connected to the allowed destination, it hears that one
 * only (and re-connects when the next datagram goes elsewhere).  0, or -1
 * with the verdict. */
static int host_udp_peer(int s, int world, bool udp, const struct sockaddr_storage *ss,
			 socklen_t len, struct verdict *v)
{
	if (world != 0 || !udp)
		return 0;
	if (connect(s, (const struct sockaddr *)ss, len) < 0) {
		*v = v_error(errno);
		return -1;
	}
	return 0;
}

/* Decide the destination of a send and pick the socket it goes out on:
 * 0 with *s (owned) set, or -1 with the verdict.  `ss` NULL: no address.
 * `data`: what is sent (a DNS question in it is named in the audit). */
static int send_target(struct call *c, int fd, struct sockaddr_storage *ss, socklen_t *len,
		       const void *data, size_t dlen, struct unix_target *t, int *s,
		       struct verdict *v)
{
	*s = call_getfd(c, fd);
	if (*s < 0) {
		*v = v_error(EBADF);
		return -1;
	}
	if (!ss)
		return 0;
	if (ss->ss_family == AF_UNIX) {
		if (unix_target(c, *s, (struct sockaddr_un *)ss, *len, false, t, v) < 0)
			goto fail;
		memcpy(ss, &t->sun, t->len);
		*len = t->len;
		return 0;
	}
	if (netlink_ok(c, *s, ss->ss_family))
		return 0;
	if (!is_inet(ss->ss_family)) {
		*v = deny_addr_family(c, ss, *len);
		goto fail;
	}
	struct net *n = c->net;
	const struct net_rule *rule;
	enum net_dest d = decide(n, ss, *len, &rule);
	if (d == ND_INVALID) {
		*v = v_error(EINVAL);
		goto fail;
	}
	note_dest(c, (struct sockaddr *)ss, *len, rule);
	int type = sock_int(*s, SOL_SOCKET, SO_TYPE);
	bool udp = type == SOCK_DGRAM;
	if (c->dest.port == 53 && udp)
		dns_question(data, dlen, c->dest.query, sizeof c->dest.query, c->dest.qtype,
			     sizeof c->dest.qtype);
	int world = net_world(n, *s);
	if (world < 0 || !is_inet(sock_int(*s, SOL_SOCKET, SO_DOMAIN))) {
		*v = v_error(world < 0 ? ENOTSOCK : EINVAL);
		goto fail;
	}
	if (d == ND_DENY_HOST || d == ND_DENY_PORT || (d == ND_PRIVATE && !net_private(n))) {
		*v = deny_dest(c, d, udp);
		goto fail;
	}
	if (d == ND_ALLOW)
		seen_dest(c, udp, true);
	bool want_priv = d == ND_PRIVATE;
	if (want_priv == (world == 1))
		return host_udp_peer(*s, world, udp, ss, *len, v) < 0 ? -1 : 0;
	if (!udp) {
		/* A stream socket sends to its peer whatever the address says
		 * (only MSG_FASTOPEN connects, which the kernel of the private
		 * world answers ENETUNREACH); one of the host world is
		 * connected to an allowed peer and may send to nothing else. */
		if (world == 1)
			return 0;
		*v = deny_dest(c, ND_DENY_HOST, false);
		goto fail;
	}
	/* A datagram for the other world: the socket moves there. */
	int ns = other_world(c, *s, want_priv);
	if (ns < 0) {
		*v = v_error(-ns);
		goto fail;
	}
	int r = install(c, ns, fd);
	call_putfd(*s);
	*s = ns;
	if (r < 0) {
		*v = v_error(-r);
		goto fail;
	}
	return host_udp_peer(*s, want_priv ? 1 : 0, udp, ss, *len, v) < 0 ? -1 : 0;
fail:
	call_putfd(*s);
	*s = -1;
	return -1;
}

static struct verdict recorded(struct call *c, struct verdict v)
{
	if (c->dest.allowed && v.kind != V_DENY)
		return v_recorded(v, "net.allow");
	return v;
}

struct verdict sys_sendto(struct call *c)
{
	struct sockaddr_storage ss;
	struct verdict v;
	socklen_t alen = (socklen_t)c->arg[5];
	if (read_addr(c, c->arg[4], alen, &ss, &v) < 0)
		return v;
	size_t len = (size_t)c->arg[2];
	if (len > SEND_MAX)
		len = SEND_MAX; /* a short send, as a full socket buffer gives */
	char *buf = malloc(len ? len : 1);
	if (!buf)
		return v_error(ENOMEM);
	if (len && call_read(c, c->arg[1], buf, len) < 0) {
		free(buf);
		return v_error(EFAULT);
	}
	struct unix_target t = { .hold = -1 };
	int s;
	if (send_target(c, (int)c->arg[0], &ss, &alen, buf, len, &t, &s, &v) == 0) {
		struct iovec iov = { buf, len };
		struct msghdr m = { .msg_name = &ss, .msg_namelen = alen, .msg_iov = &iov, .msg_iovlen = 1 };
		v = recorded(c, send_copy(c, s, &m, (int)c->arg[3], NULL, NULL));
		if (v.kind == V_VALUE && is_inet(ss.ss_family)) {
			int s2 = call_getfd(c, (int)c->arg[0]);
			if (s2 >= 0) {
				note_dns_source(c, s2, (struct sockaddr *)&ss, alen);
				call_putfd(s2);
			}
		}
	}
	free(buf);
	if (t.hold >= 0)
		close(t.hold);
	return v;
}

/* One msghdr from the sandbox: name decided, data and rights copied. */
static struct verdict send_one(struct call *c, int sockfd, uint64_t mptr, int flags, bool may_pend)
{
	struct msghdr m;
	struct verdict v = v_error(EINVAL);
	if (call_read(c, mptr, &m, sizeof m) < 0)
		return v_error(EFAULT);
	struct sockaddr_storage ss;
	socklen_t alen = 0;
	bool named = m.msg_name && m.msg_namelen;
	if (named) {
		alen = m.msg_namelen;
		if (read_addr(c, (uint64_t)(uintptr_t)m.msg_name, alen, &ss, &v) < 0)
			return v;
	}
	if (m.msg_iovlen > 1024)
		return v_error(EMSGSIZE);
	struct iovec iov[1024];
	size_t n = m.msg_iovlen;
	if (n && call_read(c, (uint64_t)(uintptr_t)m.msg_iov, iov, n * sizeof iov[0]) < 0)
		return v_error(EFAULT);
	size_t total = 0;
	for (size_t i = 0; i < n; i++)
		total += iov[i].iov_len < SEND_MAX ? iov[i].iov_len : SEND_MAX;
	if (total > SEND_MAX)
		total = SEND_MAX;
	char *data = malloc(total ? total : 1);
	char ctl[4096];
	int fds[253];
	int nfds = 0, s = -1;
	struct unix_target t = { .hold = -1 };
	if (!data)
		return v_error(ENOMEM);
	size_t off = 0;
	for (size_t i = 0; i < n && off < total; i++) {
		size_t l = iov[i].iov_len < total - off ? iov[i].iov_len : total - off;
		if (l && call_read(c, (uint64_t)(uintptr_t)iov[i].iov_base, data + off, l) < 0) {
			v = v_error(EFAULT);
			goto out;
		}
		off += l;
	}
	struct iovec one = { data, total };
	m.msg_iov = &one;
	m.msg_iovlen = 1;
	if (m.msg_control && m.msg_controllen) {
		if (m.msg_controllen > sizeof ctl) {
			v = v_error(ENOBUFS);
			goto out;
		}
		if (call_read(c, (uint64_t)(uintptr_t)m.msg_control, ctl, m.msg_controllen) < 0) {
			v = v_error(EFAULT);
			goto out;
		}
		m.msg_control = ctl;
		for (struct cmsghdr *cm = CMSG_FIRSTHDR(&m); cm; cm = CMSG_NXTHDR(&m, cm)) {
			if (cm->cmsg_level != SOL_SOCKET) {
				/* IP_PKTINFO and friends could pick a source
				 * address or interface on the host's network. */
				snprintf(c->detail, sizeof c->detail, "control message level %d type %d",
					 cm->cmsg_level, cm->cmsg_type);
				v = v_deny(EINVAL, "net.cmsg");
				goto out;
			}
			if (cm->cmsg_type == SCM_RIGHTS) {
				/* Only fds the caller holds: each is taken from its
				 * own table, so a foreign fd cannot be named. */
				int *fp = (int *)CMSG_DATA(cm);
				size_t k = (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int);
				for (size_t i = 0; i < k; i++) {
					int f = call_getfd(c, fp[i]);
					if (f < 0 || nfds == 253) {
						if (f >= 0)
							call_putfd(f);
						snprintf(c->detail, sizeof c->detail,
							 "SCM_RIGHTS fd %d: not the caller's", fp[i]);
						v = v_deny(EBADF, "net.foreign-fd");
						goto out;
					}
					fds[nfds++] = f;
					fp[i] = f;
				}
			} else if (cm->cmsg_type == SCM_CREDENTIALS) {
				/* The supervisor could claim anyone: only the
				 * caller's own identity may be sent. */
				struct ucred *uc = (struct ucred *)CMSG_DATA(cm);
				if (uc->pid != c->task->proc->tgid || uc->uid != c->creds->uid ||
				    uc->gid != c->creds->gid) {
					v = v_deny(EPERM, "net.forged-credentials");
					goto out;
				}
			} else {
				snprintf(c->detail, sizeof c->detail, "control message type %d",
					 cm->cmsg_type);
				v = v_deny(EINVAL, "net.cmsg");
				goto out;
			}
		}
	} else {
		m.msg_control = NULL;
		m.msg_controllen = 0;
	}
	if (send_target(c, sockfd, named ? &ss : NULL, &alen, data, total, &t, &s, &v) < 0)
		goto out;
	m.msg_name = named ? &ss : NULL;
	m.msg_namelen = named ? alen : 0;
	/* sendmmsg cannot hand one message to a job (its result is a
	 * message count): it sends what fits now. */
	v = recorded(c, send_copy(c, s, &m, may_pend ? flags : flags | MSG_DONTWAIT, fds, &nfds));
	if (v.kind == V_VALUE && named && is_inet(ss.ss_family)) {
		int s2 = call_getfd(c, sockfd);
		if (s2 >= 0) {
			note_dns_source(c, s2, (struct sockaddr *)&ss, alen);
			call_putfd(s2);
		}
	}
out:
	for (int i = 0; i < nfds; i++)
		call_putfd(fds[i]);
	free(data);
	if (t.hold >= 0)
		close(t.hold);
	return v;
}

struct verdict sys_sendmsg(struct call *c)
{
	return send_one(c, (int)c->arg[0], c->arg[1], (int)c->arg[2], true);
}

struct verdict sys_sendmmsg(struct call *c)
{
	unsigned vlen = (unsigned)c->arg[2];
	if (vlen > 1024)
		vlen = 1024;
	unsigned sent = 0;
	struct verdict v = v_value(0);
	for (; sent < vlen; sent++) {
		uint64_t mp = c->arg[1] + sent * sizeof(struct mmsghdr);
		v = send_one(c, (int)c->arg[0], mp, (int)c->arg[3], false);
		if (v.kind != V_VALUE)
			break;
		unsigned len = (unsigned)v.value;
		if (call_write(c, mp + offsetof(struct mmsghdr, msg_len), &len, sizeof len) < 0)
			break;
	}
	if (sent == 0)
		return v;
	/* The messages sent so far are the call's result; a refusal that
	 * stopped it keeps its record (c->net names its destination). */
	if (v.kind == V_DENY)
		return v_recorded(v_value(sent), v.rule);
	return v_value(sent);
}
