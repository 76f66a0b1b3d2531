/* Jobs: calls that may block, done off the event loop.
 *
 * A blocking call the supervisor made itself (a connect into a full
 * backlog, a send into a full buffer, the open of a FIFO that waits for
 * its other end) would stop every other sandbox process with it, and moat
 * too.  Such a call becomes a job: a short-lived thread with the sandbox's
 * own ids performs it, and the loop answers the notification when the job
 * reports back.  The family that makes a job embeds `struct job` first in
 * its own struct and gives the three functions below. */
#ifndef MOAT_JOB_H
#define MOAT_JOB_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "core/call.h"
#include "core/creds.h"

struct job {
	uint64_t id; /* the notification to answer */
	int notify_fd;
	pid_t tgid, tid;    /* the caller */
	struct creds creds; /* ids the thread takes for good (when moat is root) */
	/* The blocking call, on the job's thread: a value or -1 with errno. */
	ssize_t (*run)(struct job *j);
	/* On the loop once it ended, before the reply and the record: may
	 * change result/err and pending.v (NULL: nothing to do). */
	void (*finish)(struct job *j);
	/* Frees the job and whatever it holds. */
	void (*release)(struct job *j);
	bool grant;        /* a result >= 0 is a fd of moat's: granted */
	unsigned fd_flags; /* with these flags (O_CLOEXEC or 0) */
	ssize_t result;    /* filled by the thread */
	int err;
	struct pending pending; /* the call, for its audit record */
	/* Owned by the job system: */
	pthread_t thread;
	pthread_mutex_t lock; /* done and the interrupt are decided under it */
	bool done, interrupted;
	struct job *next; /* the live jobs */
};

/* At most this many jobs at once: one more gets EAGAIN (a sandbox that
 * leaves blocked calls behind cannot exhaust moat's threads and fds). */
#define JOBS_MAX 256

/* Fill the caller's part of `j` from call `c`: the notification, the
 * caller, the ids. */
void job_init(struct job *j, const struct call *c);
/* Create the completion pipe.  0 or -errno. */
int jobs_init(void);
/* The fd to poll for finished jobs. */
int jobs_fd(void);
/* Start `j` (owned by the job system from now on).  0, or -errno when no
 * thread could be made or JOBS_MAX run already (the caller then still
 * owns `j`, and answers EAGAIN: never the blocking call itself). */
int job_start(struct job *j);
/* A finished job, taken off the live list (the caller finishes, answers
 * and releases it), or NULL when none is waiting. */
struct job *job_next_done(void);
/* Interrupt the jobs whose caller is gone or was interrupted (its
 * notification no longer valid): their blocking call returns EINTR.  True
 * while an interrupted job has not finished yet: sweep again soon. */
bool jobs_sweep(void);

#endif
