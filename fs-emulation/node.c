/* Opening a walked node, whatever backend holds it. */
#include "core/call.h"
#include "fs-emulation/vfs.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "core/creds.h"
#include "core/task.h"

/* Reopen fd `fd` of process `pid` as the kernel reopens a /proc/PID/fd/N
 * magic link: a new open file description of the same file, with the
 * permission check of the new flags applied to it. */
static int reopen_task_fd(struct vfs *v, pid_t pid, int fd, int flags)
{
	struct proc *p = proc_find(pid);
	if (!p)
		return -ENOENT;
	int copy = (int)syscall(SYS_pidfd_getfd, p->pidfd, fd, 0);
	if (copy < 0)
		return errno == EBADF ? -ENOENT : -errno;
	/* Reopening a pty master (/dev/ptmx) makes a new pty of the host's
	 * pool, as opening /dev/ptmx does: counted the same. */
	bool ptmx = dev_is_ptmx(copy);
	if (ptmx && !dev_pty_room(v)) {
		call_putfd(copy);
		return -ENOSPC;
	}
	char self[64];
	snprintf(self, sizeof self, "/proc/self/fd/%d", copy);
	/* Never waits on the loop (a FIFO goes to a job before this; a lease
	 * answers EWOULDBLOCK here, and the caller a job). */
	bool nb = flags & O_NONBLOCK;
	int r = open(self, (flags & ~O_NOFOLLOW) | O_CLOEXEC | O_NONBLOCK, 0);
	int e = errno;
	call_putfd(copy);
	if (r < 0)
		return !nb && (e == EWOULDBLOCK || e == ENXIO) ? -EWOULDBLOCK : -e;
	if (!nb)
		fcntl(r, F_SETFL, fcntl(r, F_GETFL) & ~O_NONBLOCK);
	if (ptmx)
		dev_opened_ptmx(v, r);
	return r;
}

/* The root inside's override (dac.c) for an open the kernel refused with
 * EACCES: an existing node reopened through an O_PATH fd of it, a new one
 * made in its directory (O_EXCL: never a name that appeared since).  fd,
 * or -1 with errno set (EACCES where the override does not apply). */
static int dac_open(const struct vfs_path *p, int flags, mode_t mode)
{
	int fd = -EACCES;
	if (p->exists) {
		fd = vfs_dac_reopen(p->mnt, p->upper, p->parent, p->name, flags, &p->st);
	} else if ((flags & O_CREAT) && vfs_dac_fd(p->mnt, p->upper, p->parent)) {
		creds_dac_begin();
		fd = openat(p->parent, p->name, flags | O_EXCL, mode);
		fd = fd < 0 ? (errno == EEXIST ? -EACCES : -errno) : fd;
		creds_dac_end();
	}
	if (fd >= 0)
		return fd;
	errno = -fd;
	return -1;
}

int vfs_open(struct vfs *v, struct task *t, struct vfs_path *p, int flags, mode_t mode)
{
	switch (p->kind) {
	case VN_MAGIC_FD: return reopen_task_fd(v, p->magic_pid, p->magic_fd, flags);
	case VN_PROC:
		if (!p->exists)
			return (flags & O_CREAT) ? -EACCES : -ENOENT;
		return procfs_open(v, t, p, flags);
	case VN_HELD: {
		/* Reopen through the magic link: a new open file description
		 * of the removed directory, permission checked for `flags`. */
		char self[64];
		snprintf(self, sizeof self, "/proc/self/fd/%d", p->magic_fd);
		int fd = open(self, (flags & ~(O_NOFOLLOW | O_CREAT)) | O_CLOEXEC, mode);
		return fd < 0 ? -errno : fd;
	}
	case VN_HOST: break;
	}
	struct vfs_mount *m = p->mnt;
	if (m->kind == MNT_DEV && p->exists && S_ISCHR(p->st.st_mode)) {
		if (strncmp(p->rel, "pts/", 4) == 0)
			return dev_open_pts(v, atoi(p->name), flags);
		if (strcmp(p->name, "tty") == 0)
			return t ? dev_open_tty(t->tid, flags) : -ENXIO;
		if (strcmp(p->name, "ptmx") == 0 && !dev_pty_room(v))
			return -ENOSPC; /* what the kernel says at kernel.pty.max */
		char host[64];
		snprintf(host, sizeof host, "/dev/%s", p->name);
		int fd = open(host,
			      (flags & ~(O_CREAT | O_EXCL | O_TRUNC)) | O_CLOEXEC | O_NOFOLLOW);
		if (fd >= 0 && strcmp(p->name, "ptmx") == 0)
			dev_opened_ptmx(v, fd);
		return fd < 0 ? -errno : fd;
	}
	int fd;
	if (p->parent < 0) /* a mount root (O_EXCL stays: O_TMPFILE|O_EXCL is never linkable) */
		return (fd = openat(vfs_root_fd(p), ".",
				    (flags & ~(O_CREAT | O_NOFOLLOW)) | O_CLOEXEC, mode)) < 0
			       ? -errno
			       : fd;
	/* O_NOFOLLOW on a symlink the program itself asked to follow cannot
	 * happen: the walk resolved it.  ELOOP here is a racing swap.
	 * O_NONBLOCK always: this runs on the loop, and an open that waits
	 * (a FIFO swapped in after the walk looked, a file under a lease
	 * the sandbox or anyone took) would stop it; such an open is said
	 * to the caller instead, to be done off the loop. */
	bool nb = (flags & O_NONBLOCK) || (flags & O_PATH); /* O_PATH opens nothing */
	fd = openat(p->parent, p->name, flags | O_NOFOLLOW | O_CLOEXEC | (nb ? 0 : O_NONBLOCK),
		    mode);
	if (fd < 0 && errno == EACCES)
		fd = dac_open(p, flags | O_NOFOLLOW | O_CLOEXEC | (nb ? 0 : O_NONBLOCK), mode);
	if (fd < 0) {
		int e = errno;
		struct stat st;
		if (!nb &&
		    (e == EWOULDBLOCK || /* a lease to break */
		     (e == ENXIO && fstatat(p->parent, p->name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
		      S_ISFIFO(st.st_mode)))) /* a FIFO with no reader yet */
			return -EWOULDBLOCK;
		return -e;
	}
	if (!nb) {
		/* A FIFO swapped in after the walk looked is opened again off
		 * the loop, where its open waits for its other end.  A name of
		 * the host's own (a read-only mount, an overlay's lower layer)
		 * is not looked at again: only the host, or the sandbox through
		 * another mount of the same host directory, could swap one in
		 * there, and then the FIFO is opened without the wait (never
		 * a wait of the loop: O_NONBLOCK; docs/filesystem.md). */
		bool host_own = p->mnt->ro || (p->mnt->kind == MNT_OVERLAY && !p->upper);
		struct stat st;
		if (!(host_own && p->exists && S_ISREG(p->st.st_mode)) &&
		    (fstat(fd, &st) < 0 || S_ISFIFO(st.st_mode))) {
			close(fd);
			return -EWOULDBLOCK;
		}
		/* The status flags the open set, less O_NONBLOCK (F_SETFL
		 * changes no other bit; O_ASYNC as the open left it). */
		fcntl(fd, F_SETFL, flags & (O_APPEND | O_ASYNC | O_DIRECT | O_NOATIME));
	}
	return fd;
}

/* Listings run in the kernel (getdents64 on the granted fd), so a directory
 * that holds hidden names is granted as a copy of its entries without them:
 * placeholders of the same type, in the skeleton.  Lookups through the fd
 * still go by the virtual path (the registry), never by the copy. */
static int filter_listing(struct vfs *v, int dirfd, const char *vpath);

int vfs_filter_listing(struct vfs *v, int dirfd, const char *vpath)
{
	/* The copy is moat's, in its skeleton: made and opened with the
	 * skeleton's ids, whatever ids the caller took since. */
	creds_skel_begin(v->uid, v->gid);
	int r = filter_listing(v, dirfd, vpath);
	creds_skel_end();
	return r;
}

static int filter_listing(struct vfs *v, int dirfd, const char *vpath)
{
	static const char *const holders[] = { "/etc",     "/etc/ssh",      "/etc/ssl",
					       "/etc/apt", "/etc/security", NULL };
	int which = -1;
	for (int i = 0; holders[i]; i++)
		if (strcmp(vpath, holders[i]) == 0)
			which = i;
	if (which < 0)
		return dirfd;
	/* One copy per directory for the run (these directories do not change
	 * under a program): opening /etc in a loop must not fill /dev/shm. */
	char copy[PATH_MAX];
	snprintf(copy, sizeof copy, "%s/pv/listing-%d", v->skel, which);
	int made = open(copy, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (made >= 0) {
		close(dirfd);
		return made;
	}
	int dup = fcntl(dirfd, F_DUPFD_CLOEXEC, 0);
	DIR *d = dup >= 0 ? fdopendir(dup) : NULL;
	if (!d || mkdir(copy, 0755) < 0) {
		if (d)
			closedir(d);
		else if (dup >= 0)
			close(dup);
		close(dirfd);
		return -EIO; /* fail closed: never the unfiltered listing */
	}
	struct dirent *de;
	while ((de = readdir(d))) {
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		char vp[PATH_MAX], at[PATH_MAX * 2];
		snprintf(vp, sizeof vp, "%s/%s", vpath, de->d_name);
		if (vfs_is_hidden(v, vp))
			continue;
		snprintf(at, sizeof at, "%s/%s", copy, de->d_name);
		if (de->d_type == DT_DIR) {
			mkdir(at, 0755);
		} else if (de->d_type == DT_LNK) {
			char target[PATH_MAX];
			ssize_t l = readlinkat(dirfd, de->d_name, target, sizeof target - 1);
			target[l > 0 ? l : 0] = '\0';
			symlink(l > 0 ? target : "/", at);
		} else {
			int f = open(at, O_CREAT | O_WRONLY | O_CLOEXEC, 0644);
			if (f >= 0)
				close(f);
		}
	}
	closedir(d);
	close(dirfd);
	/* The mount's shadowing files (the synthetic /etc/passwd...) are
	 * listed even where the host has no file of that name. */
	struct vfs_mount *m = vfs_mount_of(v, vpath);
	if (m->shadow_fd >= 0 && strcmp(m->vpath, vpath) == 0) {
		int sd = openat(m->shadow_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		DIR *sh = sd >= 0 ? fdopendir(sd) : NULL;
		while (sh && (de = readdir(sh))) {
			if (de->d_type != DT_REG)
				continue;
			char at[PATH_MAX * 2];
			snprintf(at, sizeof at, "%s/%s", copy, de->d_name);
			int f = open(at, O_CREAT | O_WRONLY | O_CLOEXEC, 0644);
			if (f >= 0)
				close(f);
		}
		if (sh)
			closedir(sh);
		else if (sd >= 0)
			close(sd);
	}
	int fd = open(copy, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	struct stat st;
	if (fstat(fd, &st) == 0)
		reg_put(st.st_dev, st.st_ino, vpath);
	return fd;
}
