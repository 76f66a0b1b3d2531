/* Calls that may block, done off the event loop: connect, sends into a
 * full buffer, and opening a FIFO (which waits for the other end).
 *
 * A blocking connect (a listener's backlog full) or send (a receiver's
 * buffer full) performed by the supervisor itself would stop every other
 * sandbox process with it, and moat too.  Such a call becomes a job: a
 * short-lived thread with the sandbox's own ids performs it, and the loop
 * answers the notification when the job reports back. */
#ifndef MOAT_NET_ASYNC_H
#define MOAT_NET_ASYNC_H

#include <stdbool.h>
#include <pthread.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/un.h>

#include "interposer/call.h"

enum net_op { NJ_CONNECT, NJ_SEND, NJ_OPEN };

struct net_job {
	uint64_t id;            /* the notification to answer */
	int notify_fd;
	pid_t tgid, tid;        /* for SIGPIPE */
	enum net_op op;
	int sock;               /* supervisor's copy of the sandbox's socket (owned) */
	int hold;               /* keeps the decided target alive (owned), or -1 */
	struct sockaddr_storage addr;
	socklen_t addrlen;      /* 0: no address */
	int flags;              /* send flags */
	char *data;             /* send: owned copy of the data */
	size_t len;
	char ctl[4096];         /* send: control data, fds already translated */
	size_t ctllen;
	int rights[253];        /* send: fds the control data names (owned) */
	int nrights;
	char name[256];         /* open: the name below the directory fd in `sock` */
	bool reopen;            /* open: `hold` itself, through /proc/self/fd */
	int open_flags;         /* open: flags (without O_CLOEXEC) and whether */
	unsigned fd_flags;      /* the granted fd gets O_CLOEXEC */
	uid_t uid;              /* ids the thread takes (when moat is root) */
	gid_t gid;
	bool drop;
	ssize_t result;         /* filled by the thread */
	int err;
	int install_at;         /* connect: on success (or EINPROGRESS) install
				 * `sock` at this fd number of the caller, or -1 */
	unsigned install_flags;
	bool private_dest;      /* connect: to the private world's loopback */
	struct pending pending; /* the call, for its audit record */
	/* Owned by the job system: */
	pthread_t thread;
	pthread_mutex_t lock;   /* done and the interrupt are decided under it */
	bool done, interrupted;
	struct net_job *next;   /* the live jobs */
};

/* At most this many jobs at once: one more gets EAGAIN (a sandbox that
 * leaves blocked connects behind cannot exhaust moat's threads and fds). */
#define NET_JOBS_MAX 256

/* Create the completion pipe.  0 or -errno. */
int net_jobs_init(void);
/* The fd to poll for finished jobs. */
int net_jobs_fd(void);
/* Start `j` (owned by the job system from now on).  0, or -errno when no
 * thread could be made or NET_JOBS_MAX run already (the caller then still
 * owns `j`, and answers EAGAIN: never the blocking call itself). */
int net_job_start(struct net_job *j);
/* Answer every finished job's notification and free it. */
void net_jobs_complete(void);
/* Interrupt the jobs whose caller is gone or was interrupted (its
 * notification no longer valid): their blocking call returns EINTR.  True
 * while an interrupted job has not finished yet: sweep again soon. */
bool net_jobs_sweep(void);
/* Release what a job holds (for a job that was never started). */
void net_job_free(struct net_job *j);
/* Close moat's copy of a file the sandbox may share (a socket of its, an
 * fd it passed).  The close may be the last one, and the last close of a
 * socket waits while SO_LINGER holds unsent data, as long as the sandbox
 * chose: a socket is closed by a closer thread, never on the loop. */
void net_close(int fd);

#endif
