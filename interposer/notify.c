/* The serving threads and the supervisor lock (notify.h). */
#include "interposer/notify.h"

#include <errno.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include "core/creds.h"
#include "interposer/dispatch.h"
#include "interposer/sandbox.h"
#include "interposer/watchdog.h"

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

#define SERVERS_MAX 4   /* threads serving calls, at most */
#define WINDOW 64       /* calls a decision to widen or narrow looks at */
#define WIDE_SWITCHES 8 /* callers changing this often in a window: widen */

static struct {
	pthread_t thread[SERVERS_MAX];
	int started; /* threads running (the first: the loop's, at start) */
	int servers; /* at most this many: one per CPU */
	struct sandbox *sb;
	_Atomic bool stop;
	_Atomic bool go; /* the listener is there: serve (notify_start) */
	/* Pids the loop released so far.  A call received while it moved
	 * may come from a task that died and was reaped after the kernel
	 * handed the call over: its tid could name another process by now. */
	_Atomic uint64_t released;
	/* The other threads take calls only while calls of several tasks
	 * interleave: one caller's calls, served by turns on two CPUs, would
	 * each wake a thread on the other CPU.  Otherwise they wait on `park`,
	 * not in RECV. */
	_Atomic bool wide;
	_Atomic int last_tid;
	_Atomic unsigned seen, switches;
	pthread_mutex_t park_lock;
	pthread_cond_t park;
} nt = { .park_lock = PTHREAD_MUTEX_INITIALIZER, .park = PTHREAD_COND_INITIALIZER };

void supervisor_lock(void)
{
	pthread_mutex_lock(&lock);
	watchdog_busy();
}

void supervisor_unlock(void)
{
	watchdog_idle();
	pthread_mutex_unlock(&lock);
}

void notify_pid_released(void)
{
	atomic_fetch_add_explicit(&nt.released, 1, memory_order_relaxed);
}

bool notify_running(void)
{
	return nt.started > 0;
}

/* Does the call still stand?  Only asked when a pid was released between
 * the RECV and the lock: a valid id means its task has not left the
 * syscall, so it is no zombie, so it was not reaped, and it cannot be
 * while this thread holds the lock. */
static bool still_held(const struct sandbox *sb, uint64_t since, uint64_t id)
{
	/* Without a killable wait a signal may end a received call, and its
	 * thread may then exec: de_thread frees its tid with no reap. */
	if (sb->recv_killable && atomic_load_explicit(&nt.released, memory_order_relaxed) == since)
		return true;
	return ioctl(sb->notify_fd, SECCOMP_IOCTL_NOTIF_ID_VALID, &id) == 0;
}

static void *serve(void *arg);

/* Each thread's own call (large: ~20 KB), made before the thread. */
static struct call *calls[SERVERS_MAX];

/* Start one more serving thread: 0, or -errno.  Holding park_lock. */
static int start_one(void)
{
	int i = nt.started;
	if (i >= nt.servers || atomic_load(&nt.stop))
		return -EAGAIN;
	if (!calls[i] && !(calls[i] = calloc(1, sizeof *calls[i])))
		return -ENOMEM;
	int r = pthread_create(&nt.thread[i], NULL, serve, (void *)(intptr_t)i);
	if (r)
		return -r;
	nt.started++;
	return 0;
}

/* Widen to every CPU or narrow to the first thread, as the last window
 * of calls says.  Threads are started the first time (with this thread's
 * credentials and mask: the sandbox's, between calls).  Narrowed, each
 * other thread parks after the call it is waiting for: no kick, which
 * could land in a handler's wait. */
static void set_wide(bool on)
{
	if (atomic_load(&nt.wide) == on)
		return;
	pthread_mutex_lock(&nt.park_lock);
	atomic_store(&nt.wide, on);
	if (on) {
		while (start_one() == 0)
			;
		pthread_cond_broadcast(&nt.park);
	}
	pthread_mutex_unlock(&nt.park_lock);
}

/* Count a call of `tid` into the window; decide at its end. */
static void note_caller(int tid)
{
	if (atomic_exchange(&nt.last_tid, tid) != tid)
		atomic_fetch_add(&nt.switches, 1);
	if (atomic_fetch_add(&nt.seen, 1) + 1 < WINDOW)
		return;
	unsigned sw = atomic_exchange(&nt.switches, 0);
	atomic_store(&nt.seen, 0);
	set_wide(sw >= WIDE_SWITCHES);
}

/* A thread past the first waits here while the calls do not interleave. */
static void park_while_narrow(void)
{
	pthread_mutex_lock(&nt.park_lock);
	while (!atomic_load(&nt.wide) && !atomic_load(&nt.stop))
		pthread_cond_wait(&nt.park, &nt.park_lock);
	pthread_mutex_unlock(&nt.park_lock);
}

/* After a RECV's ENOENT: wait until a call comes, or, once no task holds
 * the filter (POLLHUP: for good), until notify_stop.  A RECV would return
 * at once again, and the thread would spin through the run's teardown. */
static void wait_for_calls(const struct sandbox *sb)
{
	struct pollfd p = { .fd = sb->notify_fd, .events = POLLIN };
	if (poll(&p, 1, -1) < 0 || !(p.revents & (POLLHUP | POLLERR | POLLNVAL)))
		return; /* a call, or a kick (EINTR) */
	pthread_mutex_lock(&nt.park_lock);
	while (!atomic_load(&nt.stop))
		pthread_cond_wait(&nt.park, &nt.park_lock);
	pthread_mutex_unlock(&nt.park_lock);
}

/* The memory a serving thread's first call touches, touched: its call,
 * its malloc arena, the stack its handlers' frames take (a walk's
 * paths). */
__attribute__((noinline)) static void warm_up(struct call *c)
{
	volatile char stack[96 * 1024];
	for (size_t i = 0; i < sizeof stack; i += 4096)
		stack[i] = 0;
	memset(c, 0, sizeof *c);
	free(malloc(1));
}

/* One serving thread (`arg`: its number).  Outside the lock: the RECV,
 * the read of the call's path and the answer by value; under it:
 * everything that looks at moat's state.  A tid read outside the lock is
 * checked under it: the pid counter not moved since the RECV means no
 * task was reaped meanwhile, so the read went to the caller (a zombie has
 * no memory to read, a tid reaped is in the count). */
static void *serve(void *arg)
{
	int self = (int)(intptr_t)arg;
	struct sandbox *sb = nt.sb;
	struct call *c = calls[self];
	/* The first thread is made before the listener exists, with moat's
	 * credentials (notify_prepare): it waits for it, then takes the
	 * sandbox's, which the others are started with.  Meanwhile it takes
	 * the page faults its first call would (~13 us each here). */
	if (self == 0) /* before the first call: now, or at worst in it */
		warm_up(c);
	pthread_mutex_lock(&nt.park_lock);
	while (!atomic_load(&nt.go) && !atomic_load(&nt.stop))
		pthread_cond_wait(&nt.park, &nt.park_lock);
	pthread_mutex_unlock(&nt.park_lock);
	if (self == 0)
		creds_sandbox(&sb->creds);
	while (!atomic_load_explicit(&nt.stop, memory_order_relaxed)) {
		if (self > 0 && !atomic_load(&nt.wide)) {
			park_while_narrow();
			continue;
		}
		uint64_t since = atomic_load_explicit(&nt.released, memory_order_relaxed);
		struct seccomp_notif n;
		memset(&n, 0, sizeof n);
		if (ioctl(sb->notify_fd, SECCOMP_IOCTL_NOTIF_RECV, &n) < 0) {
			/* EINTR: the watchdog's kick or notify_stop's.  ENOENT:
			 * the caller died between the wake-up and the copy, or
			 * no task holds the filter any more (the sandbox is
			 * gone), when every RECV returns at once. Anything else
			 * (none is known): try again shortly, never leave the
			 * calls without a server. */
			if (errno == ENOENT)
				wait_for_calls(sb);
			else if (errno != EINTR) {
				struct timespec t = { 0, 1000 * 1000 };
				nanosleep(&t, NULL);
			}
			continue;
		}
		if (nt.servers > 1)
			note_caller((int)n.pid);
		dispatch_prepare(c, &n);
		struct seccomp_notif_resp later;
		bool answer = false;
		supervisor_lock();
		if (still_held(sb, since, n.id))
			answer = dispatch_call(sb, c, sb->notify_fd, &n, &later);
		supervisor_unlock();
		/* by id: a caller gone meanwhile makes it ENOENT, nothing more */
		if (answer)
			ioctl(sb->notify_fd, SECCOMP_IOCTL_NOTIF_SEND, &later);
	}
	return NULL;
}

/* Interrupts the thread's RECV: installed without SA_RESTART. */
static void on_wake(int sig)
{
	(void)sig;
}

int notify_prepare(struct sandbox *sb)
{
	if (nt.started)
		return 0;
	struct sigaction sa = { .sa_handler = on_wake };
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGURG, &sa, NULL) < 0)
		return -errno;
	atomic_store(&nt.stop, false);
	atomic_store(&nt.go, false);
	atomic_store(&nt.wide, false);
	nt.sb = sb;
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	nt.servers = cpus < 1 ? 1 : cpus > SERVERS_MAX ? SERVERS_MAX : (int)cpus;
	pthread_mutex_lock(&nt.park_lock);
	int r = start_one();
	pthread_mutex_unlock(&nt.park_lock);
	return r;
}

int notify_start(struct sandbox *sb)
{
	int r = notify_prepare(sb);
	if (r < 0)
		return r;
	pthread_mutex_lock(&nt.park_lock);
	atomic_store(&nt.go, true);
	pthread_cond_broadcast(&nt.park);
	pthread_mutex_unlock(&nt.park_lock);
	return 0;
}

void notify_stop(void)
{
	pthread_mutex_lock(&nt.park_lock);
	atomic_store(&nt.stop, true);
	pthread_cond_broadcast(&nt.park);
	int started = nt.started;
	pthread_mutex_unlock(&nt.park_lock);
	for (int i = 0; i < started; i++)
		/* A kick may land just before the thread enters its RECV:
		 * kick again until it is gone. */
		for (;;) {
			pthread_kill(nt.thread[i], SIGURG);
			struct timespec t;
			clock_gettime(CLOCK_REALTIME, &t);
			t.tv_nsec += 2 * 1000 * 1000;
			if (t.tv_nsec >= 1000000000) {
				t.tv_sec++;
				t.tv_nsec -= 1000000000;
			}
			if (pthread_timedjoin_np(nt.thread[i], NULL, &t) != ETIMEDOUT)
				break;
		}
	nt.started = 0;
}
