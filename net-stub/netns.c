/* The two worlds of the sandbox's sockets (see net.h): the private network
 * namespace, made at start when moat is root, and the host's. */
#include "net-stub/net.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>
#include <linux/capability.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "core/creds.h"

#ifndef SO_NETNS_COOKIE
#define SO_NETNS_COOKIE 71
#endif

static uint64_t cookie_of(int fd)
{
	uint64_t c = 0;
	socklen_t len = sizeof c;
	if (getsockopt(fd, SOL_SOCKET, SO_NETNS_COOKIE, &c, &len) < 0)
		return 0;
	return c;
}

/* The cookie of the namespace this thread is in now. */
static uint64_t here_cookie(void)
{
	int s = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (s < 0)
		return 0;
	uint64_t c = cookie_of(s);
	close(s);
	return c;
}

static int lo_up(void)
{
	int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (s < 0)
		return -1;
	struct ifreq ifr;
	memset(&ifr, 0, sizeof ifr);
	snprintf(ifr.ifr_name, sizeof ifr.ifr_name, "lo");
	int r = ioctl(s, SIOCGIFFLAGS, &ifr);
	if (r == 0) {
		ifr.ifr_flags |= IFF_UP | IFF_RUNNING;
		r = ioctl(s, SIOCSIFFLAGS, &ifr);
	}
	int e = errno;
	close(s);
	errno = e;
	return r;
}

static int dns_stub(void)
{
	int s = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (s < 0)
		return -1;
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(53) };
	inet_pton(AF_INET, NET_DNS_ADDR, &a.sin_addr);
	if (bind(s, (struct sockaddr *)&a, sizeof a) < 0) {
		int e = errno;
		close(s);
		errno = e;
		return -1;
	}
	return s;
}

/* ---- without root: a helper in a user and network namespace ----
 *
 * moat cannot enter a namespace it does not own with CAP_SYS_ADMIN, nor put
 * the sandbox in one, but a child of its own can make an unprivileged user
 * namespace with a network namespace in it, bring its `lo` up, and from
 * then on make sockets there on request and hand them over (SCM_RIGHTS).
 * Its first message is the stub resolver's socket (or why it failed).
 * Before serving it drops every capability, so the sockets it makes carry
 * no privilege (netlink checks its opener's), and it dies with moat. */

struct factory_req {
	int domain, type, proto;
};

static int send_fd(int chan, int err, int fd)
{
	char cbuf[CMSG_SPACE(sizeof(int))];
	struct iovec iov = { &err, sizeof err };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1 };
	if (fd >= 0) {
		m.msg_control = cbuf;
		m.msg_controllen = sizeof cbuf;
		struct cmsghdr *cm = CMSG_FIRSTHDR(&m);
		cm->cmsg_level = SOL_SOCKET;
		cm->cmsg_type = SCM_RIGHTS;
		cm->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(cm), &fd, sizeof fd);
	}
	return sendmsg(chan, &m, MSG_NOSIGNAL) < 0 ? -errno : 0;
}

/* The fd of a reply: >= 0, or -errno (the helper's, or the channel's). */
static int recv_fd(int chan)
{
	int err = 0;
	char cbuf[CMSG_SPACE(sizeof(int))];
	struct iovec iov = { &err, sizeof err };
	struct msghdr m = { .msg_iov = &iov,
			    .msg_iovlen = 1,
			    .msg_control = cbuf,
			    .msg_controllen = sizeof cbuf };
	ssize_t r = recvmsg(chan, &m, MSG_CMSG_CLOEXEC);
	if (r != sizeof err)
		return r < 0 ? -errno : -EPIPE;
	struct cmsghdr *cm = CMSG_FIRSTHDR(&m);
	int fd = -1;
	if (cm && cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_RIGHTS)
		memcpy(&fd, CMSG_DATA(cm), sizeof fd);
	if (err) {
		if (fd >= 0)
			close(fd);
		return -err;
	}
	return fd >= 0 ? fd : -EPROTO;
}

__attribute__((noreturn)) static void factory_main(int chan)
{
	int e = 0, dns = -1;
	if (unshare(CLONE_NEWUSER | CLONE_NEWNET) < 0 || lo_up() < 0 || (dns = dns_stub()) < 0)
		e = errno;
	send_fd(chan, e, dns);
	if (e)
		_exit(1);
	close(dns);
	struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct d[2] = { 0 };
	if (syscall(SYS_capset, &h, d) < 0)
		_exit(1);
	prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
	for (;;) {
		struct factory_req rq;
		if (recv(chan, &rq, sizeof rq, 0) != sizeof rq)
			_exit(0); /* moat is gone, or done */
		int s = socket(rq.domain, rq.type | SOCK_CLOEXEC, rq.proto);
		send_fd(chan, s < 0 ? errno : 0, s);
		if (s >= 0)
			close(s);
	}
}

static int factory_start(struct net *n, char *err, size_t errlen)
{
	int sv[2];
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0) {
		snprintf(err, errlen, "socketpair: %s", strerror(errno));
		return -1;
	}
	pid_t parent = getpid();
	pid_t pid = fork();
	if (pid < 0) {
		snprintf(err, errlen, "fork: %s", strerror(errno));
		close(sv[0]);
		close(sv[1]);
		return -1;
	}
	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() != parent)
			_exit(1);
		/* Out of moat's process group: a Ctrl-C or Ctrl-Z at the
		 * terminal is the program's (moat forwards it), not ours. */
		setpgid(0, 0);
		/* Nothing of moat's but the channel (fd 3) and 0-2. */
		if (dup2(sv[1], 3) < 0)
			_exit(1);
		syscall(SYS_close_range, 4, ~0U, 0);
		factory_main(3);
	}
	close(sv[1]);
	n->factory = sv[0];
	n->factory_pid = pid;
	int dns = recv_fd(n->factory);
	if (dns < 0) {
		snprintf(err, errlen,
			 "cannot make an unprivileged network namespace (%s: user "
			 "namespaces disabled?)",
			 strerror(-dns));
		net_teardown(n);
		return -1;
	}
	n->dns_fd = dns;
	fcntl(dns, F_SETFL, O_NONBLOCK);
	n->priv_cookie = cookie_of(dns);
	if (!n->priv_cookie || n->priv_cookie == n->host_cookie) {
		snprintf(err, errlen, "the helper's network namespace is not its own");
		net_teardown(n);
		return -1;
	}
	n->mode = NET_USERNS;
	return 0;
}

int net_setup(struct net *n, bool root, char *err, size_t errlen)
{
	n->host_ns = n->priv_ns = n->dns_fd = n->factory = -1;
	n->factory_pid = 0;
	n->mode = NET_NONE;
	n->host_cookie = here_cookie();
	if (!root)
		return factory_start(n, err, errlen);
	n->host_ns = open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
	if (n->host_ns < 0 || unshare(CLONE_NEWNET) < 0) {
		snprintf(err, errlen, "cannot make the sandbox's network namespace: %s",
			 strerror(errno));
		net_teardown(n);
		return -1;
	}
	/* This thread is in the private world until the setns below. */
	n->priv_ns = open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
	int ok = n->priv_ns >= 0 && lo_up() == 0 && (n->dns_fd = dns_stub()) >= 0;
	int e = errno;
	n->priv_cookie = here_cookie();
	if (setns(n->host_ns, CLONE_NEWNET) < 0) {
		/* moat itself would now live in the sandbox's world: stop. */
		snprintf(err, errlen, "cannot return to the host's network namespace: %s",
			 strerror(errno));
		net_teardown(n);
		return -1;
	}
	if (!ok || !n->priv_cookie || n->priv_cookie == n->host_cookie) {
		snprintf(err, errlen, "cannot set up the sandbox's loopback: %s", strerror(e));
		net_teardown(n);
		return -1;
	}
	n->mode = NET_NETNS;
	return 0;
}

void net_teardown(struct net *n)
{
	if (n->factory >= 0)
		close(n->factory); /* the helper's recv ends: it exits */
	if (n->factory_pid > 0) {
		kill(n->factory_pid, SIGKILL);
		waitpid(n->factory_pid, NULL, 0);
	}
	n->factory = -1;
	n->factory_pid = 0;
	if (n->dns_fd >= 0)
		close(n->dns_fd);
	if (n->priv_ns >= 0)
		close(n->priv_ns);
	if (n->host_ns >= 0)
		close(n->host_ns);
	n->dns_fd = n->priv_ns = n->host_ns = -1;
}

int net_enter_fd(const struct net *n)
{
	return n->mode == NET_NETNS ? n->priv_ns : -1;
}

int net_world(const struct net *n, int fd)
{
	uint64_t c = cookie_of(fd);
	if (!c)
		return -1;
	if (n->mode != NET_NONE && c == n->priv_cookie)
		return 1;
	return c == n->host_cookie ? 0 : -1;
}

int net_socket(struct net *n, const struct creds *cr, bool priv, int domain, int type, int proto)
{
	if (priv && n->mode == NET_NONE)
		return -EACCES;
	if (priv && n->mode == NET_USERNS) {
		struct factory_req rq = { domain, type & ~SOCK_CLOEXEC, proto };
		if (send(n->factory, &rq, sizeof rq, MSG_NOSIGNAL) != sizeof rq)
			return -EIO;
		int s = recv_fd(n->factory);
		return s == -EPIPE || s == -EPROTO ? -EIO : s;
	}
	if (priv) {
		creds_admin_begin(cr);
		int r = setns(n->priv_ns, CLONE_NEWNET);
		creds_admin_end(cr);
		if (r < 0)
			return -errno;
	}
	/* With the sandbox's ids and no capability: owner matches in the
	 * host's firewall see the sandbox's uid, not root, and a socket keeps
	 * its maker's credentials (netlink checks them). */
	creds_bare_begin(cr);
	int s = socket(domain, type | SOCK_CLOEXEC, proto);
	int e = errno;
	creds_identity_end(cr);
	if (priv) {
		creds_admin_begin(cr);
		int r = setns(n->host_ns, CLONE_NEWNET);
		creds_admin_end(cr);
		if (r < 0) {
			/* Every later host socket would be made in the private
			 * world: harmless (it reaches nothing), but say so. */
			fprintf(stderr, "moat: cannot return to the host's network namespace: %s\n",
				strerror(errno));
		}
	}
	return s < 0 ? -e : s;
}
