#include "net-stub/async.h"

#include <errno.h>
#include <stdio.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/stat.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <linux/seccomp.h>

#include "interposer/dispatch.h"

static int done_pipe[2] = { -1, -1 };
static struct net_job *live;
static unsigned nlive;

/* A job's blocking call is cut short by this signal (no SA_RESTART). */
static void on_interrupt(int sig)
{
	(void)sig;
}

int net_jobs_init(void)
{
	if (done_pipe[0] >= 0)
		return 0;
	struct sigaction sa = { .sa_handler = on_interrupt };
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGURG, &sa, NULL) < 0)
		return -errno;
	return pipe2(done_pipe, O_CLOEXEC | O_NONBLOCK) < 0 ? -errno : 0;
}

int net_jobs_fd(void)
{
	return done_pipe[0];
}

/* The closer: one thread that closes what the loop hands it (net_close),
 * through a non-blocking pipe.  A closer stuck on one socket fills the
 * pipe; the next close then gets a thread of its own. */
static int close_pipe[2] = { -1, -1 };

static void *closer(void *arg)
{
	(void)arg;
	int fd;
	while (read(close_pipe[0], &fd, sizeof fd) == sizeof fd)
		close(fd);
	return NULL;
}

/* Threads of their own for closes the closer could not take: at most
 * CLOSERS_MAX at once; past that the fd is kept open (a leak bounded by
 * moat's fd limit) rather than closed on the loop. */
#define CLOSERS_MAX 64
static _Atomic int closers;

static void *close_one(void *arg)
{
	close((int)(intptr_t)arg);
	closers--;
	return NULL;
}

/* A detached thread that takes no signal (moat's are the loop's). */
static int spawn(void *(*fn)(void *), void *arg)
{
	pthread_attr_t at;
	pthread_attr_init(&at);
	pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
	pthread_attr_setstacksize(&at, 64 * 1024);
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	pthread_t t;
	int r = pthread_create(&t, &at, fn, arg);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	pthread_attr_destroy(&at);
	return -r;
}

void net_close(int fd)
{
	struct stat st;
	if (fd < 0)
		return;
	if (fstat(fd, &st) == 0 && S_ISSOCK(st.st_mode)) {
		/* The read end blocks (the closer waits there); only the
		 * write end, the loop's, must not. */
		if (close_pipe[1] < 0 && pipe2(close_pipe, O_CLOEXEC) == 0 &&
		    (fcntl(close_pipe[1], F_SETFL, O_NONBLOCK) < 0 || spawn(closer, NULL) < 0)) {
			close(close_pipe[0]);
			close(close_pipe[1]);
			close_pipe[0] = close_pipe[1] = -1;
		}
		if (close_pipe[1] >= 0 && write(close_pipe[1], &fd, sizeof fd) == sizeof fd)
			return;
		if (closers >= CLOSERS_MAX)
			return; /* kept: see CLOSERS_MAX */
		closers++;
		if (spawn(close_one, (void *)(intptr_t)fd) == 0)
			return;
		closers--;
	}
	close(fd); /* not a socket, or no thread could be made */
}

void net_job_free(struct net_job *j)
{
	if (j->sock >= 0)
		net_close(j->sock);
	if (j->hold >= 0)
		net_close(j->hold);
	for (int i = 0; i < j->nrights; i++)
		net_close(j->rights[i]);
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
	pthread_mutex_lock(&j->lock);
	bool cancelled = j->interrupted;
	pthread_mutex_unlock(&j->lock);
	if (cancelled) {
		r = -1;
		errno = EINTR;
	} else if (j->op == NJ_OPEN && j->reopen) {
		char self[64];
		snprintf(self, sizeof self, "/proc/self/fd/%d", j->hold);
		r = open(self, (j->open_flags & ~O_NOFOLLOW) | O_CLOEXEC);
	} else if (j->op == NJ_OPEN) {
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
	/* From here on no interrupt may reach this thread (it may be gone
	 * by then): the loop checks done under the lock. */
	pthread_mutex_lock(&j->lock);
	j->done = true;
	pthread_mutex_unlock(&j->lock);
	/* A pointer is smaller than PIPE_BUF: the write is atomic. */
	while (write(done_pipe[1], &j, sizeof j) < 0 && errno == EINTR)
		;
	return NULL;
}

int net_job_start(struct net_job *j)
{
	if (done_pipe[0] < 0 || nlive >= NET_JOBS_MAX)
		return -EAGAIN;
	pthread_mutex_init(&j->lock, NULL);
	j->done = j->interrupted = false;
	pthread_attr_t a;
	pthread_attr_init(&a);
	pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
	pthread_attr_setstacksize(&a, 64 * 1024);
	/* Linked before the thread runs: it may finish at once. */
	j->next = live;
	live = j;
	nlive++;
	/* The thread takes no signal but its interrupt: a signal that ends
	 * moat is handled by the main thread, whose ids can become root's
	 * again (cgroup.c), not by a thread that dropped them for good. */
	sigset_t all, old;
	sigfillset(&all);
	sigdelset(&all, SIGURG);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	int r = pthread_create(&j->thread, &a, run_job, j);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	pthread_attr_destroy(&a);
	if (r) {
		live = j->next;
		nlive--;
		pthread_mutex_destroy(&j->lock);
	}
	return -r;
}

static void unlink_job(struct net_job *j)
{
	for (struct net_job **p = &live; *p; p = &(*p)->next)
		if (*p == j) {
			*p = j->next;
			nlive--;
			pthread_mutex_destroy(&j->lock);
			return;
		}
}

bool net_jobs_sweep(void)
{
	bool waiting = false;
	for (struct net_job *j = live; j; j = j->next) {
		uint64_t id = j->id;
		if (!j->interrupted && ioctl(j->notify_fd, SECCOMP_IOCTL_NOTIF_ID_VALID, &id) == 0)
			continue;
		/* Again at every sweep until it is done: a signal that landed
		 * before the call began to wait was lost (the thread checks
		 * `interrupted` just before its call, which narrows that). */
		pthread_mutex_lock(&j->lock);
		j->interrupted = true;
		if (!j->done) {
			pthread_kill(j->thread, SIGURG);
			waiting = true;
		}
		pthread_mutex_unlock(&j->lock);
	}
	return waiting;
}

void net_jobs_complete(void)
{
	struct net_job *j;
	while (read(done_pipe[0], &j, sizeof j) == sizeof j) {
		unlink_job(j);
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
