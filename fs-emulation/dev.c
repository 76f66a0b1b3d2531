/* Terminals in the synthetic /dev: /dev/ptmx, /dev/pts/N and /dev/tty.
 *
 * /dev/ptmx opens the host's multiplexer: a new pseudo-terminal pair whose
 * master the sandbox holds.  The host's /dev/pts holds everybody's
 * terminals, so /dev/pts/N is never opened by name: the supervisor finds a
 * master of pty N among the sandbox's own fds and asks it for its peer
 * (TIOCGPTPEER).  A pty the sandbox does not hold a master of does not
 * exist here, whatever the host has under that number.  /dev/tty is the
 * caller's controlling terminal: one of those ptys (after setsid and
 * TIOCSCTTY, as script and pty.fork do), or none — the sandbox starts in a
 * session of its own, so the terminal moat runs in is never reachable this
 * way. */
#include "core/call.h"
#include "core/creds.h"
#include "fs-emulation/vfs.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "core/task.h"

#ifndef TIOCGPTPEER
#define TIOCGPTPEER _IO('T', 0x41)
#endif

/* Is `fd` (the supervisor's) a pty master? Its number in *n. */
static bool master_of(int fd, int *n)
{
	char self[64], host[64];
	snprintf(self, sizeof self, "/proc/self/fd/%d", fd);
	ssize_t l = readlink(self, host, sizeof host - 1);
	if (l <= 0)
		return false;
	host[l] = '\0';
	if (strcmp(host, "/dev/ptmx") != 0 && strcmp(host, "/dev/pts/ptmx") != 0)
		return false;
	return ioctl(fd, TIOCGPTN, n) == 0;
}

struct find {
	int n;
	int flags;
	int fd;
};

/* A master of pty f->n among process p's fds: open its peer. */
static int find_in(struct proc *p, void *arg)
{
	struct find *f = arg;
	char dir[64];
	snprintf(dir, sizeof dir, "/proc/%d/fd", p->tgid);
	creds_proc_begin(); /* its fd links, as the caller may see them */
	DIR *d = opendir(dir);
	if (!d) {
		creds_proc_end();
		return 0;
	}
	struct dirent *de;
	while ((de = readdir(d))) {
		char link[PATH_MAX], host[64];
		snprintf(link, sizeof link, "%s/%s", dir, de->d_name);
		ssize_t l = readlink(link, host, sizeof host - 1);
		if (l <= 0)
			continue;
		host[l] = '\0';
		if (strcmp(host, "/dev/ptmx") != 0 && strcmp(host, "/dev/pts/ptmx") != 0)
			continue;
		int copy = (int)syscall(SYS_pidfd_getfd, p->pidfd, atoi(de->d_name), 0);
		int n;
		if (copy < 0)
			continue;
		if (master_of(copy, &n) && n == f->n) {
			f->fd = ioctl(copy, TIOCGPTPEER, f->flags | O_CLOEXEC);
			if (f->fd < 0)
				f->fd = -errno;
			call_putfd(copy);
			break;
		}
		call_putfd(copy);
	}
	closedir(d);
	creds_proc_end();
	return f->fd != -ENOENT;
}

int dev_open_pts(struct vfs *v, int n, int flags)
{
	struct find f = { n, flags & (O_ACCMODE | O_NOCTTY | O_NONBLOCK), -ENOENT };
	proc_foreach(find_in, &f);
	/* The terminal moat was given (machine.tty_pts, vfs_setup) is listed, so ttyname()
	 * works on the fds the sandbox holds, but never opened again by name:
	 * a new open file description of it is more than what was passed. */
	(void)v;
	return f.fd;
}

int dev_open_tty(pid_t tid, int flags)
{
	/* tty_nr, field 7 of /proc/TID/stat (after the parenthesised comm) */
	char path[64], buf[1024];
	snprintf(path, sizeof path, "/proc/%d/stat", tid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t l = fd >= 0 ? read(fd, buf, sizeof buf - 1) : -1;
	if (fd >= 0)
		close(fd);
	if (l <= 0)
		return -ENXIO;
	buf[l] = '\0';
	char *s = strrchr(buf, ')');
	unsigned long tty = 0;
	if (!s || sscanf(s + 1, " %*c %*d %*d %*d %lu", &tty) != 1 || tty == 0)
		return -ENXIO;
	dev_t dev = (dev_t)tty;
	/* Unix98 ptys: majors 136-143 */
	if (major(dev) < 136 || major(dev) > 143)
		return -ENXIO;
	int n = (int)((major(dev) - 136) * 256 + minor(dev));
	int r = dev_open_pts(NULL, n, flags);
	return r == -ENOENT ? -ENXIO : r;
}

/* The ptys the sandbox was given, by number, with the inode of the host's
 * /dev/pts/N then: the host's pool (kernel.pty.max) is shared with every
 * login of the host's, so a sandbox holds DEV_PTY_MAX at most. */
static struct {
	int n;
	dev_t dev;
	ino_t ino;
} held[DEV_PTY_MAX];
static int nheld;

/* Forget the ptys that are gone (their /dev/pts/N went with their last
 * fd, or is another pty now), and their names in the listing. */
static void prune(struct vfs *v)
{
	for (int i = 0; i < nheld;) {
		char host[64];
		struct stat st;
		snprintf(host, sizeof host, "/dev/pts/%d", held[i].n);
		if (stat(host, &st) == 0 && st.st_dev == held[i].dev && st.st_ino == held[i].ino) {
			i++;
			continue;
		}
		char name[PATH_MAX * 2];
		snprintf(name, sizeof name, "%s/dev/pts/%d", v->skel, held[i].n);
		unlink(name);
		held[i] = held[--nheld];
	}
}

bool dev_is_ptmx(int fd)
{
	int n;
	return master_of(fd, &n);
}

bool dev_pty_room(struct vfs *v)
{
	if (nheld < DEV_PTY_MAX)
		return true;
	prune(v);
	return nheld < DEV_PTY_MAX;
}

int dev_opened_ptmx(struct vfs *v, int fd)
{
	int n;
	if (!master_of(fd, &n))
		return 0;
	char host[64];
	struct stat st;
	snprintf(host, sizeof host, "/dev/pts/%d", n);
	if (nheld < DEV_PTY_MAX && stat(host, &st) == 0) {
		held[nheld].n = n;
		held[nheld].dev = st.st_dev;
		held[nheld].ino = st.st_ino;
		nheld++;
	}
	/* A name in the /dev/pts listing (the supervisor writes it; the
	 * mount is read-only to the sandbox). */
	char path[PATH_MAX * 2];
	snprintf(path, sizeof path, "%s/dev/pts/%d", v->skel, n);
	int f = open(path, O_CREAT | O_WRONLY | O_CLOEXEC, 0620);
	if (f >= 0)
		close(f);
	return 0;
}
