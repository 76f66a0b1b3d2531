#include "net-stub/async.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "interposer/dispatch.h"

static int done_pipe[2] = { -1, -1 };

int net_jobs_init(void)
{
	if (done_pipe[0] >= 0)
		return 0;
	return pipe2(done_pipe, O_CLOEXEC | O_NONBLOCK) < 0 ? -errno : 0;
}

int net_jobs_fd(void)
{
	return done_pipe[0];
}

void net_job_free(struct net_job *j)
{
	if (j->sock >= 0)
		close(j->sock);
	if (j->hold >= 0)
		close(j->hold);
	for (int i = 0; i < j->nrights; i++)
		close(j->rights[i]);
	free(j->data);
	free(j->pending.call);
	free(j);
}

static void *run_job(void *arg)
{
	struct net_job *j = arg;
	/* This thread only: the peer reads these ids back (SO_PEERCRED,
	 * SCM_CREDENTIALS).  Raw syscalls, so no other thread changes. */
	if (j->drop) {
		syscall(SYS_setresgid, j->gid, j->gid, j->gid);
		syscall(SYS_setresuid, j->uid, j->uid, j->uid);
	}
	ssize_t r;
	if (j->op == NJ_OPEN) {
		r = openat(j->sock, j->name, j->open_flags | O_NOFOLLOW | O_CLOEXEC);
	} else if (j->op == NJ_CONNECT) {
		r = connect(j->sock, (struct sockaddr *)&j->addr, j->addrlen);
	} else {
		struct iovec iov = { j->data, j->len };
		struct msghdr m = {
			.msg_name = j->addrlen ? &j->addr : NULL,
			.msg_namelen = j->addrlen,
			.msg_iov = &iov,
			.msg_iovlen = 1,
			.msg_control = j->ctllen ? j->ctl : NULL,
			.msg_controllen = j->ctllen,
		};
		r = sendmsg(j->sock, &m, j->flags | MSG_NOSIGNAL);
	}
	j->result = r;
	j->err = r < 0 ? errno : 0;
	/* A pointer is smaller than PIPE_BUF: the write is atomic. */
	while (write(done_pipe[1], &j, sizeof j) < 0 && errno == EINTR)
		;
	return NULL;
}

int net_job_start(struct net_job *j)
{
	if (done_pipe[0] < 0)
		return -EAGAIN;
	pthread_attr_t a;
	pthread_attr_init(&a);
	pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
	pthread_attr_setstacksize(&a, 64 * 1024);
	pthread_t t;
	int r = pthread_create(&t, &a, run_job, j);
	pthread_attr_destroy(&a);
	return -r;
}

void net_jobs_complete(void)
{
	struct net_job *j;
	while (read(done_pipe[0], &j, sizeof j) == sizeof j) {
		if (j->result < 0 && j->err == EPIPE && !(j->flags & MSG_NOSIGNAL))
			syscall(SYS_tgkill, j->tgid, j->tid, SIGPIPE);
		if (j->op == NJ_CONNECT && j->install_at >= 0 &&
		    (j->result == 0 || j->err == EINPROGRESS)) {
			/* The socket of the other world takes the place of the
			 * sandbox's own only once it is connected. */
			int r = dispatch_install(j->notify_fd, j->id, j->sock, j->install_at,
						 j->install_flags);
			if (r < 0 && r != -ENOENT)
				j->result = -1, j->err = -r;
		}
		int64_t result = j->result < 0 ? -j->err : j->result;
		if (j->op == NJ_CONNECT && j->private_dest && j->err == ECONNREFUSED) {
			/* Nothing in the sandbox listens there, and the host's
			 * loopback was not tried: worth a line (a probe for a
			 * host service looks exactly like this). */
			j->pending.v.record = true;
			j->pending.v.rule = j->addr.ss_family == AF_UNIX ? "net.private-abstract"
									 : "net.private-loopback";
		}
		dispatch_done(&j->pending, result);
		if (j->op == NJ_OPEN && j->result >= 0) {
			dispatch_grant(j->notify_fd, j->id, (int)j->result, j->fd_flags);
			close((int)j->result);
		} else {
			dispatch_reply(j->notify_fd, j->id, j->result < 0 ? 0 : j->result,
				       j->result < 0 ? -j->err : 0);
		}
		net_job_free(j);
	}
}
