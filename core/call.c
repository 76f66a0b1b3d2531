/* The call API: the tracee's memory, replies and grants, and moat's
 * copies of the sandbox's fds (call.h). */
#include "core/call.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/seccomp.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include "core/task.h"

/* No NOTIF_ID_VALID after a copy: while the loop holds a call, its tid
 * names the caller or, after a sibling's exec took the caller's place
 * (de_thread), another task of the same sandbox — never a process outside
 * it.  Every sandbox task is moat's tracee, a tracee that dies stays a
 * zombie until moat's wait, and the loop waits only between calls.  The
 * argument in full: docs/security.md, class 4. */

int call_read(struct call *c, uint64_t addr, void *buf, size_t len)
{
	struct iovec local = { buf, len };
	struct iovec remote = { (void *)(uintptr_t)addr, len };
	ssize_t n = process_vm_readv(c->tid, &local, 1, &remote, 1, 0);
	return n == (ssize_t)len ? 0 : -EFAULT;
}

int mem_read_str(pid_t pid, uint64_t addr, char *buf, size_t len)
{
	size_t off = 0;
	buf[0] = '\0';
	if (!addr)
		return -EFAULT;
	while (off < len) {
		/* Small reads first (most paths are short, and "" is common:
		 * glibc's fstat), never across a page end in one read, so an
		 * unmapped page after the string cannot fail a valid path. */
		size_t page_left = 4096 - ((addr + off) & 4095);
		size_t chunk = off == 0 ? 256 : len - off;
		size_t want = chunk < page_left ? chunk : page_left;
		if (want > len - off)
			want = len - off;
		struct iovec local = { buf + off, want };
		struct iovec remote = { (void *)(uintptr_t)(addr + off), want };
		ssize_t n = process_vm_readv(pid, &local, 1, &remote, 1, 0);
		if (n <= 0) {
			buf[off < len ? off : len - 1] = '\0';
			return -EFAULT;
		}
		if (memchr(buf + off, '\0', (size_t)n))
			return 0;
		off += (size_t)n;
	}
	buf[len - 1] = '\0';
	return -ENAMETOOLONG;
}

int call_read_path(struct call *c, int argi, int slot)
{
	if (slot >= c->npath)
		c->npath = slot + 1;
	if (c->pre_arg == argi + 1) {
		c->pre_arg = 0;
		memcpy(c->path[slot], c->pre, strnlen(c->pre, PATH_MAX - 1) + 1);
		return c->pre_rc;
	}
	return mem_read_str(c->tid, c->arg[argi], c->path[slot], PATH_MAX);
}

int call_write(struct call *c, uint64_t addr, const void *buf, size_t len)
{
	struct iovec local = { (void *)buf, len };
	struct iovec remote = { (void *)(uintptr_t)addr, len };
	ssize_t n = process_vm_writev(c->tid, &local, 1, &remote, 1, 0);
	return n == (ssize_t)len ? 0 : -EFAULT;
}

int call_getfd(struct call *c, int fd)
{
	if (fd < 0)
		return -EBADF;
	int r = (int)syscall(SYS_pidfd_getfd, c->task->proc->pidfd, fd, 0);
	return r < 0 ? -errno : r;
}

void notif_reply(int notify_fd, uint64_t id, int64_t val, int error)
{
	struct seccomp_notif_resp resp = { .id = id, .val = val, .error = error };
	ioctl(notify_fd, SECCOMP_IOCTL_NOTIF_SEND, &resp);
}

void notif_grant(int notify_fd, uint64_t id, int fd, unsigned fd_flags)
{
	struct seccomp_notif_addfd addfd = {
		.id = id,
		.flags = SECCOMP_ADDFD_FLAG_SEND,
		.srcfd = (uint32_t)fd,
		.newfd_flags = fd_flags,
	};
	if (ioctl(notify_fd, SECCOMP_IOCTL_NOTIF_ADDFD, &addfd) < 0 && errno != ENOENT)
		notif_reply(notify_fd, id, 0, -errno);
}

int notif_install(int notify_fd, uint64_t id, int fd, int at, unsigned fd_flags)
{
	struct seccomp_notif_addfd addfd = {
		.id = id,
		.flags = SECCOMP_ADDFD_FLAG_SETFD,
		.srcfd = (uint32_t)fd,
		.newfd = (uint32_t)at,
		.newfd_flags = fd_flags,
	};
	int r = ioctl(notify_fd, SECCOMP_IOCTL_NOTIF_ADDFD, &addfd);
	return r < 0 ? -errno : r;
}

/* The closer: one thread that closes what the loop hands it (net_close),
 * through a non-blocking pipe.  A closer stuck on one socket fills the
 * pipe; the next close then gets a thread of its own. */
static int close_pipe[2] = { -1, -1 };

static void *closer(void *arg)
{
	(void)arg;
	int fd;
	while (read(close_pipe[0], &fd, sizeof fd) == sizeof fd)
		close(fd);
	return NULL;
}

/* Threads of their own for closes the closer could not take: at most
 * CLOSERS_MAX at once; past that the fd is kept open (a leak bounded by
 * moat's fd limit) rather than closed on the loop. */
#define CLOSERS_MAX 64
static _Atomic int closers;

static void *close_one(void *arg)
{
	close((int)(intptr_t)arg);
	closers--;
	return NULL;
}

/* A detached thread that takes no signal (moat's are the loop's). */
static int spawn(void *(*fn)(void *), void *arg)
{
	pthread_attr_t at;
	pthread_attr_init(&at);
	pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
	pthread_attr_setstacksize(&at, 64 * 1024);
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	pthread_t t;
	int r = pthread_create(&t, &at, fn, arg);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	pthread_attr_destroy(&at);
	return -r;
}

void call_putfd(int fd)
{
	struct stat st;
	if (fd < 0)
		return;
	if (fstat(fd, &st) == 0 && S_ISSOCK(st.st_mode)) {
		/* The read end blocks (the closer waits there); only the
		 * write end, the loop's, must not. */
		if (close_pipe[1] < 0 && pipe2(close_pipe, O_CLOEXEC) == 0 &&
		    (fcntl(close_pipe[1], F_SETFL, O_NONBLOCK) < 0 || spawn(closer, NULL) < 0)) {
			close(close_pipe[0]);
			close(close_pipe[1]);
			close_pipe[0] = close_pipe[1] = -1;
		}
		if (close_pipe[1] >= 0 && write(close_pipe[1], &fd, sizeof fd) == sizeof fd)
			return;
		if (closers >= CLOSERS_MAX)
			return; /* kept: see CLOSERS_MAX */
		closers++;
		if (spawn(close_one, (void *)(intptr_t)fd) == 0)
			return;
		closers--;
	}
	close(fd); /* not a socket, or no thread could be made */
}
