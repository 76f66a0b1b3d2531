#ifndef MOAT_DISPATCH_H
#define MOAT_DISPATCH_H

#include <linux/seccomp.h>
#include <stdbool.h>
#include <stdint.h>

#include "core/call.h"

struct sandbox;

struct pending;
/* A pending call's job is done: write its audit record with `result` and
 * free the copy. */
void dispatch_done(struct sandbox *sb, struct pending *p, int64_t result);

/* Answer, audit and release every finished job (core/job.h). */
void dispatch_jobs_complete(struct sandbox *sb);

/* Service one notification: run its handler, reply, audit. */
void dispatch(struct sandbox *sb, int notify_fd, struct seccomp_notif *n);
/* The same in two steps, for a serving thread with a call of its own
 * (interposer/notify.c).  Without the supervisor lock: read the call's
 * first path argument into c (what its handler reads first).  Then under
 * the lock: run the handler, audit; an answer by value or error (most
 * calls; not a CONTINUE) is left in *later, for the thread to send once the lock is down
 * (true), any other answer is given here (false). */
void dispatch_prepare(struct call *c, const struct seccomp_notif *n);
bool dispatch_call(struct sandbox *sb, struct call *c, int notify_fd, const struct seccomp_notif *n,
		   struct seccomp_notif_resp *later);

struct task;
/* Service a call that arrived at a ptrace stop (execve/execveat's
 * SECCOMP_RET_TRACE) of thread `t` (known, with its process), made at `ip`
 * with the stack at `sp`: run its handler, count and audit it, and return
 * the verdict without answering anything — the ptrace side turns it into
 * registers.  V_EXEC's plan lives here until the next dispatch_stop;
 * V_CONTINUE when the call is none of the table's to serve at a stop
 * (leave it as it is); otherwise an error or denial to fail it with. */
struct verdict dispatch_stop(struct sandbox *sb, struct task *t, long nr, const uint64_t args[6],
			     uint64_t ip, uint64_t sp);

#endif
