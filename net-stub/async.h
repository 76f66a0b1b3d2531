/* The network's jobs (core/job.h): a connect into a full backlog or to a
 * silent host, a send into a full buffer.  Whether such a call blocks is
 * a flag another sandbox thread can flip at any time, so it is never made
 * on the loop. */
#ifndef MOAT_NET_ASYNC_H
#define MOAT_NET_ASYNC_H

#include <stdbool.h>
#include <sys/socket.h>
#include <sys/types.h>

#include "core/call.h"
#include "core/job.h"

enum net_op { NJ_CONNECT, NJ_SEND };

struct net_job {
	struct job job; /* first: the job system's part */
	enum net_op op;
	int sock; /* supervisor's copy of the sandbox's socket (owned) */
	int hold; /* keeps the decided target alive (owned), or -1 */
	struct sockaddr_storage addr;
	socklen_t addrlen; /* 0: no address */
	int flags;         /* send flags */
	char *data;        /* send: owned copy of the data */
	size_t len;
	char ctl[4096]; /* send: control data, fds already translated */
	size_t ctllen;
	int rights[253]; /* send: fds the control data names (owned) */
	int nrights;
	int install_at; /* connect: on success (or EINPROGRESS) install
			 * `sock` at this fd number of the caller, or -1 */
	unsigned install_flags;
	bool private_dest; /* connect: to the private world's loopback */
};

/* A new job for call `c` on socket `sock` (owned by the job once made).
 * NULL when out of memory (the caller still owns `sock`). */
struct net_job *net_job_new(struct call *c, enum net_op op, int sock);
/* Start it: 0 and c->pending set (answer V_PENDING), or -errno and the
 * caller still owns the job (net_job_free it and answer EAGAIN). */
int net_job_start(struct call *c, struct net_job *j);
/* Release what a job holds, and the job. */
void net_job_free(struct net_job *j);

#endif
