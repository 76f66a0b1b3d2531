/* esc_connect_race — freeze moat with a connect that turns blocking after
 * moat looked at the socket.
 *
 * A liveness check, not an escape (see esc_fifo_hang.c): the supervisor
 * must keep serving every sandbox process.  moat performs connect for the
 * sandbox on a copy of its socket, which shares the open file description
 * and so its O_NONBLOCK flag with the sandbox's.  A moat that connects on
 * its event loop when the socket "is non-blocking" (and hands only blocking
 * ones to a job thread) can be raced: a second thread flips O_NONBLOCK off
 * between moat's look and moat's connect, and the connect to a listener
 * whose backlog is full then blocks the loop forever — every sandbox
 * process freezes (docs/design.md: every connect goes to a job thread,
 * since whether it blocks is a flag another thread can flip).
 *
 * A listener on DIR/esc-sock.PID with backlog 0 and one connection never
 * accepted (so the backlog is full); then, for 2.5 s, a racer forks children
 * that connect 50 non-blocking sockets to it while their second thread
 * toggles O_NONBLOCK on the socket being connected; each child is killed
 * after 30 ms (its blocking connects never return).  Meanwhile a heartbeat
 * process stat()s DIR (a supervised call) every 100 ms and reports on a
 * pipe.  ESCAPED here means moat stopped serving: no heartbeat for 2 s.  We
 * then print at once and exit without cleaning up (kill is supervised); the
 * runner's timeout ends the rest.
 *
 * Natively there is no supervisor to freeze: the runner passes --native, we
 * run the same workload as a check of itself (heartbeats must keep coming)
 * and say UNSUPPORTED (SKIP-NATIVE).  Under moat nothing is denied, so no
 * audit record is expected.  Takes about 2.5 s.
 *
 * usage: esc_connect_race [--native] DIR   (DIR: writable, e.g. /tmp)
 */
#include "esc.h"
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>

static atomic_int target = -1;

static long now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void *toggler(void *unused)
{
	(void)unused;
	for (;;) {
		int fd = atomic_load(&target);
		if (fd >= 0) {
			fcntl(fd, F_SETFL, 0);
			fcntl(fd, F_SETFL, O_NONBLOCK);
		}
	}
	return NULL;
}

/* A child: 50 non-blocking connects, raced by the toggler. */
__attribute__((noreturn)) static void connector(const struct sockaddr_un *sa)
{
	pthread_t t;
	if (pthread_create(&t, NULL, toggler, NULL) != 0)
		_exit(2);
	for (int k = 0; k < 50; k++) {
		int s = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
		atomic_store(&target, s);
		connect(s, (const struct sockaddr *)sa, sizeof *sa);
		atomic_store(&target, -1);
		close(s);
	}
	_exit(0);
}

/* The racer: a connector every 30 ms, each killed when its time is up.
 * Writes the number of rounds to `out` when it is told to stop (SIGTERM). */
static volatile sig_atomic_t stop;
static void on_term(int sig)
{
	(void)sig;
	stop = 1;
}
__attribute__((noreturn)) static void racer(const struct sockaddr_un *sa, int out, int go)
{
	signal(SIGTERM, on_term);
	char g;
	if (read(go, &g, 1) != 1) /* our parent's forks are done */
		_exit(2);
	int rounds = 0;
	while (!stop) {
		pid_t c = fork();
		if (c == 0)
			connector(sa);
		if (c > 0) {
			nanosleep(&(struct timespec){ .tv_nsec = 30 * 1000 * 1000 }, NULL);
			kill(c, SIGKILL);
			waitpid(c, NULL, 0);
			rounds++;
		}
	}
	dprintf(out, "%d", rounds);
	_exit(0);
}

__attribute__((noreturn)) static void heartbeat(const char *dir, int out)
{
	for (;;) {
		struct stat st;
		char b = stat(dir, &st) == 0 ? 'h' : 'e';
		if (write(out, &b, 1) != 1)
			_exit(0);
		nanosleep(&(struct timespec){ .tv_nsec = 100 * 1000 * 1000 }, NULL);
	}
}

int main(int argc, char **argv)
{
	int native = 0, i = 1;
	if (argc > 1 && strcmp(argv[1], "--native") == 0)
		native = 1, i++;
	if (argc != i + 1 || argv[i][0] != '/')
		esc_usage("esc_connect_race [--native] DIR");
	const char *dir = argv[i];

	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	if ((size_t)snprintf(sa.sun_path, sizeof sa.sun_path, "%s/esc-sock.%d", dir, (int)getpid()) >=
	    sizeof sa.sun_path)
		esc_usage("DIR too long for a socket path");
	unlink(sa.sun_path);
	int l = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (l < 0 || bind(l, (struct sockaddr *)&sa, sizeof sa) < 0 || listen(l, 0) < 0)
		esc_usage("cannot listen on DIR/esc-sock.PID");
	int first = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (first < 0 || connect(first, (struct sockaddr *)&sa, sizeof sa) < 0)
		esc_usage("the first connect (which fills the backlog) failed");

	/* Both children are forked before the race starts: a fork is reported
	 * to moat (ptrace), and once moat may be frozen we make no call that
	 * it must serve — only poll, read and write on pipes (and no stdio on
	 * stdout before the verdict: its first write fstat()s the fd). */
	int hb[2], rc[2], go[2];
	if (pipe(hb) < 0 || pipe(rc) < 0 || pipe(go) < 0)
		esc_usage("pipe failed");
	pid_t h = fork();
	if (h == 0)
		heartbeat(dir, hb[1]);
	pid_t r = fork();
	if (r == 0)
		racer(&sa, rc[1], go[0]);
	if (h < 0 || r < 0)
		esc_usage("fork failed");
	close(hb[1]);
	close(rc[1]);
	close(go[0]);
	if (write(go[1], "g", 1) != 1)
		esc_usage("the racer is gone");

	long start = now_ms(), last = start, worst = 0;
	int beats = 0;
	while (now_ms() - start < 2500) {
		struct pollfd pfd = { .fd = hb[0], .events = POLLIN };
		if (poll(&pfd, 1, 2000) != 1) {
			if (native)
				esc_usage("natively the heartbeat stopped: the workload is broken");
			/* a bare write: stdio's first use of stdout would fstat it,
			 * and fstat is a call moat serves */
			char line[256];
			int len = snprintf(line, sizeof line,
					   "ESCAPED: moat stopped serving: no heartbeat (a stat every 100 ms) "
					   "for 2 s while connects raced O_NONBLOCK (%d heartbeats before)\n",
					   beats);
			if (write(1, line, (size_t)len) < 0)
				_exit(3);
			_exit(0);
		}
		char b;
		if (read(hb[0], &b, 1) != 1)
			esc_usage("the heartbeat process died");
		long t = now_ms();
		worst = t - last > worst ? t - last : worst;
		last = t;
		beats++;
	}
	kill(h, SIGKILL);
	kill(r, SIGTERM);
	char buf[32] = "";
	ssize_t n = esc_read_all(rc[0], buf, sizeof buf);
	waitpid(h, NULL, 0);
	waitpid(r, NULL, 0);
	close(first);
	close(l);
	unlink(sa.sun_path);
	if (native)
		esc_unsupported("liveness check: natively there is no supervisor to freeze (the workload ran: "
				"%s racing rounds, %d heartbeats, longest gap %ld ms)",
				n > 0 ? buf : "?", beats, worst);
	esc_held("moat kept serving: %s racing rounds of 50 connects with O_NONBLOCK toggled; %d heartbeats in "
		 "2.5 s, longest gap %ld ms", n > 0 ? buf : "?", beats, worst);
	return esc_finish();
}
