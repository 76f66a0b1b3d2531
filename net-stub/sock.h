/* Internals of the socket calls (docs/network.md), shared by their three
 * handler files: sys_socket.c (socket, bind, listen, options, and the
 * other world's socket that replaces one of the sandbox's), sys_connect.c
 * (connect and the decisions on destinations) and sys_sendmsg.c (the
 * sends, with their SCM_RIGHTS).  Not for use outside net-stub/. */
#ifndef MOAT_NET_SOCK_H
#define MOAT_NET_SOCK_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/socket.h>
#include <sys/un.h>

#include "core/call.h"
#include "net-stub/net.h"

static inline bool sock_is_inet(int family)
{
	return family == AF_INET || family == AF_INET6;
}

/* An int option of supervisor socket `s`, or -1 when it cannot be read. */
static inline int sock_int(int s, int level, int opt)
{
	int v = 0;
	socklen_t l = sizeof v;
	return getsockopt(s, level, opt, &v, &l) < 0 ? -1 : v;
}

/* ---- addresses and destinations (sys_connect.c) ---- */

/* Copy the sockaddr argument at `addr` (`len` bytes) into *ss once: what
 * is decided is this copy, whatever another thread writes after.  0, or
 * -1 with the verdict in *v. */
int sock_read_addr(struct call *c, uint64_t addr, socklen_t len, struct sockaddr_storage *ss,
		   struct verdict *v);

/* A sockaddr_un the supervisor can use for `sa` as the sandbox named it:
 * a path is walked and replaced by a /proc/self/fd link to the decided
 * inode (or its parent, for bind); an abstract name is kept when the
 * socket lives in the private world (whose abstract names are the
 * sandbox's alone), else it gets this sandbox's prefix.  `hold` keeps the
 * fd alive until the call is done. */
struct sock_unix_target {
	union {
		struct sockaddr_un sun;
		struct sockaddr_storage any; /* AF_UNSPEC, netlink: as copied */
	};
	socklen_t len;
	int hold;
};

/* Fill *out for the AF_UNIX address `sa` (`salen` bytes, as copied) and
 * the supervisor's copy `sock` of the caller's socket; `create`: for
 * bind (the name must not exist; its parent is held).  0 with out->hold
 * (-1, or an fd the caller closes when done), or -1 with the verdict in
 * *v and nothing held. */
int sock_unix_target(struct call *c, int sock, const struct sockaddr_un *sa, socklen_t salen,
		     bool create, struct sock_unix_target *out, struct verdict *v);
/* A pathname AF_UNIX address the kernel reported (`*len` bytes): moat's
 * name of a binding it made becomes the sandbox's own, as bound. */
void sock_unix_shown(struct sockaddr_un *sa, socklen_t *len);

/* Fill c->dest (and the detail) for an inet destination; `rule`: the
 * allow rule that matched it, or NULL. */
void sock_note_dest(struct call *c, const struct sockaddr *sa, socklen_t len,
		    const struct net_rule *rule);

/* What the decision on an inet destination found (sock_decide_dest). */
struct sock_dest {
	enum net_dest d; /* ND_ALLOW or ND_PRIVATE: the refusals are verdicts */
	int world;       /* the socket's world: 1 private, 0 host */
	bool udp;        /* a datagram socket */
};

/* The decision on inet address `ss` for the caller's socket `fd`, which
 * connect and the addressed sends share: the policy's answer (noted in
 * c->dest and the detail), the socket's world, and then a refusal, or the
 * summary's count of an allowed destination.  *s: the supervisor's copy
 * of the socket when the caller holds it already, else -1, and it is
 * taken here once the address is judged.  `data` (NULL: none) is what a
 * send carries: a DNS question in it is named in the audit.  0 with *out
 * filled, or -1 with the verdict in *v; either way *s (-1, or owned) is
 * the caller's to put. */
int sock_decide_dest(struct call *c, int fd, int *s, const struct sockaddr_storage *ss,
		     socklen_t len, const void *data, size_t dlen, struct sock_dest *out,
		     struct verdict *v);

/* The refusal of destination `d` (ND_DENY_HOST, ND_DENY_PORT, or
 * ND_PRIVATE without a private world), counted in the summary. */
struct verdict sock_deny_dest(struct call *c, enum net_dest d, bool udp);

/* May a netlink address be used on supervisor socket `s`?  Only on a
 * netlink socket moat made in the private world (sys_socket), where the
 * kernel it talks to knows lo alone. */
bool sock_netlink_ok(struct call *c, int s, int family);

/* The refusal of an address of a family moat does not serve. */
struct verdict sock_deny_addr_family(struct call *c, const struct sockaddr_storage *ss,
				     socklen_t len);

/* Socket `s` just connected or sent to `to`: when that is the stub
 * resolver, remember which thread its local port belongs to. */
void sock_note_dns_source(struct call *c, int s, const struct sockaddr *to, socklen_t len);

/* ---- the other world's socket (sys_socket.c) ---- */

/* A socket like supervisor socket `s` (its domain, type, protocol and
 * options) in the private (`priv`) or host world, made with the sandbox's
 * ids.  The new fd (owned by the caller), or -errno. */
int sock_other_world(struct call *c, int s, bool priv);
/* Put supervisor socket `n` at the caller's fd number `fd` (with the
 * caller's FD_CLOEXEC of that fd); `n` stays the caller's.  0 or -errno. */
int sock_install(struct call *c, int n, int fd);
/* O_CLOEXEC when the caller's fd `fd` has FD_CLOEXEC (its fdinfo), else 0. */
unsigned sock_fd_cloexec(struct call *c, int fd);

#endif
