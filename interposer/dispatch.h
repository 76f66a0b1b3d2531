#ifndef MOAT_DISPATCH_H
#define MOAT_DISPATCH_H

#include <linux/seccomp.h>

struct sandbox;

/* Service one notification: run its handler, reply, audit. */
void dispatch(struct sandbox *sb, int notify_fd, struct seccomp_notif *n);

#endif
