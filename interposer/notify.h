/* The serving threads and the supervisor lock.
 *
 * Threads block in SECCOMP_IOCTL_NOTIF_RECV and serve each call as it
 * arrives (one syscall a call fewer than a poll and a RECV): one while the
 * calls come from one task at a time, one per CPU (up to four) while the
 * calls of several tasks interleave.  The loop's thread keeps everything
 * else: ptrace stops (it is the tracer), signals, jobs' answers, the DNS
 * stub, the output relay and the limits.  All take turns under one lock,
 * so everything below them (the task table, the view, the registry, the
 * audit log) still sees one supervisor at a time; a serving thread
 * receives, reads the call's path and sends an answer by value outside
 * it.  Design and the tid argument: docs/architecture.md ("Serving
 * threads, one lock") and docs/security.md class 4. */
#ifndef MOAT_NOTIFY_H
#define MOAT_NOTIFY_H

#include <stdbool.h>

struct sandbox;

/* Make the first serving thread ahead of the listener (thread creation
 * costs ~0.3 ms here: moat makes it while the first process sets itself
 * up).  It waits for notify_start, then takes sb's credentials; its
 * signal mask is the caller's.  0, or -errno. */
int notify_prepare(struct sandbox *sb);
/* Start serving sb's notifications (sb->notify_fd) on a thread of their
 * own, made now if notify_prepare did not (the caller's signal mask is
 * the thread's, and the others'); more start when calls interleave.  0,
 * or -errno: then the loop serves them itself (notify_running() is
 * false). */
int notify_start(struct sandbox *sb);
bool notify_running(void);
/* Stop the threads and wait for them; not holding the lock. */
void notify_stop(void);
/* The supervisor lock, taken for every piece of work and dropped for
 * every wait; it also tells the watchdog who is at work (watchdog.h). */
void supervisor_lock(void);
void supervisor_unlock(void);
/* The loop released a sandbox pid (a wait that reaped an exit): a call
 * received before it is checked once more before it is served. */
void notify_pid_released(void);

#endif
