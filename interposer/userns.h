/* The sandbox's user namespace (docs/design.md "Root inside"): a range of
 * host ids of its own, and the maps that give it to the first process. */
#ifndef MOAT_USERNS_H
#define MOAT_USERNS_H

#include <sys/types.h>

/* The first host id of USERNS_SLOTS ranges of CREDS_NS_RANGE ids each
 * (0x70000000 to 0x73ffffff): above any id a distribution gives its users
 * or /etc/subuid its ranges, above systemd's range for containers
 * (0x00080000 to 0x6fffffff, which `systemd-nspawn --private-users=pick`
 * takes from) and below its foreign range (0x7ffe0000). */
#define USERNS_BASE 0x70000000u
#define USERNS_SLOTS 1024

/* Take a range no other live moat holds: a write lock on byte `slot` of
 * USERNS_LOCK, held (an open file description of moat's, close-on-exec)
 * until moat exits.  The range's first host id in *base.  0, or -errno
 * (EAGAIN: every range is taken). */
#define USERNS_LOCK "/run/moat/userns-slots"
int userns_take(uid_t *base);
/* Map sandbox ids 0..CREDS_NS_RANGE-1 of process `pid` (in its new user
 * namespace, not yet mapped) to host ids base.. .  0, or -errno. */
int userns_map(pid_t pid, uid_t base);

#endif
