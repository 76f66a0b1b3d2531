/* esc.h — what every escape attempt in tests/security/ shares.
 *
 * Protocol (tests/security/run.sh reads it).  An attempt writes its
 * diagnostics to stderr ("# ...") and exactly one final line to stdout:
 *
 *   ESCAPED: <what got out>       exit 0   it reached something of the host
 *   HELD: <what stopped it>       exit 1   every way it tried was stopped
 *   UNSUPPORTED: <why>            exit 77  this kernel lacks the feature, so
 *                                          the attempt cannot be proven here
 *
 * An attempt claims ESCAPED only on evidence: the secret file's content must
 * equal $ESC_TOKEN (the runner sets it natively, and with --setenv under
 * moat), a signal or ptrace call must have returned success, and so on.
 * An attempt that tries several ways reports every way that worked, so that a
 * native run proves each of them.
 */
#ifndef ESC_H
#define ESC_H

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/wait.h>

#include <errno.h>
#include <stdbool.h>
#include <time.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct esc_log {
	char won[4096];
	char held[4096];
};

static inline struct esc_log *esc_log(void)
{
	static struct esc_log l;
	return &l;
}

/* errno as its symbolic name ("ENOENT"), for the HELD line. */
static inline const char *esc_errname(int e)
{
	const char *n = strerrorname_np(e);
	return n ? n : "E?";
}

static inline void esc_append(char *dst, size_t cap, const char *fmt, va_list ap)
{
	size_t len = strlen(dst);
	if (len + 3 >= cap)
		return;
	if (len) {
		strcpy(dst + len, "; ");
		len += 2;
	}
	vsnprintf(dst + len, cap - len, fmt, ap);
}

/* Record a way that got out.  Printed to stderr at once as well. */
__attribute__((format(printf, 1, 2))) static inline void esc_won(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fputs("# escaped: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	va_start(ap, fmt);
	esc_append(esc_log()->won, sizeof esc_log()->won, fmt, ap);
	va_end(ap);
}

/* Record a way that was stopped, with what stopped it. */
__attribute__((format(printf, 1, 2))) static inline void esc_held(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fputs("# held: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	va_start(ap, fmt);
	esc_append(esc_log()->held, sizeof esc_log()->held, fmt, ap);
	va_end(ap);
}

/* Print the final line and return the exit code: ESCAPED if anything got
 * out (listing every way that did), HELD otherwise. */
static inline int esc_finish(void)
{
	struct esc_log *l = esc_log();
	fflush(stderr);
	if (l->won[0]) {
		printf("ESCAPED: %s\n", l->won);
		return 0;
	}
	printf("HELD: %s\n", l->held[0] ? l->held : "nothing got out");
	return 1;
}

__attribute__((format(printf, 1, 2), noreturn)) static inline void esc_unsupported(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fputs("UNSUPPORTED: ", stdout);
	vprintf(fmt, ap);
	putchar('\n');
	va_end(ap);
	exit(77);
}

/* Copy file `from` to a new `to` (mode 0755; `oflags` O_EXCL or O_TRUNC):
 * 0, or -1. */
static inline int esc_copy_file(const char *from, const char *to, int oflags)
{
	int in = open(from, O_RDONLY | O_CLOEXEC);
	int out = open(to, O_WRONLY | O_CREAT | oflags | O_CLOEXEC, 0755);
	char buf[65536];
	ssize_t n = 0;
	while (in >= 0 && out >= 0 && (n = read(in, buf, sizeof buf)) > 0)
		if (write(out, buf, (size_t)n) != n) {
			n = -1;
			break;
		}
	int ok = in >= 0 && out >= 0 && n == 0;
	if (in >= 0)
		close(in);
	if (out >= 0)
		close(out);
	return ok ? 0 : -1;
}

/* A broken invocation is neither ESCAPED nor HELD: the runner fails it. */
__attribute__((noreturn)) static inline void esc_usage(const char *msg)
{
	printf("USAGE: %s\n", msg);
	exit(2);
}

static inline const char *esc_token(void)
{
	const char *t = getenv("ESC_TOKEN");
	if (!t || strlen(t) < 8)
		esc_usage("ESC_TOKEN is not set (run me from tests/security/run.sh)");
	return t;
}

/* Does buf (len bytes) hold exactly the token, give or take a trailing
 * newline? */
static inline int esc_is_token(const char *buf, size_t len)
{
	const char *t = esc_token();
	while (len && (buf[len - 1] == '\n' || buf[len - 1] == '\r'))
		len--;
	return len == strlen(t) && memcmp(buf, t, len) == 0;
}

/* Read an open fd from offset 0 (pread, or read if it cannot seek) and say
 * whether it holds the token. */
static inline int esc_fd_has_token(int fd)
{
	char buf[4096];
	ssize_t n = pread(fd, buf, sizeof buf, 0);
	if (n < 0 && errno == ESPIPE)
		n = read(fd, buf, sizeof buf);
	return n > 0 && esc_is_token(buf, (size_t)n);
}

/* Read fd until EOF (or cap-1 bytes), NUL-terminated: what a server sent.
 * Returns the length, or -errno if the first read failed. */
static inline ssize_t esc_read_all(int fd, char *buf, size_t cap)
{
	size_t len = 0;
	while (len + 1 < cap) {
		ssize_t n = read(fd, buf + len, cap - 1 - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			if (len == 0) {
				buf[0] = '\0';
				return -errno;
			}
			break;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	buf[len] = '\0';
	return (ssize_t)len;
}

/* Open path (relative to dirfd) and read it.  Returns 1 if it held the
 * token, 0 if it opened but held something else, -errno if the open failed. */
static inline int esc_open_at_has_token(int dirfd, const char *path)
{
	int fd = openat(dirfd, path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	int r = esc_fd_has_token(fd);
	close(fd);
	return r;
}

/* One try at reading the secret through `path`, noted as won or held. */
static inline int esc_try_open(const char *how, const char *path)
{
	int r = esc_open_at_has_token(AT_FDCWD, path);
	if (r == 1)
		esc_won("%s: read the token through %s", how, path);
	else if (r == 0)
		esc_held("%s: %s opened but is not the secret", how, path);
	else
		esc_held("%s: open %s: %s", how, path, esc_errname(-r));
	return r;
}

/* argv[1] must be the absolute path of the secret. */
static inline const char *esc_secret_arg(int argc, char **argv)
{
	if (argc < 2 || argv[1][0] != '/')
		esc_usage("need the absolute path of the secret as argv[1]");
	esc_token();
	return argv[1];
}


/* For the UDP autobind attempts: write to UDP socket `s` without an
 * address (the kernel binds an unbound one by itself first), then wait
 * up to wait_s seconds for udp_spray.py (the outside party) to send the
 * token to the port it got.  Records won/held. */
static inline void esc_udp_write_and_listen(int s, int wait_s)
{
	if (write(s, "x", 1) < 0)
		fprintf(stderr, "# write: %s (expected EDESTADDRREQ)\n", esc_errname(errno));
	struct sockaddr_in me;
	socklen_t ml = sizeof me;
	if (getsockname(s, (struct sockaddr *)&me, &ml) < 0 || me.sin_port == 0) {
		esc_held("write left the socket unbound");
		return;
	}
	fprintf(stderr, "# bound to %s:%d without asking moat\n", inet_ntoa(me.sin_addr),
		ntohs(me.sin_port));
	struct timeval tv = { wait_s, 0 };
	setsockopt(s, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
	char buf[256];
	struct sockaddr_in from;
	socklen_t fl = sizeof from;
	ssize_t n = recvfrom(s, buf, sizeof buf - 1, 0, (struct sockaddr *)&from, &fl);
	if (n > 0 && esc_is_token(buf, (size_t)n))
		esc_won("a host process (%s:%d) sent the token to the sandbox's UDP port %d",
			inet_ntoa(from.sin_addr), ntohs(from.sin_port), ntohs(me.sin_port));
	else if (n > 0)
		esc_held("port %d got something other than the token", ntohs(me.sin_port));
	else
		esc_held("port %d bound but nothing from the host arrived (%s)", ntohs(me.sin_port),
			 esc_errname(errno));
}

/* The first bytes of DIR/NAME (a file the runner or a helper writes), NUL
 * terminated into buf: its length, or -1 when it is not (yet) there. */
static inline ssize_t esc_read_small(const char *dir, const char *name, char *buf, size_t cap)
{
	char p[4096];
	snprintf(p, sizeof p, "%s/%s", dir, name);
	int fd = open(p, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ssize_t n = read(fd, buf, cap - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	return n;
}

/* DIR/NAME as a number: -1 when it is not there, -2 when it says "noroom"
 * (a runner's way to say the host had no room for the attempt). */
static inline long esc_read_num(const char *dir, const char *name)
{
	char buf[64];
	if (esc_read_small(dir, name, buf, sizeof buf) < 0)
		return -1;
	return strncmp(buf, "noroom", 6) == 0 ? -2 : atol(buf);
}

/* ---- pid reuse (attempts on tids moat keeps) ---- */

/* One child that exits at once: the pid counter moves by one.  Its pid. */
static inline pid_t esc_child_once(void)
{
	pid_t p = vfork();
	if (p == 0)
		_exit(0);
	if (p > 0)
		waitpid(p, NULL, 0);
	return p;
}

static inline double esc_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Children until the counter has wrapped and the last one is in
 * [x - 8, x): the next pids made are x and up.  The last child's pid, or
 * -1 (no wrap within 400,000 children or 60 s). */
static inline pid_t esc_pid_wrap_below(pid_t x)
{
	pid_t prev = esc_child_once(), p = prev;
	bool wrapped = false;
	double t0 = esc_now();
	for (long n = 0; n < 400000 && esc_now() - t0 < 60; n++, prev = p) {
		p = esc_child_once();
		if (p < 0)
			return -1;
		if (p < prev)
			wrapped = true;
		if (wrapped && p >= x - 8 && p < x)
			return p;
		if (wrapped && p >= x)
			wrapped = false; /* ran past it (others took pids): once more */
	}
	return -1;
}

#endif
