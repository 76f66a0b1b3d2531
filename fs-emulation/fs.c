#include "fs-emulation/fs.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "interposer/sandbox.h"
#include "interposer/task.h"

int fs_dirfd_base(struct call *c, int dirfd, char *base, size_t len)
{
	int copy = call_getfd(c, dirfd);
	if (copy < 0)
		return copy == -EBADF ? -EBADF : -EBADF;
	struct stat st;
	int r = fstat(copy, &st);
	close(copy);
	if (r < 0)
		return -EBADF;
	if (!S_ISDIR(st.st_mode))
		return -ENOTDIR;
	const char *vp = reg_get(st.st_dev, st.st_ino);
	if (!vp)
		return -EACCES; /* an fd we never granted means nothing */
	snprintf(base, len, "%s", vp);
	return 0;
}

int fs_walk(struct call *c, int dirfd_argi, int argi, int slot, int flags, struct vfs_path *p)
{
	p->parent = -1;
	p->outside = false;
	p->vpath[0] = '\0';
	int r = call_read_path(c, argi, slot);
	if (r < 0)
		return r == -ESRCH ? -EFAULT : r;
	const char *path = c->path[slot];
	char base[PATH_MAX];
	const char *b = c->task->proc->fs->cwd;
	if (path[0] != '/' && dirfd_argi >= 0 && (int)c->arg[dirfd_argi] != AT_FDCWD) {
		r = fs_dirfd_base(c, (int)c->arg[dirfd_argi], base, sizeof base);
		if (r < 0)
			return r;
		b = base;
	}
	r = vfs_walk(c->sb->vfs, c->task, b, path, flags, p);
	snprintf(c->resolved[slot], sizeof c->resolved[slot], "%s", p->vpath);
	return r;
}

struct verdict fs_fail(struct call *c, const struct vfs_path *p, int err)
{
	(void)c;
	if (p->outside)
		return v_deny(ENOENT, "fs.outside-view");
	if (err == -EACCES && p->vpath[0] == '\0')
		return v_deny(EACCES, "fs.unknown-dirfd");
	return v_error(-err);
}

int fs_opath(struct call *c, struct vfs_path *p)
{
	return vfs_open(c->sb->vfs, c->task, p, O_PATH | O_NOFOLLOW, 0);
}

void fs_fdpath(int fd, char *buf, size_t len)
{
	snprintf(buf, len, "/proc/self/fd/%d", fd);
}

void fs_register(int fd, const char *vpath)
{
	struct stat st;
	if (fstat(fd, &st) == 0)
		reg_put(st.st_dev, st.st_ino, vpath);
}
