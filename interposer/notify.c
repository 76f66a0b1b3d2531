/* The notification thread and the supervisor lock (notify.h). */
#include "interposer/notify.h"

#include <errno.h>
#include <linux/seccomp.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>

#include "interposer/dispatch.h"
#include "interposer/sandbox.h"
#include "interposer/watchdog.h"

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static struct {
	pthread_t thread;
	bool running;
	_Atomic bool stop;
	/* Pids the loop released so far.  A call received while it moved
	 * may come from a task that died and was reaped after the kernel
	 * handed the call over: its tid could name another process by now. */
	_Atomic uint64_t released;
} nt;

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
	return nt.running;
}

/* Does the call still stand?  Only asked when a pid was released between
 * the RECV and the lock: a valid id means its task has not left the
 * syscall, so it is no zombie, so it was not reaped, and it cannot be
 * while this thread holds the lock. */
static bool still_held(const struct sandbox *sb, uint64_t since, uint64_t id)
{
	if (atomic_load_explicit(&nt.released, memory_order_relaxed) == since)
		return true;
	return ioctl(sb->notify_fd, SECCOMP_IOCTL_NOTIF_ID_VALID, &id) == 0;
}

static void *serve(void *arg)
{
	struct sandbox *sb = arg;
	while (!atomic_load_explicit(&nt.stop, memory_order_relaxed)) {
		uint64_t since = atomic_load_explicit(&nt.released, memory_order_relaxed);
		struct seccomp_notif n;
		memset(&n, 0, sizeof n);
		if (ioctl(sb->notify_fd, SECCOMP_IOCTL_NOTIF_RECV, &n) < 0) {
			/* EINTR: the watchdog's kick or notify_stop's; ENOENT:
			 * the caller died between the wake-up and the copy. */
			if (errno == EINTR || errno == ENOENT)
				continue;
			break;
		}
		supervisor_lock();
		if (still_held(sb, since, n.id))
			dispatch(sb, sb->notify_fd, &n);
		supervisor_unlock();
	}
	return NULL;
}

/* Interrupts the thread's RECV: installed without SA_RESTART. */
static void on_wake(int sig)
{
	(void)sig;
}

int notify_start(struct sandbox *sb)
{
	struct sigaction sa = { .sa_handler = on_wake };
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGURG, &sa, NULL) < 0)
		return -errno;
	atomic_store(&nt.stop, false);
	int r = pthread_create(&nt.thread, NULL, serve, sb);
	if (r)
		return -r;
	nt.running = true;
	return 0;
}

void notify_stop(void)
{
	if (!nt.running)
		return;
	atomic_store(&nt.stop, true);
	/* A kick may land just before the thread enters its RECV: kick
	 * again until it is gone. */
	for (;;) {
		pthread_kill(nt.thread, SIGURG);
		struct timespec t;
		clock_gettime(CLOCK_REALTIME, &t);
		t.tv_nsec += 2 * 1000 * 1000;
		if (t.tv_nsec >= 1000000000) {
			t.tv_sec++;
			t.tv_nsec -= 1000000000;
		}
		if (pthread_timedjoin_np(nt.thread, NULL, &t) != ETIMEDOUT)
			break;
	}
	nt.running = false;
}
