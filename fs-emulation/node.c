/* Opening a walked node, whatever backend holds it. */
#include "fs-emulation/vfs.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "interposer/task.h"

/* Reopen fd `fd` of process `pid` as the kernel reopens a /proc/PID/fd/N
 * magic link: a new open file description of the same file, with the
 * permission check of the new flags applied to it. */
static int reopen_task_fd(pid_t pid, int fd, int flags)
{
	struct proc *p = proc_find(pid);
	if (!p)
		return -ENOENT;
	int copy = (int)syscall(SYS_pidfd_getfd, p->pidfd, fd, 0);
	if (copy < 0)
		return errno == EBADF ? -ENOENT : -errno;
	char self[64];
	snprintf(self, sizeof self, "/proc/self/fd/%d", copy);
	int r = open(self, (flags & ~O_NOFOLLOW) | O_CLOEXEC, 0);
	int e = errno;
	close(copy);
	return r < 0 ? -e : r;
}

int vfs_open(struct vfs *v, struct task *t, struct vfs_path *p, int flags, mode_t mode)
{
	switch (p->kind) {
	case VN_MAGIC_FD:
		return reopen_task_fd(p->magic_pid, p->magic_fd, flags);
	case VN_PROC:
		if (!p->exists)
			return (flags & O_CREAT) ? -EACCES : -ENOENT;
		return proc_open(v, t, p, flags);
	case VN_HOST:
		break;
	}
	struct vfs_mount *m = p->mnt;
	if (m->kind == MNT_DEV && p->exists && S_ISCHR(p->st.st_mode)) {
		char host[64];
		snprintf(host, sizeof host, "/dev/%s", p->name);
		int fd = open(host, (flags & ~(O_CREAT | O_EXCL | O_TRUNC)) | O_CLOEXEC | O_NOFOLLOW);
		return fd < 0 ? -errno : fd;
	}
	int fd;
	if (p->parent < 0) /* a mount root */
		fd = openat(m->root_fd, ".", (flags & ~(O_CREAT | O_EXCL | O_NOFOLLOW)) | O_CLOEXEC, mode);
	else
		fd = openat(p->parent, p->name, flags | O_NOFOLLOW | O_CLOEXEC, mode);
	/* O_NOFOLLOW on a symlink the program itself asked to follow cannot
	 * happen: the walk resolved it.  ELOOP here is a racing swap. */
	return fd < 0 ? -errno : fd;
}
