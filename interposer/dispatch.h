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

/* Service one notification: run its handler, reply, audit. */
void dispatch(struct sandbox *sb, int notify_fd, struct seccomp_notif *n);

#endif
