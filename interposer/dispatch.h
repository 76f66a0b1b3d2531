#ifndef MOAT_DISPATCH_H
#define MOAT_DISPATCH_H

#include <linux/seccomp.h>
#include <stdint.h>

struct sandbox;

struct pending;
/* A pending call's job is done: write its audit record with `result` and
 * free the copy. */
void dispatch_done(struct sandbox *sb, struct pending *p, int64_t result);

/* Answer, audit and release every finished job (core/job.h). */
void dispatch_jobs_complete(struct sandbox *sb);

/* Service one notification: run its handler, reply, audit. */
void dispatch(struct sandbox *sb, int notify_fd, struct seccomp_notif *n);

#endif
