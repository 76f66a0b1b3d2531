#ifndef MOAT_DISPATCH_H
#define MOAT_DISPATCH_H

#include <linux/seccomp.h>
#include <stdint.h>

struct sandbox;

/* Answer notification `id` later (a finished job): value, or error < 0. */
void dispatch_reply(int notify_fd, uint64_t id, int64_t val, int error);

/* Answer notification `id` later with a new fd: a copy of `fd` (which the
 * caller still owns) is installed with fd_flags (O_CLOEXEC or 0). */
void dispatch_grant(int notify_fd, uint64_t id, int fd, unsigned fd_flags);

/* Install a copy of `fd` (the caller still owns it) at fd number `at` of
 * the caller of notification `id`, replacing what was there (as dup2), with
 * fd_flags.  The call is not answered.  `at`, or -errno. */
int dispatch_install(int notify_fd, uint64_t id, int fd, int at, unsigned fd_flags);

struct pending;
/* A pending call's job is done: write its audit record with `result` and
 * free the copy. */
void dispatch_done(struct pending *p, int64_t result);

/* Service one notification: run its handler, reply, audit. */
void dispatch(struct sandbox *sb, int notify_fd, struct seccomp_notif *n);

#endif
