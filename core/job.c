/* Jobs: a thread per blocking call, answered by the loop (job.h). */
#include "core/job.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/seccomp.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "core/task.h"

static int done_pipe[2] = { -1, -1 };
static struct job *live;
static unsigned nlive;

/* A job's blocking call is cut short by this signal (no SA_RESTART). */
static void on_interrupt(int sig)
{
	(void)sig;
}

int jobs_init(void)
{
	if (done_pipe[0] >= 0)
		return 0;
	struct sigaction sa = { .sa_handler = on_interrupt };
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGURG, &sa, NULL) < 0)
		return -errno;
	return pipe2(done_pipe, O_CLOEXEC | O_NONBLOCK) < 0 ? -errno : 0;
}

int jobs_fd(void)
{
	return done_pipe[0];
}

void job_init(struct job *j, const struct call *c)
{
	j->id = c->id;
	j->notify_fd = c->notify_fd;
	j->tgid = c->task && c->task->proc ? c->task->proc->tgid : 0;
	j->tid = c->tid;
	j->creds = *c->creds;
}

static void *run_job(void *arg)
{
	struct job *j = arg;
	/* This thread only: the peer reads these ids back (SO_PEERCRED,
	 * SCM_CREDENTIALS). */
	creds_drop_thread(&j->creds);
	ssize_t r;
	pthread_mutex_lock(&j->lock);
	bool cancelled = j->interrupted;
	pthread_mutex_unlock(&j->lock);
	if (cancelled) {
		r = -1;
		errno = EINTR;
	} else {
		r = j->run(j);
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

int job_start(struct job *j)
{
	if (done_pipe[0] < 0 || nlive >= JOBS_MAX)
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

static void unlink_job(struct job *j)
{
	for (struct job **p = &live; *p; p = &(*p)->next)
		if (*p == j) {
			*p = j->next;
			nlive--;
			pthread_mutex_destroy(&j->lock);
			return;
		}
}

bool jobs_sweep(void)
{
	bool waiting = false;
	for (struct job *j = live; j; j = j->next) {
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

struct job *job_next_done(void)
{
	struct job *j;
	if (read(done_pipe[0], &j, sizeof j) != sizeof j)
		return NULL;
	unlink_job(j);
	return j;
}
