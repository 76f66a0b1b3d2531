/* Socket calls (docs/network.md): socket, socketpair, bind, listen and
 * setsockopt here; connect in sys_connect.c, the sends in sys_sendmsg.c,
 * their shared internals in sock.h.
 *
 * socket(2) of AF_UNIX, and of AF_INET/AF_INET6 for TCP and UDP, runs in
 * the kernel: when moat is root the sandbox lives in its own network
 * namespace (net.h), so such a socket starts in the private world and can
 * reach the sandbox's loopback and nothing else.  Every call that names an
 * address — connect, bind, sendto/sendmsg/sendmmsg with a destination —
 * and listen come to these files: the address is copied once, decided, and the call
 * performed by the supervisor on the sandbox's own socket (a pidfd_getfd
 * copy of the same open file), or on a socket of the host world that moat
 * makes, connects and installs at the sandbox's fd number when the policy
 * allows the destination.  A thread rewriting the sockaddr after the copy
 * changes nothing.  AF_UNIX path names are walked in the virtual
 * filesystem; abstract names are the private world's own. */
#include <errno.h>
#include <fcntl.h>
#include <linux/netlink.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "core/creds.h"
#include "core/task.h"
#include "net-stub/net.h"
#include "net-stub/sock.h"
#include "syscall-table/decode.h"
#include "syscall-table/handlers.h"

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
	if (sock_is_inet(family)) {
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
			int s = net_socket(n, c->creds, n->mode != NET_NONE, family,
					   type & ~SOCK_CLOEXEC, proto);
			if (s < 0)
				return v_error(-s);
			return v_fd(s, type & SOCK_CLOEXEC ? O_CLOEXEC : 0);
		}
		/* What Linux answers before it looks at permissions: no such
		 * protocol number, no such type, no raw socket of protocol 0.
		 * Errors of the call, not denials. */
		if (proto < 0 || proto >= IPPROTO_MAX || base >= SOCK_PACKET + 1)
			return v_error(EINVAL);
		if (base == SOCK_RAW && proto == 0)
			return v_error(EPROTONOSUPPORT);
		if (base != SOCK_STREAM && base != SOCK_DGRAM && base != SOCK_RAW &&
		    base != SOCK_PACKET)
			return v_error(ESOCKTNOSUPPORT);
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
	if (sock_is_inet((int)c->arg[0]))
		return v_error(EOPNOTSUPP); /* as Linux: no inet socket pairs */
	return deny_family(c, (int)c->arg[0]);
}

/* ---- the other world's socket ---- */

/* The options a client sets before connecting, carried over to the
 * socket that replaces it (what differs from a new socket's default). */
static void copy_options(int from, int to, int domain, int type)
{
	static const struct {
		int level, opt;
	} ints[] = {
		{ SOL_SOCKET, SO_REUSEADDR },  { SOL_SOCKET, SO_REUSEPORT },
		{ SOL_SOCKET, SO_KEEPALIVE },  { SOL_SOCKET, SO_BROADCAST },
		{ SOL_SOCKET, SO_OOBINLINE },  { SOL_SOCKET, SO_PRIORITY },
		{ SOL_SOCKET, SO_MARK },       { IPPROTO_TCP, TCP_NODELAY },
		{ IPPROTO_TCP, TCP_KEEPIDLE }, { IPPROTO_TCP, TCP_KEEPINTVL },
		{ IPPROTO_TCP, TCP_KEEPCNT },  { IPPROTO_TCP, TCP_USER_TIMEOUT },
		{ IPPROTO_TCP, TCP_SYNCNT },   { IPPROTO_TCP, TCP_FASTOPEN_CONNECT },
		{ IPPROTO_IP, IP_TOS },        { IPPROTO_IP, IP_TTL },
		{ IPPROTO_IPV6, IPV6_V6ONLY }, { IPPROTO_IPV6, IPV6_UNICAST_HOPS },
	};
	for (size_t i = 0; i < sizeof ints / sizeof ints[0]; i++) {
		int lv = ints[i].level;
		if ((lv == IPPROTO_TCP && type != SOCK_STREAM) ||
		    (lv == IPPROTO_IPV6 && domain != AF_INET6))
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
int sock_other_world(struct call *c, int s, bool priv)
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
unsigned sock_fd_cloexec(struct call *c, int fd)
{
	char path[64], line[128];
	snprintf(path, sizeof path, "/proc/%d/fdinfo/%d", c->task->proc->tgid, fd);
	creds_proc_begin();
	creds_proc_own_begin(); /* the caller's own process */
	FILE *f = fopen(path, "re");
	creds_proc_own_end();
	creds_proc_end();
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
int sock_install(struct call *c, int n, int fd)
{
	int r = notif_install(c->notify_fd, c->id, n, fd, sock_fd_cloexec(c, fd));
	return r < 0 ? r : 0;
}

/* ---- bind, listen ---- */

/* An inet socket the sandbox binds or listens on must live in the private
 * world.  A socket of the host's there is one moat put there for an
 * allowed destination: without root (NET_USERNS), an unbound one (its
 * connect failed) moves back (a new one takes its fd number); a bound one
 * stays, and is refused, as it always is as root.  0 with *s the socket
 * to use, or -errno (-EACCES: refused). */
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
	int ns = sock_other_world(c, *s, true);
	if (ns < 0)
		return ns;
	int r = sock_install(c, ns, fd);
	if (r < 0) {
		call_putfd(ns);
		return r;
	}
	call_putfd(*s);
	*s = ns;
	return 0;
}

/* bind or connect of socket `s` to an address of another family: what
 * Linux answers before anything looks at the address (0 when the families
 * agree, or the socket's family is not AF_UNIX, AF_INET or AF_INET6). */
static int family_mismatch(int s, int family, socklen_t len)
{
	int dom = 0;
	socklen_t dl = sizeof dom;
	if (getsockopt(s, SOL_SOCKET, SO_DOMAIN, &dom, &dl) < 0 || dom == family ||
	    family == AF_UNSPEC)
		return 0;
	if (dom == AF_UNIX)
		return EINVAL;
	if (dom == AF_INET)
		return len < (socklen_t)sizeof(struct sockaddr_in) ? EINVAL : EAFNOSUPPORT;
	if (dom == AF_INET6)
		return len < 24 /* SIN6_LEN_RFC2133 */ ? EINVAL : EAFNOSUPPORT;
	return 0;
}

struct verdict sys_bind(struct call *c)
{
	struct sockaddr_storage ss;
	struct verdict v;
	socklen_t len = (socklen_t)c->arg[2];
	if (sock_read_addr(c, c->arg[1], len, &ss, &v) < 0)
		return v;
	int s = call_getfd(c, (int)c->arg[0]);
	if (s < 0)
		return v_error(EBADF);
	struct sock_unix_target t = { .hold = -1 };
	const void *addr = &ss;
	int mis = family_mismatch(s, ss.ss_family, len);
	if (mis) {
		call_putfd(s);
		return v_error(mis);
	}
	if (sock_is_inet(ss.ss_family)) {
		/* Only in the private world, where the only addresses are the
		 * loopback's: the kernel there answers EADDRNOTAVAIL for any
		 * other.  A socket of the host world is never bound by the
		 * sandbox (it would be a port on the host). */
		sock_note_dest(c, (struct sockaddr *)&ss, len, NULL);
		int r = to_private(c, (int)c->arg[0], &s);
		if (r < 0) {
			call_putfd(s);
			return r == -EACCES ? v_deny(EACCES, c->net->mode == NET_NONE
								     ? "net.no-private-loopback"
								     : "net.bind-host")
					    : v_error(-r);
		}
	} else if (ss.ss_family == AF_UNIX) {
		if (sock_unix_target(c, s, (struct sockaddr_un *)&ss, len, true, &t, &v) < 0) {
			call_putfd(s);
			return v;
		}
		addr = &t.sun;
		len = t.len;
	} else if (!sock_netlink_ok(c, s, ss.ss_family)) {
		call_putfd(s);
		return sock_deny_addr_family(c, &ss, len);
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
	if (sock_is_inet(domain)) {
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
	/* With the caller's ids: listen records them as the credentials a
	 * connecting peer reads (SO_PEERCRED), which must not be root's. */
	creds_identity_begin(c->creds);
	int r = listen(s, (int)c->arg[1]);
	int e = errno;
	creds_identity_end(c->creds);
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
		       (opt >= MCAST_JOIN_GROUP && opt <= MCAST_MSFILTER) ||
		       opt == IP_MULTICAST_ALL || opt == IP_UNICAST_IF;
	if (level == IPPROTO_IPV6)
		return (opt >= IPV6_MULTICAST_IF && opt <= IPV6_DROP_MEMBERSHIP) ||
		       opt == IPV6_JOIN_ANYCAST || opt == IPV6_LEAVE_ANYCAST ||
		       (opt >= MCAST_JOIN_GROUP && opt <= MCAST_MSFILTER) ||
		       opt == IPV6_MULTICAST_ALL || opt == IPV6_UNICAST_IF || opt == IPV6_PKTINFO;
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
	if (net_world(c->net, s) != 1 && sock_is_inet(sock_int(s, SOL_SOCKET, SO_DOMAIN))) {
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
