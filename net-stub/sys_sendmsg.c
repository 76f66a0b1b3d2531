/* The sends: sendto, sendmsg and sendmmsg (docs/network.md; the family's
 * overview is sys_socket.c's).
 *
 * A send is copied whole before anything is decided — its address, data
 * and control data — and performed by the supervisor on the socket of
 * the world its destination is in.  Control data passes only where moat
 * can vouch for it: SCM_RIGHTS naming the caller's own fds, and
 * SCM_CREDENTIALS with the caller's own identity.  A send that would
 * wait runs on a job (async.h), never on the loop. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>

#include "core/creds.h"
#include "core/task.h"
#include "net-stub/async.h"
#include "net-stub/net.h"
#include "net-stub/sock.h"
#include "syscall-table/handlers.h"

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
 * 0 with *s (owned) set, or -1 with the verdict and *s released (-1).
 * `ss` NULL: no address.
 * `data`: what is sent (a DNS question in it is named in the audit). */
static int send_target(struct call *c, int fd, struct sockaddr_storage *ss, socklen_t *len,
		       const void *data, size_t dlen, struct sock_unix_target *t, int *s,
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
		if (sock_unix_target(c, *s, (struct sockaddr_un *)ss, *len, false, t, v) < 0)
			goto fail;
		memcpy(ss, &t->sun, t->len);
		*len = t->len;
		return 0;
	}
	if (sock_netlink_ok(c, *s, ss->ss_family))
		return 0;
	if (!sock_is_inet(ss->ss_family)) {
		*v = sock_deny_addr_family(c, ss, *len);
		goto fail;
	}
	struct sock_dest dd;
	if (sock_decide_dest(c, fd, s, ss, *len, data, dlen, &dd, v) < 0)
		goto fail;
	bool udp = dd.udp, want_priv = dd.d == ND_PRIVATE;
	int world = dd.world;
	if (want_priv == (world == 1)) {
		if (host_udp_peer(*s, world, udp, ss, *len, v) < 0)
			goto fail;
		return 0;
	}
	if (!udp) {
		/* A stream socket sends to its peer whatever the address says
		 * (only MSG_FASTOPEN connects, which the kernel of the private
		 * world answers ENETUNREACH); one of the host world is
		 * connected to an allowed peer and may send to nothing else. */
		if (world == 1)
			return 0;
		*v = sock_deny_dest(c, ND_DENY_HOST, false);
		goto fail;
	}
	/* A datagram for the other world: the socket moves there. */
	int ns = sock_other_world(c, *s, want_priv);
	if (ns < 0) {
		*v = v_error(-ns);
		goto fail;
	}
	int r = sock_install(c, ns, fd);
	call_putfd(*s);
	*s = ns;
	if (r < 0) {
		*v = v_error(-r);
		goto fail;
	}
	if (host_udp_peer(*s, want_priv ? 1 : 0, udp, ss, *len, v) == 0)
		return 0;
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

/* A send to `ss` went out on the caller's socket `fd`: the stub resolver
 * learns which thread the socket's port is (sock_note_dns_source). */
static void note_sent(struct call *c, int fd, const struct sockaddr_storage *ss, socklen_t alen)
{
	if (!sock_is_inet(ss->ss_family))
		return;
	int s2 = call_getfd(c, fd);
	if (s2 >= 0) {
		sock_note_dns_source(c, s2, (const struct sockaddr *)ss, alen);
		call_putfd(s2);
	}
}

struct verdict sys_sendto(struct call *c)
{
	struct sockaddr_storage ss;
	struct verdict v;
	socklen_t alen = (socklen_t)c->arg[5];
	if (sock_read_addr(c, c->arg[4], alen, &ss, &v) < 0)
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
	struct sock_unix_target t = { .hold = -1 };
	int s;
	if (send_target(c, (int)c->arg[0], &ss, &alen, buf, len, &t, &s, &v) == 0) {
		struct iovec iov = { buf, len };
		struct msghdr m = { .msg_name = &ss,
				    .msg_namelen = alen,
				    .msg_iov = &iov,
				    .msg_iovlen = 1 };
		v = recorded(c, send_copy(c, s, &m, (int)c->arg[3], NULL, NULL));
		if (v.kind == V_VALUE)
			note_sent(c, (int)c->arg[0], &ss, alen);
	}
	free(buf);
	if (t.hold >= 0)
		close(t.hold);
	return v;
}

/* The data of message `m`, gathered from its iovecs into one malloc'd
 * buffer of *total bytes: at most SEND_MAX, a short send, as a full socket
 * buffer gives.  The buffer (the caller's), or NULL with the verdict. */
static char *gather(struct call *c, const struct msghdr *m, size_t *total, struct verdict *v)
{
	if (m->msg_iovlen > 1024) {
		*v = v_error(EMSGSIZE);
		return NULL;
	}
	struct iovec iov[1024];
	size_t n = m->msg_iovlen;
	if (n && call_read(c, (uint64_t)(uintptr_t)m->msg_iov, iov, n * sizeof iov[0]) < 0) {
		*v = v_error(EFAULT);
		return NULL;
	}
	size_t t = 0;
	for (size_t i = 0; i < n; i++)
		t += iov[i].iov_len < SEND_MAX ? iov[i].iov_len : SEND_MAX;
	if (t > SEND_MAX)
		t = SEND_MAX;
	char *data = malloc(t ? t : 1);
	if (!data) {
		*v = v_error(ENOMEM);
		return NULL;
	}
	size_t off = 0;
	for (size_t i = 0; i < n && off < t; i++) {
		size_t l = iov[i].iov_len < t - off ? iov[i].iov_len : t - off;
		if (l && call_read(c, (uint64_t)(uintptr_t)iov[i].iov_base, data + off, l) < 0) {
			free(data);
			*v = v_error(EFAULT);
			return NULL;
		}
		off += l;
	}
	*total = t;
	return data;
}

/* The control data of one message, copied, and the supervisor's copies of
 * the fds its SCM_RIGHTS name (owned, until a job takes them). */
struct control {
	char buf[4096];
	int fds[253];
	int nfds;
};

/* Check one control message (in ctl->buf) and put the supervisor's fds in
 * it: 0, or -1 with the verdict. */
static int take_cmsg(struct call *c, struct cmsghdr *cm, struct control *ctl, struct verdict *v)
{
	if (cm->cmsg_level != SOL_SOCKET) {
		/* IP_PKTINFO and friends could pick a source address or
		 * interface on the host's network. */
		snprintf(c->detail, sizeof c->detail, "control message level %d type %d",
			 cm->cmsg_level, cm->cmsg_type);
		*v = v_deny(EINVAL, "net.cmsg");
		return -1;
	}
	if (cm->cmsg_type == SCM_RIGHTS) {
		/* Only fds the caller holds: each is taken from its own
		 * table, so a foreign fd cannot be named. */
		int *fp = (int *)CMSG_DATA(cm);
		size_t k = (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (size_t i = 0; i < k; i++) {
			int f = call_getfd(c, fp[i]);
			if (f < 0 || ctl->nfds == 253) {
				if (f >= 0)
					call_putfd(f);
				snprintf(c->detail, sizeof c->detail,
					 "SCM_RIGHTS fd %d: not the caller's", fp[i]);
				*v = v_deny(EBADF, "net.foreign-fd");
				return -1;
			}
			ctl->fds[ctl->nfds++] = f;
			fp[i] = f;
		}
	} else if (cm->cmsg_type == SCM_CREDENTIALS) {
		/* The supervisor could claim anyone: only the caller's own
		 * identity may be sent. */
		struct ucred *uc = (struct ucred *)CMSG_DATA(cm);
		if (uc->pid != c->task->proc->tgid || uc->uid != c->creds->uid ||
		    uc->gid != c->creds->gid) {
			*v = v_deny(EPERM, "net.forged-credentials");
			return -1;
		}
	} else {
		snprintf(c->detail, sizeof c->detail, "control message type %d", cm->cmsg_type);
		*v = v_deny(EINVAL, "net.cmsg");
		return -1;
	}
	return 0;
}

/* Copy the control data of `m` into ctl (m->msg_control then points
 * there) and check each message: 0, or -1 with the verdict; ctl->fds
 * holds what was taken either way. */
static int take_control(struct call *c, struct msghdr *m, struct control *ctl, struct verdict *v)
{
	if (!m->msg_control || !m->msg_controllen) {
		m->msg_control = NULL;
		m->msg_controllen = 0;
		return 0;
	}
	if (m->msg_controllen > sizeof ctl->buf) {
		*v = v_error(ENOBUFS);
		return -1;
	}
	if (call_read(c, (uint64_t)(uintptr_t)m->msg_control, ctl->buf, m->msg_controllen) < 0) {
		*v = v_error(EFAULT);
		return -1;
	}
	m->msg_control = ctl->buf;
	for (struct cmsghdr *cm = CMSG_FIRSTHDR(m); cm; cm = CMSG_NXTHDR(m, cm))
		if (take_cmsg(c, cm, ctl, v) < 0)
			return -1;
	return 0;
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
		if (sock_read_addr(c, (uint64_t)(uintptr_t)m.msg_name, alen, &ss, &v) < 0)
			return v;
	}
	size_t total = 0;
	char *data = gather(c, &m, &total, &v);
	if (!data)
		return v;
	struct control ctl;
	ctl.nfds = 0;
	int s = -1;
	struct sock_unix_target t = { .hold = -1 };
	struct iovec one = { data, total };
	m.msg_iov = &one;
	m.msg_iovlen = 1;
	if (take_control(c, &m, &ctl, &v) < 0 ||
	    send_target(c, sockfd, named ? &ss : NULL, &alen, data, total, &t, &s, &v) < 0)
		goto out;
	m.msg_name = named ? &ss : NULL;
	m.msg_namelen = named ? alen : 0;
	/* sendmmsg cannot hand one message to a job (its result is a
	 * message count): it sends what fits now. */
	v = recorded(c, send_copy(c, s, &m, may_pend ? flags : flags | MSG_DONTWAIT, ctl.fds,
				  &ctl.nfds));
	if (v.kind == V_VALUE && named)
		note_sent(c, sockfd, &ss, alen);
out:
	for (int i = 0; i < ctl.nfds; i++)
		call_putfd(ctl.fds[i]);
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
