/* connect(2) and the decisions on destinations (docs/network.md; the
 * family's overview is sys_socket.c's).
 *
 * Every address the sandbox names is judged here from one copy of it: an
 * AF_UNIX name becomes a target the supervisor can use (a path walked in
 * the virtual filesystem, an abstract name of the private world's or under
 * this sandbox's prefix); an inet one is the policy's to decide, and picks
 * the world of the socket that goes there.  A connect that may wait runs
 * on a job (async.h), never on the loop. */
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>

#include "core/task.h"
#include "fs-emulation/fs.h"
#include "net-stub/async.h"
#include "net-stub/net.h"
#include "net-stub/sock.h"
#include "syscall-table/decode.h"
#include "syscall-table/handlers.h"

/* ---- addresses ---- */

/* Pathname AF_UNIX names moat bound for the sandbox.  moat binds through
 * a directory fd of its own, so the kernel records the name it was given,
 * "/proc/self/fd/N/NAME", and reports it (getsockname, getpeername,
 * recvfrom's sender).  Each such name is kept with the sandbox's own, as
 * it wrote it, and the virtual path it named: getsockname and getpeername
 * show the sandbox's, and a connect or sendto naming moat's (a sender's
 * address passed back) goes where the sandbox's did.  N is made unique
 * among the recent bindings (a number of its own, rotating above 4096),
 * so one kernel name stands for one binding. */
#define UNIX_NAMES 256
static struct unix_name {
	char kernel[sizeof(((struct sockaddr_un *)0)->sun_path)];
	char shown[sizeof(((struct sockaddr_un *)0)->sun_path)];
	size_t shown_len; /* bytes of shown (the name's length as bound) */
	char *vpath;      /* what it named in the view */
} unix_names[UNIX_NAMES];
static unsigned unix_next;

static void unix_name_keep(const char *kernel, const char *shown, size_t shown_len,
			   const char *vpath)
{
	struct unix_name *u = &unix_names[unix_next++ % UNIX_NAMES];
	char *vp = strdup(vpath);
	if (!vp)
		return;
	free(u->vpath);
	snprintf(u->kernel, sizeof u->kernel, "%s", kernel);
	memcpy(u->shown, shown, shown_len);
	u->shown_len = shown_len;
	u->vpath = vp;
}

/* The newest binding whose kernel name is `kernel`, or NULL. */
static const struct unix_name *unix_name_find(const char *kernel)
{
	if (strncmp(kernel, "/proc/self/fd/", 14) != 0)
		return NULL;
	for (unsigned i = 0; i < UNIX_NAMES; i++) {
		const struct unix_name *u = &unix_names[(unix_next - 1 - i) % UNIX_NAMES];
		if (u->vpath && strcmp(u->kernel, kernel) == 0)
			return u;
	}
	return NULL;
}

void sock_unix_shown(struct sockaddr_un *sa, socklen_t *len)
{
	if (*len <= offsetof(struct sockaddr_un, sun_path) || sa->sun_path[0] == '\0')
		return;
	char kernel[sizeof sa->sun_path + 1];
	size_t n = strnlen(sa->sun_path, *len - offsetof(struct sockaddr_un, sun_path));
	memcpy(kernel, sa->sun_path, n);
	kernel[n] = '\0';
	const struct unix_name *u = unix_name_find(kernel);
	if (!u)
		return;
	memset(sa->sun_path, 0, sizeof sa->sun_path);
	memcpy(sa->sun_path, u->shown, u->shown_len);
	*len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + u->shown_len);
}

/* Copy the sockaddr argument once.  0, or -1 with the verdict in *v. */
int sock_read_addr(struct call *c, uint64_t addr, socklen_t len, struct sockaddr_storage *ss,
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

int sock_unix_target(struct call *c, int sock, const struct sockaddr_un *sa, socklen_t salen,
		     bool create, struct sock_unix_target *out, struct verdict *v)
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
		out->len =
			(socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + (size_t)n + nlen);
		return 0;
	}
	/* A path: copy it into the call's path slot so the walk and the
	 * audit see the same bytes. */
	size_t n = strnlen(sa->sun_path, plen);
	memcpy(c->path[0], sa->sun_path, n);
	c->path[0][n] = '\0';
	/* moat's own name of a binding (a sender's address passed back):
	 * where the sandbox's named */
	const struct unix_name *known = create ? NULL : unix_name_find(c->path[0]);
	if (known)
		snprintf(c->path[0], sizeof c->path[0], "%s", known->vpath);
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
			out->hold = vfs_path_take_parent(&p); /* the target's */
			if (out->hold < 0) {
				*v = v_error(-out->hold);
				vfs_path_release(&p);
				return -1;
			}
			static unsigned seq;
			int u = fcntl(out->hold, F_DUPFD_CLOEXEC, 4096 + (int)(seq++ % 4096));
			if (u >= 0) {
				close(out->hold);
				out->hold = u;
			}
			int m = snprintf(out->sun.sun_path, sizeof out->sun.sun_path,
					 "/proc/self/fd/%d/%s", out->hold, p.name);
			if ((size_t)m >= sizeof out->sun.sun_path) {
				*v = v_error(ENAMETOOLONG);
				vfs_path_release(&p);
				return -1;
			}
			out->len =
				(socklen_t)(offsetof(struct sockaddr_un, sun_path) + (size_t)m + 1);
			/* the sandbox's name, as long as it bound it (a NUL
			 * included when it gave one) */
			unix_name_keep(out->sun.sun_path, sa->sun_path, n < plen ? n + 1 : n,
				       p.vpath);
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
	int m = snprintf(out->sun.sun_path, sizeof out->sun.sun_path, "/proc/self/fd/%d",
			 out->hold);
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
void sock_note_dest(struct call *c, const struct sockaddr *sa, socklen_t len,
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
		snprintf(c->detail, sizeof c->detail, "%s allowed by --allow-net %s", d,
			 rule->spec);
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

struct verdict sock_deny_dest(struct call *c, enum net_dest d, bool udp)
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
bool sock_netlink_ok(struct call *c, int s, int family)
{
	return family == AF_NETLINK && net_private(c->net) &&
	       sock_int(s, SOL_SOCKET, SO_DOMAIN) == AF_NETLINK && net_world(c->net, s) == 1;
}

struct verdict sock_deny_addr_family(struct call *c, const struct sockaddr_storage *ss,
				     socklen_t len)
{
	char d[200];
	sc_decode_sockaddr(d, sizeof d, ss, len);
	snprintf(c->detail, sizeof c->detail, "%s", d);
	return v_deny(EAFNOSUPPORT, "net.family");
}

/* The decision that connect and the addressed sends share (sock.h).  The
 * address is judged before the socket is looked at: *s is taken here
 * (connect) only after the policy's answer is noted. */
int sock_decide_dest(struct call *c, int fd, int *s, const struct sockaddr_storage *ss,
		     socklen_t len, const void *data, size_t dlen, struct sock_dest *out,
		     struct verdict *v)
{
	struct net *n = c->net;
	const struct net_rule *rule;
	enum net_dest d = decide(n, ss, len, &rule);
	if (d == ND_INVALID) {
		*v = v_error(EINVAL);
		return -1;
	}
	sock_note_dest(c, (const struct sockaddr *)ss, len, rule);
	if (*s < 0 && (*s = call_getfd(c, fd)) < 0) {
		*s = -1;
		*v = v_error(EBADF);
		return -1;
	}
	bool udp = sock_int(*s, SOL_SOCKET, SO_TYPE) == SOCK_DGRAM;
	if (data && c->dest.port == 53 && udp)
		dns_question(data, dlen, c->dest.query, sizeof c->dest.query, c->dest.qtype,
			     sizeof c->dest.qtype);
	int world = net_world(n, *s);
	if (world < 0 || !sock_is_inet(sock_int(*s, SOL_SOCKET, SO_DOMAIN))) {
		*v = v_error(world < 0 ? ENOTSOCK : EINVAL);
		return -1;
	}
	if (d == ND_DENY_HOST || d == ND_DENY_PORT || (d == ND_PRIVATE && !net_private(n))) {
		*v = sock_deny_dest(c, d, udp);
		return -1;
	}
	if (d == ND_ALLOW)
		seen_dest(c, udp, true);
	*out = (struct sock_dest){ .d = d, .world = world, .udp = udp };
	return 0;
}

/* ---- connect ---- */

/* Connect `s` (owned) to `addr`, on a job: a connect can wait for ever (a
 * full backlog, a silent host), and whether it blocks is a flag another
 * sandbox thread can flip at any time, so the loop serves everyone
 * meanwhile; the job connects with the sandbox's ids (SO_PEERCRED), and is
 * interrupted when its caller goes away (jobs_sweep).  `hold` (owned)
 * keeps a unix target alive; install_at >= 0 puts `s` at that fd number
 * of the caller once connected. */
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
			j->install_flags = sock_fd_cloexec(c, install_at);
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
void sock_note_dns_source(struct call *c, int s, const struct sockaddr *to, socklen_t len)
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
	int s = -1;
	struct sock_dest dd;
	struct verdict v;
	if (sock_decide_dest(c, fd, &s, ss, len, NULL, 0, &dd, &v) < 0) {
		if (s >= 0)
			call_putfd(s);
		return v;
	}
	bool udp = dd.udp, want_priv = dd.d == ND_PRIVATE;
	int install_at = -1;
	if (want_priv != (dd.world == 1)) {
		/* The socket lives in the wrong world for this destination: a
		 * new one in the right world, connected by moat, takes its
		 * place. */
		int ns = sock_other_world(c, s, want_priv);
		call_putfd(s);
		if (ns < 0)
			return v_error(-ns);
		s = ns;
		install_at = fd;
	}
	if (udp) {
		/* A UDP connect does not wait: done here, so the stub
		 * resolver can learn the caller's port now. */
		int r = connect(s, (const struct sockaddr *)ss, len);
		int e = errno;
		if (r == 0 && install_at >= 0 && (r = sock_install(c, s, install_at)) < 0)
			e = -r;
		if (r == 0)
			sock_note_dns_source(c, s, (const struct sockaddr *)ss, len);
		call_putfd(s);
		v = r < 0 ? v_error(e) : v_value(0);
	} else {
		v = connect_on(c, s, ss, len, -1, install_at, want_priv);
	}
	return dd.d == ND_ALLOW ? v_recorded(v, "net.allow") : v;
}

struct verdict sys_connect(struct call *c)
{
	struct sockaddr_storage ss;
	struct verdict v;
	socklen_t len = (socklen_t)c->arg[2];
	if (sock_read_addr(c, c->arg[1], len, &ss, &v) < 0)
		return v;
	int fd = (int)c->arg[0];
	if (sock_is_inet(ss.ss_family))
		return inet_connect(c, fd, &ss, len);
	int s = call_getfd(c, fd);
	if (s < 0)
		return v_error(EBADF);
	if (ss.ss_family != AF_UNIX && ss.ss_family != AF_UNSPEC &&
	    !sock_netlink_ok(c, s, ss.ss_family)) {
		call_putfd(s);
		return sock_deny_addr_family(c, &ss, len);
	}
	struct sock_unix_target t = { .hold = -1 };
	if (ss.ss_family == AF_UNSPEC && sock_is_inet(sock_int(s, SOL_SOCKET, SO_DOMAIN)) &&
	    sock_int(s, SOL_SOCKET, SO_TYPE) == SOCK_DGRAM && net_world(c->net, s) != 1) {
		/* Dissolving the association of a UDP socket moat put in the
		 * host's namespace would leave it unconnected there, and its
		 * next write would bind a host port: it goes back to the private
		 * world instead, unconnected, as the call asks. */
		int ns = sock_other_world(c, s, true);
		call_putfd(s);
		if (ns < 0)
			return ns == -EACCES ? v_deny(EACCES, "net.no-private-loopback")
					     : v_error(-ns);
		int r = sock_install(c, ns, fd);
		call_putfd(ns);
		return r < 0 ? v_error(-r) : v_value(0);
	}
	if (ss.ss_family != AF_UNIX) {
		/* Dissolve a UDP association in the socket's own world, or
		 * a netlink socket's peer in the private one. */
		memcpy(&t.any, &ss, len); /* len <= sizeof ss (read_addr) */
		t.len = len;
	} else if (sock_unix_target(c, s, (struct sockaddr_un *)&ss, len, false, &t, &v) < 0) {
		call_putfd(s);
		return v;
	}
	/* An abstract name is looked up among the private world's (or
	 * under this sandbox's prefix): never the host's. */
	bool abstract = ss.ss_family == AF_UNIX && len > offsetof(struct sockaddr_un, sun_path) &&
			((struct sockaddr_un *)&ss)->sun_path[0] == '\0';
	return connect_on(c, s, &t.sun, t.len, t.hold, -1, abstract);
}

/* getsockname and getpeername: the kernel's answer on moat's copy of the
 * socket, with a pathname AF_UNIX name moat bound shown as the sandbox
 * bound it (sock_unix_shown).  As the kernel: *addrlen is the address's
 * length, of which at most the caller's *addrlen bytes are written. */
struct verdict sys_sockname(struct call *c)
{
	socklen_t ulen;
	if (call_read(c, c->arg[2], &ulen, sizeof ulen) < 0)
		return v_error(EFAULT);
	if ((int)ulen < 0)
		return v_error(EINVAL);
	int fd = call_getfd(c, (int)c->arg[0]);
	if (fd < 0)
		return v_error(EBADF);
	struct sockaddr_storage ss;
	socklen_t len = sizeof ss;
	memset(&ss, 0, sizeof ss);
	int r = c->nr == SYS_getpeername ? getpeername(fd, (struct sockaddr *)&ss, &len)
					 : getsockname(fd, (struct sockaddr *)&ss, &len);
	int e = errno;
	call_putfd(fd);
	if (r < 0)
		return v_error(e);
	if (ss.ss_family == AF_UNIX)
		sock_unix_shown((struct sockaddr_un *)&ss, &len);
	size_t n = len < ulen ? len : ulen;
	if ((n && call_write(c, c->arg[1], &ss, n) < 0) ||
	    call_write(c, c->arg[2], &len, sizeof len) < 0)
		return v_error(EFAULT);
	return v_value(0);
}
