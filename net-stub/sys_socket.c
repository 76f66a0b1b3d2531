/* Sockets: deny by default.  Only AF_UNIX exists in the sandbox; its path
 * names are walked in the virtual filesystem and its abstract names live
 * in a namespace private to this sandbox. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "fs-emulation/fs.h"
#include "net-stub/async.h"
#include "interposer/sandbox.h"
#include "interposer/task.h"
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
	return deny_family(c, (int)c->arg[0]);
}

struct verdict sys_socketpair(struct call *c)
{
	return deny_family(c, (int)c->arg[0]);
}

/* A sockaddr the supervisor can use for `sa` as the sandbox named it:
 * a path is walked and replaced by a /proc/self/fd link to the decided
 * inode (or its parent, for bind); an abstract name gets this sandbox's
 * prefix.  `hold` keeps the fd alive until the call is done. */
struct unix_target {
	struct sockaddr_un sun;
	socklen_t len;
	int hold;
};

static int unix_target(struct call *c, const struct sockaddr_un *sa, socklen_t salen, bool create,
		       struct unix_target *out, struct verdict *v)
{
	out->hold = -1;
	memset(&out->sun, 0, sizeof out->sun);
	out->sun.sun_family = AF_UNIX;
	size_t plen = salen - offsetof(struct sockaddr_un, sun_path);
	if (salen <= offsetof(struct sockaddr_un, sun_path)) {
		/* autobind (bind with only the family) */
		out->len = salen;
		return 0;
	}
	if (sa->sun_path[0] == '\0') {
		char name[sizeof sa->sun_path];
		size_t nlen = plen - 1;
		memcpy(name, sa->sun_path + 1, nlen);
		int n = snprintf(out->sun.sun_path + 1, sizeof out->sun.sun_path - 1, "moat-%s/",
				 c->sb->id);
		if ((size_t)n + 1 + nlen > sizeof out->sun.sun_path) {
			*v = v_error(EINVAL);
			return -1;
		}
		memcpy(out->sun.sun_path + 1 + n, name, nlen);
		out->len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + (size_t)n + nlen);
		snprintf(c->detail, sizeof c->detail, "@%.*s", (int)nlen, name);
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
		} else if ((r = vfs_prepare(c->sb->vfs, &p, VC_CREATE)) < 0) {
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

/* Read the sockaddr argument and decide where it may go.  0 with *out
 * ready, or -1 with the verdict in *v. */
static int read_target(struct call *c, uint64_t addr, socklen_t len, bool create,
		       struct unix_target *out, struct verdict *v)
{
	struct sockaddr_storage ss;
	if (len > sizeof ss || (int)len < (int)sizeof(sa_family_t)) {
		*v = v_error(EINVAL);
		return -1;
	}
	if (call_read(c, addr, &ss, len) < 0) {
		*v = v_error(EFAULT);
		return -1;
	}
	if (ss.ss_family == AF_UNSPEC && !create) {
		out->hold = -1;
		memcpy(&out->sun, &ss, len);
		out->len = len;
		return 0;
	}
	if (ss.ss_family != AF_UNIX) {
		char d[200];
		sc_decode_sockaddr(d, sizeof d, &ss, len);
		snprintf(c->detail, sizeof c->detail, "%s", d);
		*v = v_deny(ss.ss_family == AF_INET || ss.ss_family == AF_INET6 ? ECONNREFUSED
										 : EAFNOSUPPORT,
			    "net.deny-by-default");
		return -1;
	}
	return unix_target(c, (struct sockaddr_un *)&ss, len, create, out, v);
}

static bool blocking(int fd)
{
	int fl = fcntl(fd, F_GETFL);
	return fl >= 0 && !(fl & O_NONBLOCK);
}

static struct net_job *new_job(struct call *c, enum net_op op, int sock)
{
	struct net_job *j = calloc(1, sizeof *j);
	if (!j)
		return NULL;
	j->id = c->id;
	j->notify_fd = c->notify_fd;
	j->tgid = c->task->proc->tgid;
	j->tid = c->tid;
	j->op = op;
	j->sock = sock;
	j->hold = -1;
	j->uid = c->sb->uid;
	j->gid = c->sb->gid;
	j->drop = c->sb->as_root;
	return j;
}

struct verdict sys_connect(struct call *c)
{
	struct unix_target t;
	struct verdict v;
	if (read_target(c, c->arg[1], (socklen_t)c->arg[2], false, &t, &v) < 0)
		return v;
	int s = call_getfd(c, (int)c->arg[0]);
	struct net_job *j = s >= 0 ? new_job(c, NJ_CONNECT, s) : NULL;
	if (j) {
		/* A connect can wait for ever (a full backlog), and whether it
		 * blocks is a flag another sandbox thread can flip at any time:
		 * a job always does it, so the loop serves everyone meanwhile. */
		j->hold = t.hold;
		j->addr = t.sun;
		j->addrlen = t.len;
		if (net_job_start(j) == 0)
			return v_pending();
		j->sock = j->hold = -1; /* no thread: do it here after all */
		net_job_free(j);
	}
	if (s < 0)
		v = v_error(EBADF);
	else {
		/* Connect the sandbox's own socket (the same open file), so a
		 * thread rewriting the sockaddr now changes nothing — with the
		 * sandbox's ids, which the peer reads back as SO_PEERCRED. */
		creds_identity_begin(c->sb);
		int r = connect(s, (struct sockaddr *)&t.sun, t.len);
		int e = errno;
		creds_identity_end(c->sb);
		v = r < 0 ? v_error(e) : v_value(0);
		close(s);
	}
	if (t.hold >= 0)
		close(t.hold);
	return v;
}

struct verdict sys_bind(struct call *c)
{
	struct unix_target t;
	struct verdict v;
	if (read_target(c, c->arg[1], (socklen_t)c->arg[2], true, &t, &v) < 0)
		return v;
	int s = call_getfd(c, (int)c->arg[0]);
	if (s < 0)
		v = v_error(EBADF);
	else {
		mode_t old = umask(c->task->proc->fs->umask);
		int r = bind(s, (struct sockaddr *)&t.sun, t.len);
		v = r < 0 ? v_error(errno) : v_value(0);
		umask(old);
		close(s);
	}
	if (t.hold >= 0)
		close(t.hold);
	return v;
}

#define SEND_MAX (256 * 1024)

/* Send on the sandbox's socket with copied data and a decided address. */
/* Send on the sandbox's socket with copied data (one iovec) and a decided
 * address.  `rights`/`*nrights`: the supervisor fds the control data names;
 * a job that takes the send over takes them too (*nrights becomes 0). */
static struct verdict send_copy(struct call *c, int sockfd, struct msghdr *m, int flags,
				int *rights, int *nrights)
{
	int s = call_getfd(c, sockfd);
	if (s < 0)
		return v_error(EBADF);
	/* SCM_CREDENTIALS (explicit, or implicit for SO_PASSCRED receivers)
	 * carry the sender's ids: the sandbox's, not the supervisor's.  Tried
	 * without waiting first: a full buffer must not stop the loop. */
	creds_identity_begin(c->sb);
	ssize_t r = sendmsg(s, m, flags | MSG_NOSIGNAL | MSG_DONTWAIT);
	int e = errno;
	creds_identity_end(c->sb);
	if (r < 0 && (e == EAGAIN || e == EWOULDBLOCK) && !(flags & MSG_DONTWAIT) && blocking(s) &&
	    m->msg_controllen <= sizeof(((struct net_job *)0)->ctl)) {
		struct net_job *j = new_job(c, NJ_SEND, s);
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
			if (net_job_start(j) == 0) {
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
	close(s);
	if (r < 0 && e == EPIPE && !(flags & MSG_NOSIGNAL))
		syscall(SYS_tgkill, c->task->proc->tgid, c->tid, SIGPIPE);
	return r < 0 ? v_error(e) : v_value(r);
}

struct verdict sys_sendto(struct call *c)
{
	struct unix_target t;
	struct verdict v;
	if (read_target(c, c->arg[4], (socklen_t)c->arg[5], false, &t, &v) < 0)
		return v;
	size_t len = (size_t)c->arg[2];
	if (len > SEND_MAX)
		len = SEND_MAX; /* a short send, as a full socket buffer gives */
	char *buf = malloc(len ? len : 1);
	if (!buf)
		v = v_error(ENOMEM);
	else if (len && call_read(c, c->arg[1], buf, len) < 0)
		v = v_error(EFAULT);
	else {
		struct iovec iov = { buf, len };
		struct msghdr m = { .msg_name = &t.sun, .msg_namelen = t.len, .msg_iov = &iov, .msg_iovlen = 1 };
		v = send_copy(c, (int)c->arg[0], &m, (int)c->arg[3], NULL, NULL);
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
	struct unix_target t = { .hold = -1 };
	if (m.msg_name && m.msg_namelen) {
		if (read_target(c, (uint64_t)(uintptr_t)m.msg_name, m.msg_namelen, false, &t, &v) < 0)
			return v;
		m.msg_name = &t.sun;
		m.msg_namelen = t.len;
	} else {
		m.msg_name = NULL;
		m.msg_namelen = 0;
	}
	if (m.msg_iovlen > 1024) {
		v = v_error(EMSGSIZE);
		goto out_t;
	}
	struct iovec iov[1024];
	size_t n = m.msg_iovlen;
	if (n && call_read(c, (uint64_t)(uintptr_t)m.msg_iov, iov, n * sizeof iov[0]) < 0) {
		v = v_error(EFAULT);
		goto out_t;
	}
	size_t total = 0;
	for (size_t i = 0; i < n; i++)
		total += iov[i].iov_len < SEND_MAX ? iov[i].iov_len : SEND_MAX;
	if (total > SEND_MAX)
		total = SEND_MAX;
	char *data = malloc(total ? total : 1);
	char ctl[4096];
	int fds[253];
	int nfds = 0;
	if (!data) {
		v = v_error(ENOMEM);
		goto out_t;
	}
	size_t off = 0;
	for (size_t i = 0; i < n && off < total; i++) {
		size_t l = iov[i].iov_len < total - off ? iov[i].iov_len : total - off;
		if (l && call_read(c, (uint64_t)(uintptr_t)iov[i].iov_base, data + off, l) < 0) {
			v = v_error(EFAULT);
			goto out_d;
		}
		off += l;
	}
	struct iovec one = { data, total };
	m.msg_iov = &one;
	m.msg_iovlen = 1;
	if (m.msg_control && m.msg_controllen) {
		if (m.msg_controllen > sizeof ctl) {
			v = v_error(ENOBUFS);
			goto out_d;
		}
		if (call_read(c, (uint64_t)(uintptr_t)m.msg_control, ctl, m.msg_controllen) < 0) {
			v = v_error(EFAULT);
			goto out_d;
		}
		m.msg_control = ctl;
		for (struct cmsghdr *cm = CMSG_FIRSTHDR(&m); cm; cm = CMSG_NXTHDR(&m, cm)) {
			if (cm->cmsg_level != SOL_SOCKET) {
				v = v_error(EINVAL);
				goto out_d;
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
							close(f);
						v = v_error(EBADF);
						goto out_d;
					}
					fds[nfds++] = f;
					fp[i] = f;
				}
			} else if (cm->cmsg_type == SCM_CREDENTIALS) {
				/* The supervisor could claim anyone: only the
				 * caller's own identity may be sent. */
				struct ucred *uc = (struct ucred *)CMSG_DATA(cm);
				if (uc->pid != c->task->proc->tgid || uc->uid != c->sb->uid ||
				    uc->gid != c->sb->gid) {
					v = v_deny(EPERM, "net.forged-credentials");
					goto out_d;
				}
			} else {
				v = v_error(EINVAL);
				goto out_d;
			}
		}
	} else {
		m.msg_control = NULL;
		m.msg_controllen = 0;
	}
	/* sendmmsg cannot hand one message to a job (its result is a
	 * message count): it sends what fits now. */
	v = send_copy(c, sockfd, &m, may_pend ? flags : flags | MSG_DONTWAIT, fds, &nfds);
out_d:
	for (int i = 0; i < nfds; i++)
		close(fds[i]);
	free(data);
out_t:
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
	return v_value(sent);
}
