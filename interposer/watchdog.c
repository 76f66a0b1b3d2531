/* The watchdog (see watchdog.h). */
#include "interposer/watchdog.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "core/hurry.h"
#include "interposer/cgroup.h"
#include "interposer/limits.h"
#include "interposer/sandbox.h"

#define STUCK_NS (200ULL * 1000 * 1000)    /* busy this long with an action due: interrupt */
#define KILL_BUSY_NS (50ULL * 1000 * 1000) /* busy this long with the SIGKILL due: cgroup.kill */
#define GIVE_UP_NS (500ULL * 1000 * 1000)  /* still stuck this long after: end the run */

static struct {
	struct sandbox *sb;
	pthread_t thread;
	/* The thread at work (the loop's or the notification thread,
	 * notify.h), the one a kick interrupts. */
	_Atomic pthread_t worker;
	bool running;
	int stop[2];                 /* a byte here ends the watch */
	_Atomic uint64_t busy_since; /* 0: the loop waits in poll */
	void (*last_words)(const char *msg);
} wd = { .stop = { -1, -1 } };

/* Cuts the loop's blocking call short: installed without SA_RESTART. */
static void on_kick(int sig)
{
	(void)sig;
}

void watchdog_idle(void)
{
	atomic_store_explicit(&wd.busy_since, 0, memory_order_relaxed);
	hurry_set(false);
}

void watchdog_last_words(void (*fn)(const char *msg))
{
	wd.last_words = fn;
}

void watchdog_busy(void)
{
	atomic_store_explicit(&wd.worker, pthread_self(), memory_order_relaxed);
	atomic_store_explicit(&wd.busy_since, limits_now(), memory_order_relaxed);
}

/* Does the loop owe an action now?  Read from another thread: values the
 * loop writes once (t0) or that only ever move forward, read without a
 * lock; a stale read delays the decision by one tick. */
static bool owed(const struct sandbox *sb, uint64_t now)
{
	uint64_t t0 = __atomic_load_n(&sb->res.t0_ns, __ATOMIC_RELAXED);
	if (sb->lim.wall_s > 0 && t0 && now >= t0 + (uint64_t)(sb->lim.wall_s * 1e9))
		return true;
	if (__atomic_load_n(&sb->res.stopping, __ATOMIC_RELAXED) &&
	    now >= __atomic_load_n(&sb->res.kill_at_ns, __ATOMIC_RELAXED))
		return true;
	/* A stop signal waits in the signalfd the loop should read. */
	sigset_t pend;
	if (sigpending(&pend) == 0 &&
	    (sigismember(&pend, SIGINT) == 1 || sigismember(&pend, SIGTERM) == 1 ||
	     sigismember(&pend, SIGHUP) == 1 || sigismember(&pend, SIGQUIT) == 1))
		return true;
	return false;
}

/* The last resort, from this thread: only async-signal-safe calls. */
static void give_up(uint64_t stuck)
{
	char msg[200];
	int n = snprintf(
		msg, sizeof msg,
		"moat: the supervisor was stuck in one call for %.1f s with a limit or a signal "
		"due; the sandbox was killed and the run ended there\n",
		(double)stuck / 1e9);
	if (n > 0 && write(2, msg, (size_t)n) < 0) {
		/* nothing more to say it with */
	}
	cgroup_abandon();
	if (wd.last_words)
		wd.last_words(msg);
	_exit(125); /* every tracee dies with moat: PTRACE_O_EXITKILL */
}

/* Is the sandbox's SIGKILL due: the grace after a stop, or after the
 * wall-time deadline the loop may not have seen? */
static bool kill_due(const struct sandbox *sb, uint64_t now)
{
	uint64_t grace = (uint64_t)(sb->lim.grace_s * 1e9);
	uint64_t t0 = __atomic_load_n(&sb->res.t0_ns, __ATOMIC_RELAXED);
	if (sb->lim.wall_s > 0 && t0 && now >= t0 + (uint64_t)(sb->lim.wall_s * 1e9) + grace)
		return true;
	return __atomic_load_n(&sb->res.stopping, __ATOMIC_RELAXED) &&
	       now >= __atomic_load_n(&sb->res.kill_at_ns, __ATOMIC_RELAXED);
}

static void *watch(void *arg)
{
	(void)arg;
	uint64_t kicked_busy = 0, kicked_at = 0;
	bool killed = false;
	struct pollfd pfd = { wd.stop[0], POLLIN, 0 };
	for (;;) {
		if (poll(&pfd, 1, 100) > 0)
			break;
		uint64_t now = limits_now();
		uint64_t b = atomic_load_explicit(&wd.busy_since, memory_order_relaxed);
		if (!b || now < b) {
			kicked_busy = 0;
			continue;
		}
		uint64_t stuck = now - b;
		/* A loop busy in one long call (a synthetic file of a huge
		 * process) when the sandbox's SIGKILL is due: the kernel kills
		 * it now (cgroup.kill), not when that call is done. */
		if (stuck >= KILL_BUSY_NS && kill_due(wd.sb, now)) {
			hurry_set(true);
			if (!killed)
				killed = cgroup_kill_async();
		}
		if (stuck < KILL_BUSY_NS || !owed(wd.sb, now))
			continue;
		hurry_set(true);
		if (stuck < STUCK_NS)
			continue;
		if (kicked_busy == b && now - kicked_at >= GIVE_UP_NS)
			give_up(stuck);
		if (kicked_busy != b) {
			kicked_busy = b;
			kicked_at = now;
		}
		/* Again each tick: a call may be restarted, or catch the
		 * signal between checks. */
		pthread_kill(atomic_load_explicit(&wd.worker, memory_order_relaxed), SIGURG);
	}
	return NULL;
}

int watchdog_start(struct sandbox *sb)
{
	if (wd.running)
		return 0;
	struct sigaction sa = { .sa_handler = on_kick };
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGURG, &sa, NULL) < 0 || pipe2(wd.stop, O_CLOEXEC) < 0)
		return -errno;
	wd.sb = sb;
	watchdog_busy();
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old); /* the new thread takes no signal */
	int r = pthread_create(&wd.thread, NULL, watch, NULL);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (r) {
		close(wd.stop[0]);
		close(wd.stop[1]);
		wd.stop[0] = wd.stop[1] = -1;
		return -r;
	}
	wd.running = true;
	return 0;
}

void watchdog_stop(void)
{
	if (!wd.running)
		return;
	if (write(wd.stop[1], "x", 1) < 0) {
		/* the pipe is ours: cannot fail but for a bug */
	}
	pthread_join(wd.thread, NULL);
	close(wd.stop[0]);
	close(wd.stop[1]);
	wd.stop[0] = wd.stop[1] = -1;
	wd.running = false;
}
