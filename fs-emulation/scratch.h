/* The run's own directories on the host: the scratch (the writable
 * layers, /tmp, /workspace, the quota tmpfs mounts) and the skeleton in
 * /dev/shm.  vfs_teardown removes them at the end of a run.  A moat that
 * ends without its teardown — the watchdog's last resort
 * (interposer/watchdog.c), a fatal signal (interposer/cgroup.c) — removes
 * them with scratch_abandon, from any thread or a signal handler: nothing
 * half-made is left behind but by SIGKILL. */
#ifndef MOAT_SCRATCH_H
#define MOAT_SCRATCH_H

#include <stdbool.h>

#define SCRATCH_MAX 4    /* directories held at once */
#define SCRATCH_DEPTH 64 /* how deep scratch_abandon walks */

/* Hold `dir` (absolute, made by this moat) as one of the run's
 * directories, until scratch_forget.  0, or -ENAMETOOLONG or -ENOSPC
 * (past SCRATCH_MAX): nothing held.  From the main thread only. */
int scratch_hold(const char *dir);
/* Forget `dir`: removed by the teardown (call it after the removal, so
 * that a signal during the teardown still finds it), or not moat's. */
void scratch_forget(const char *dir);
/* Remove every directory held, with async-signal-safe calls only (no
 * allocation, no stdio, no lock), never following a symbolic link: for a
 * moat about to end without its teardown.  Each directory is removed by
 * one caller only (the watchdog and a signal may both come).  Left: a
 * subtree deeper than SCRATCH_DEPTH, and one on another file system (but
 * a mount right below the top — the quotas' tmpfs, the --disk-limit
 * scratch itself — which is detached first, in moat's private mount
 * namespace).  Takes back this thread's capabilities (creds_caps_back);
 * its fsuid and fsgid must be moat's own already. */
void scratch_abandon(void);
/* Remove directory `dir` and all it holds, as scratch_abandon removes
 * one, from the main thread: true when it is gone (false: something deeper
 * than SCRATCH_DEPTH or on another file system is left). */
bool scratch_remove(const char *dir);

#endif
