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

#include "interposer/sandbox.h"

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

int net_setup(struct net *n, bool root, char *err, size_t errlen)
{
	n->host_ns = n->priv_ns = n->dns_fd = -1;
	n->mode = NET_NONE;
	n->host_cookie = here_cookie();
	if (!root)
		return 0;
	n->host_ns = open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
	if (n->host_ns < 0 || unshare(CLONE_NEWNET) < 0) {
		snprintf(err, errlen, "cannot make the sandbox's network namespace: %s", strerror(errno));
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
	if (n->dns_fd >= 0)
		close(n->dns_fd);
	if (n->priv_ns >= 0)
		close(n->priv_ns);
	if (n->host_ns >= 0)
		close(n->host_ns);
	n->dns_fd = n->priv_ns = n->host_ns = -1;
}

int net_enter(const struct net *n)
{
	if (n->mode != NET_NETNS)
		return 0;
	return setns(n->priv_ns, CLONE_NEWNET);
}

int net_world(const struct net *n, int fd)
{
	uint64_t c = cookie_of(fd);
	if (!c)
		return -1;
	if (n->mode == NET_NETNS && c == n->priv_cookie)
		return 1;
	return c == n->host_cookie ? 0 : -1;
}

int net_socket(struct net *n, struct sandbox *sb, bool priv, int domain, int type, int proto)
{
	if (priv && n->mode != NET_NETNS)
		return -EACCES;
	if (priv) {
		creds_admin_begin(sb);
		int r = setns(n->priv_ns, CLONE_NEWNET);
		creds_admin_end(sb);
		if (r < 0)
			return -errno;
	}
	/* With the sandbox's ids: owner matches in the host's firewall see
	 * the sandbox's uid, not root. */
	creds_identity_begin(sb);
	int s = socket(domain, type | SOCK_CLOEXEC, proto);
	int e = errno;
	creds_identity_end(sb);
	if (priv) {
		creds_admin_begin(sb);
		int r = setns(n->host_ns, CLONE_NEWNET);
		creds_admin_end(sb);
		if (r < 0) {
			/* Every later host socket would be made in the private
			 * world: harmless (it reaches nothing), but say so. */
			fprintf(stderr, "moat: cannot return to the host's network namespace: %s\n",
				strerror(errno));
		}
	}
	return s < 0 ? -e : s;
}
