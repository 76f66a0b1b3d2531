/* The network's jobs: connect and send off the loop (async.h). */
#include "net-stub/async.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "core/task.h"

void net_job_free(struct net_job *j)
{
	if (j->sock >= 0)
		call_putfd(j->sock);
	if (j->hold >= 0)
		call_putfd(j->hold);
	for (int i = 0; i < j->nrights; i++)
		call_putfd(j->rights[i]);
	free(j->data);
	free(j->job.pending.call);
	free(j);
}

static void release(struct job *job)
{
	net_job_free((struct net_job *)job);
}

static ssize_t run(struct job *job)
{
	struct net_job *j = (struct net_job *)job;
	if (j->op == NJ_CONNECT)
		return connect(j->sock, (struct sockaddr *)&j->addr, j->addrlen);
	struct iovec iov = { j->data, j->len };
	struct msghdr m = {
		.msg_name = j->addrlen ? &j->addr : NULL,
		.msg_namelen = j->addrlen,
		.msg_iov = &iov,
		.msg_iovlen = 1,
		.msg_control = j->ctllen ? j->ctl : NULL,
		.msg_controllen = j->ctllen,
	};
	return sendmsg(j->sock, &m, j->flags | MSG_NOSIGNAL);
}

static void finish(struct job *job)
{
	struct net_job *j = (struct net_job *)job;
	if (job->result < 0 && job->err == EPIPE && !(j->flags & MSG_NOSIGNAL) &&
	    task_is(job->tgid, job->tid)) /* not a caller gone meanwhile */
		syscall(SYS_tgkill, job->tgid, job->tid, SIGPIPE);
	if (j->op == NJ_CONNECT && j->install_at >= 0 &&
	    (job->result == 0 || job->err == EINPROGRESS)) {
		/* The socket of the other world takes the place of the
		 * sandbox's own only once it is connected. */
		int r = notif_install(job->notify_fd, job->id, j->sock, j->install_at,
				      j->install_flags);
		if (r < 0 && r != -ENOENT)
			job->result = -1, job->err = -r;
	}
	if (j->op == NJ_CONNECT && j->private_dest && job->err == ECONNREFUSED) {
		/* Nothing in the sandbox listens there, and the host's
		 * loopback was not tried: worth a line (a probe for a host
		 * service looks exactly like this). */
		job->pending.v.record = true;
		job->pending.v.rule = j->addr.ss_family == AF_UNIX ? "net.private-abstract"
								   : "net.private-loopback";
	}
}

struct net_job *net_job_new(struct call *c, enum net_op op, int sock)
{
	struct net_job *j = calloc(1, sizeof *j);
	if (!j)
		return NULL;
	job_init(&j->job, c);
	j->job.run = run;
	j->job.finish = finish;
	j->job.release = release;
	j->op = op;
	j->sock = sock;
	j->hold = -1;
	j->install_at = -1;
	return j;
}

int net_job_start(struct call *c, struct net_job *j)
{
	int r = job_start(&j->job);
	if (r == 0)
		c->pending = &j->job.pending;
	return r;
}
