/* The watchdog (see watchdog.h). */
#include "interposer/watchdog.h"

#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "core/hurry.h"
#include "fs-emulation/scratch.h"
#include "interposer/cgroup.h"
#include "interposer/limits.h"
#include "interposer/sandbox.h"

#define STUCK_NS (200ULL * 1000 * 1000)    /* busy this long with an action due: interrupt */
#define KILL_BUSY_NS (50ULL * 1000 * 1000) /* busy this long with the SIGKILL due: cgroup.kill */
#define GIVE_UP_NS (500ULL * 1000 * 1000)  /* still stuck this long after: end the run */

/* The thread's stack: it only polls, reads the loop's state and, at the
 * last resort, formats one line (give_up, last_words).  glibc's default
 * of 8 MiB is reserved for nothing. */
#define WATCH_STACK (64 * 1024)
#define TICK_NS (100 * 1000 * 1000)

/* The thread is never joined: joining means waiting for it to wake up,
 * see the stop and exit, up to 3 ms at the end of every run on a quiet
 * VM.  It acts only inside a tick, under `lock`, and only while `watch`
 * is its own: once watchdog_stop has taken the lock and moved it on, the
 * thread touches nothing but these two before it exits.  Both are
 * static: they outlive it.  It sleeps on `watch` (a futex): the stop
 * wakes it, so that it leaves while moat tears down; asleep at moat's
 * exit, it would hold the exit until scheduled, as the join did. */
static struct {
	struct sandbox *sb;
	/* The thread at work (the loop's or a serving thread,
	 * notify.h), the one a kick interrupts. */
	_Atomic pthread_t worker;
	bool running; /* the loop's own view: started and not stopped */
	pthread_mutex_t lock;
	unsigned watch;              /* under lock: the watch in force (a number) */
	_Atomic uint64_t busy_since; /* 0: the loop waits in poll */
	void (*last_words)(const char *msg);
} wd = { .lock = PTHREAD_MUTEX_INITIALIZER };

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
	scratch_abandon(); /* the loop is stuck: no teardown will come */
	_exit(125);        /* every tracee dies with moat: PTRACE_O_EXITKILL */
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

/* What the watch keeps between its ticks. */
struct watch {
	uint64_t kicked_busy, kicked_at; /* the busy period last kicked, and when */
	bool killed;                     /* cgroup.kill written */
};

/* One look at the loop (every 100 ms): under wd.lock, the loop running. */
static void tick(struct watch *w)
{
	uint64_t now = limits_now();
	uint64_t b = atomic_load_explicit(&wd.busy_since, memory_order_relaxed);
	if (!b || now < b) {
		w->kicked_busy = 0;
		return;
	}
	uint64_t stuck = now - b;
	/* A loop busy in one long call (a synthetic file of a huge process)
	 * when the sandbox's SIGKILL is due: the kernel kills it now
	 * (cgroup.kill), not when that call is done. */
	if (stuck >= KILL_BUSY_NS && kill_due(wd.sb, now)) {
		hurry_set(true);
		if (!w->killed)
			w->killed = cgroup_kill_async();
	}
	if (stuck < KILL_BUSY_NS || !owed(wd.sb, now))
		return;
	hurry_set(true);
	if (stuck < STUCK_NS)
		return;
	if (w->kicked_busy == b && now - w->kicked_at >= GIVE_UP_NS)
		give_up(stuck);
	if (w->kicked_busy != b) {
		w->kicked_busy = b;
		w->kicked_at = now;
	}
	/* Again each tick: a call may be restarted, or catch the signal
	 * between checks. */
	pthread_kill(atomic_load_explicit(&wd.worker, memory_order_relaxed), SIGURG);
}

/* The thread of watch number `arg`. */
static void *watch(void *arg)
{
	unsigned mine = (unsigned)(uintptr_t)arg;
	struct watch w = { 0 };
	for (;;) {
		struct timespec ts = { 0, TICK_NS };
		syscall(SYS_futex, &wd.watch, FUTEX_WAIT_PRIVATE, mine, &ts, NULL, 0);
		pthread_mutex_lock(&wd.lock);
		bool over = wd.watch != mine;
		if (!over)
			tick(&w);
		pthread_mutex_unlock(&wd.lock);
		if (over)
			return NULL;
	}
}

int watchdog_start(struct sandbox *sb)
{
	if (wd.running)
		return 0;
	struct sigaction sa = { .sa_handler = on_kick };
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGURG, &sa, NULL) < 0)
		return -errno;
	wd.sb = sb;
	watchdog_busy();
	pthread_mutex_lock(&wd.lock);
	unsigned mine = ++wd.watch; /* a thread of an earlier watch leaves */
	pthread_mutex_unlock(&wd.lock);
	pthread_attr_t attr;
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, WATCH_STACK);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old); /* the new thread takes no signal */
	pthread_t t;
	int r = pthread_create(&t, &attr, watch, (void *)(uintptr_t)mine);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	pthread_attr_destroy(&attr);
	if (r)
		return -r;
	wd.running = true;
	return 0;
}

void watchdog_stop(void)
{
	if (!wd.running)
		return;
	/* Waits only for a tick under way (microseconds; give_up ends moat
	 * from there). */
	pthread_mutex_lock(&wd.lock);
	wd.watch++; /* none is in force: the thread leaves */
	pthread_mutex_unlock(&wd.lock);
	syscall(SYS_futex, &wd.watch, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
	wd.running = false;
}
