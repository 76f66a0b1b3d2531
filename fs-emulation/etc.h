/* The synthetic /etc files: what a sandbox needs to know about its users,
 * its name and its (absent) network, generated from the view instead of
 * copied from the host, whose accounts and resolvers are none of its
 * business.  Not wired into the view here: the /etc layer seeds itself
 * from etc_generate(). */
#ifndef MOAT_ETC_H
#define MOAT_ETC_H

#include <stddef.h>

struct vfs;


/* The names etc_generate() makes ("passwd", "group", "hostname", "hosts",
 * "resolv.conf", "nsswitch.conf", "pip.conf"), NULL-terminated.  A name
 * whose content comes out empty is not made (pip.conf, unless the sandbox
 * has no egress and the host no pip.conf of its own). */
extern const char *const etc_files[];

/* Write the content of /etc/`name` for view `v` into buf, NUL-terminated.
 * Returns the byte count (without the NUL), -ENOENT for a name it does not
 * make, -ENOSPC when buf has no room for count + 1 bytes.  The sandbox user is named
 * "sandbox" (uid/gid v->uid/v->gid, home /workspace, shell /bin/sh)
 * unless it is root. */
int etc_generate(const struct vfs *v, const char *name, char *buf, size_t len);

#endif
