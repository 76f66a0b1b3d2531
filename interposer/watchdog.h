/* The watchdog: the wall-time limit and moat's own stop signals hold even
 * when the event loop is stuck in a call (docs/security.md, class 2).
 *
 * The loop must never block on an object the sandbox controls; this is
 * the backstop for a place that still could.  A thread that takes no
 * signal watches the loop's heartbeat (watchdog_busy/idle around each
 * wake-up).  When the loop owes an action — the wall-time deadline has
 * passed, a stop signal (SIGINT, SIGTERM, SIGHUP, SIGQUIT) is pending — and has been busy in one
 * call for a while, the watchdog interrupts that call (a signal to the thread at work, the loop's
 * or a serving thread, no SA_RESTART: the blocking call returns EINTR and the loop acts as
 * it would have).  If the loop is still stuck half a second later (an uninterruptible wait), the
 * watchdog ends the run itself: the sandbox's cgroups are killed and removed, and moat exits 125 —
 * every sandbox process dies with it (PTRACE_O_EXITKILL). */
#ifndef MOAT_WATCHDOG_H
#define MOAT_WATCHDOG_H

#include <stdbool.h>

struct sandbox;

/* Start watching (on the loop thread, before it takes the sandbox's
 * credentials: the watchdog keeps moat's own).  0 or -errno. */
int watchdog_start(struct sandbox *sb);
/* Stop it (the loop is over): once this returns the thread does nothing
 * more.  It is woken to leave, and never joined: no wait for it. */
void watchdog_stop(void);
/* The loop is about to wait (poll) / has woken up and is at work. */
void watchdog_idle(void);
void watchdog_busy(void);
/* What to do, from the watchdog's thread, just before it ends a stuck run
 * (write a report that says so): `msg` is its one line. */
void watchdog_last_words(void (*fn)(const char *msg));

#endif
