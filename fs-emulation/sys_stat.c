/* stat family, access family, readlink, statfs. */
#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "core/task.h"
#include "core/creds.h"
#include "fs-emulation/fs.h"
#include "syscall-table/handlers.h"

/* stat of the walked node, following the rules of the node's kind. */
static int node_stat(struct call *c, struct vfs_path *p, struct stat *st)
{
	if (p->kind == VN_MAGIC_FD) {
		int fd = vfs_open(c->vfs, c->task, p, O_PATH, 0);
		if (fd < 0)
			return fd;
		int r = fstat(fd, st) < 0 ? -errno : 0;
		close(fd);
		return r;
	}
	*st = p->st;
	vfs_origin(p, st);
	return 0;
}

/* stat of the caller's fd `fd`, with an overlay copy's lower identity
 * (fs_task_fd_stat) and a symlink's stand-in standing for the link. */
static int task_fd_stat(struct call *c, int fd, struct stat *st)
{
	int r = fs_task_fd_stat(c, fd, st);
	struct vfs *v = c->vfs;
	const char *standin = r == 0 && S_ISREG(st->st_mode) && st->st_size == 0
				      ? reg_get_link(st->st_dev, st->st_ino)
				      : NULL;
	if (standin) {
		/* the stand-in of an O_PATH|O_NOFOLLOW symlink: the link's stat */
		struct vfs_path p;
		char path[PATH_MAX];
		snprintf(path, sizeof path, "%s", standin);
		r = vfs_walk(v, c->task, "/", path, 0, &p);
		if (r == 0 && !p.exists)
			r = -ENOENT;
		if (r == 0)
			*st = p.st;
		vfs_path_release(&p);
		return r;
	}
	return r;
}

/* Owners as the sandbox is shown them (core/creds.h creds_show_uid):
 * with a user namespace, its own ids and host root; anyone else the
 * overflow id, as the kernel shows an unmapped owner. */
static void show_owner(const struct call *c, uid_t *uid, gid_t *gid)
{
	*uid = creds_show_uid(c->creds, *uid);
	*gid = creds_show_gid(c->creds, *gid);
}

static struct verdict stat_common(struct call *c, int dirfd_argi, int path_argi, int buf_argi,
				  int atflags)
{
	if (atflags & ~(AT_SYMLINK_NOFOLLOW | AT_EMPTY_PATH | AT_NO_AUTOMOUNT))
		return v_error(EINVAL);
	struct stat st;
	struct vfs_path p;
	p.parent = -1;
	p.parent_pin = 0;
	p.outside = false;
	if ((atflags & AT_EMPTY_PATH) && dirfd_argi >= 0) {
		int r = call_read_path(c, path_argi, 0);
		if (r < 0)
			return v_error(EFAULT);
		if (c->path[0][0] == '\0') {
			/* fstat through the path interface (glibc's fstat). */
			int dirfd = (int)c->arg[dirfd_argi];
			if (dirfd == AT_FDCWD)
				snprintf(c->path[0], sizeof c->path[0], ".");
			else {
				r = task_fd_stat(c, dirfd, &st);
				if (r < 0)
					return v_error(-r);
				goto write;
			}
		}
	}
	int r = fs_walk(c, dirfd_argi, path_argi, 0,
			(atflags & AT_SYMLINK_NOFOLLOW) ? 0 : VW_FOLLOW, &p);
	if (r < 0)
		return fs_fail(c, &p, r);
	if (!p.exists) {
		struct verdict v = fs_fail(c, &p, -ENOENT);
		vfs_path_release(&p);
		return v;
	}
	r = node_stat(c, &p, &st);
	vfs_path_release(&p);
	if (r < 0)
		return v_error(-r);
write:
	show_owner(c, &st.st_uid, &st.st_gid);
	if (call_write(c, c->arg[buf_argi], &st, sizeof st) < 0)
		return v_error(EFAULT);
	return v_value(0);
}

/* fstat(2) itself (glibc's fstat is newfstatat(fd, "")): supervised only
 * so that a copied-up directory shows one identity through every call. */
struct verdict sys_fstat(struct call *c)
{
	struct stat st;
	int r = task_fd_stat(c, (int)c->arg[0], &st);
	if (r < 0)
		return v_error(-r);
	show_owner(c, &st.st_uid, &st.st_gid);
	return call_write(c, c->arg[1], &st, sizeof st) < 0 ? v_error(EFAULT) : v_value(0);
}

struct verdict sys_stat(struct call *c)
{
	return stat_common(c, ARG_CWD, 0, 1, 0);
}

struct verdict sys_lstat(struct call *c)
{
	return stat_common(c, ARG_CWD, 0, 1, AT_SYMLINK_NOFOLLOW);
}

struct verdict sys_newfstatat(struct call *c)
{
	return stat_common(c, 0, 1, 2, (int)c->arg[3]);
}

static void stat_to_statx(const struct stat *st, struct statx *sx)
{
	memset(sx, 0, sizeof *sx);
	sx->stx_mask = STATX_BASIC_STATS;
	sx->stx_blksize = (uint32_t)st->st_blksize;
	sx->stx_nlink = (uint32_t)st->st_nlink;
	sx->stx_uid = st->st_uid;
	sx->stx_gid = st->st_gid;
	sx->stx_mode = (uint16_t)st->st_mode;
	sx->stx_ino = st->st_ino;
	sx->stx_size = (uint64_t)st->st_size;
	sx->stx_blocks = (uint64_t)st->st_blocks;
	sx->stx_atime.tv_sec = st->st_atim.tv_sec;
	sx->stx_atime.tv_nsec = (uint32_t)st->st_atim.tv_nsec;
	sx->stx_mtime.tv_sec = st->st_mtim.tv_sec;
	sx->stx_mtime.tv_nsec = (uint32_t)st->st_mtim.tv_nsec;
	sx->stx_ctime.tv_sec = st->st_ctim.tv_sec;
	sx->stx_ctime.tv_nsec = (uint32_t)st->st_ctim.tv_nsec;
	sx->stx_dev_major = major(st->st_dev);
	sx->stx_dev_minor = minor(st->st_dev);
	sx->stx_rdev_major = major(st->st_rdev);
	sx->stx_rdev_minor = minor(st->st_rdev);
}

static void statx_ident(struct statx *sx, const struct stat *st)
{
	sx->stx_ino = st->st_ino;
	sx->stx_dev_major = major(st->st_dev);
	sx->stx_dev_minor = minor(st->st_dev);
}

struct verdict sys_statx(struct call *c)
{
	int dirfd = (int)c->arg[0];
	int flags = (int)c->arg[2];
	unsigned mask = (unsigned)c->arg[3];
	uint64_t buf = c->arg[4];
	if (flags & ~(AT_SYMLINK_NOFOLLOW | AT_EMPTY_PATH | AT_NO_AUTOMOUNT | AT_STATX_SYNC_TYPE))
		return v_error(EINVAL);
	struct statx sx;
	int r = call_read_path(c, 1, 0);
	if (r < 0)
		return v_error(EFAULT);
	if ((flags & AT_EMPTY_PATH) && c->path[0][0] == '\0' && dirfd != AT_FDCWD) {
		int fd = call_getfd(c, dirfd);
		if (fd < 0)
			return v_error(EBADF);
		r = statx(fd, "", AT_EMPTY_PATH | (flags & AT_STATX_SYNC_TYPE), mask, &sx);
		int e = errno;
		struct stat st;
		if (r == 0 && S_ISREG(sx.stx_mode) && sx.stx_size == 0 &&
		    reg_get_link(makedev(sx.stx_dev_major, sx.stx_dev_minor), sx.stx_ino) &&
		    task_fd_stat(c, dirfd, &st) == 0) {
			call_putfd(fd);
			stat_to_statx(&st, &sx);
			goto standin;
		}
		if (r == 0 && c->vfs->ov_used && sx.stx_dev_major == major(c->vfs->ov_dev) &&
		    sx.stx_dev_minor == minor(c->vfs->ov_dev) && task_fd_stat(c, dirfd, &st) == 0)
			statx_ident(&sx, &st);
		call_putfd(fd);
		if (r < 0)
			return v_error(e);
	} else {
		struct vfs_path p;
		const char *path = c->path[0][0] ? NULL : ".";
		if (path)
			snprintf(c->path[0], sizeof c->path[0], "%s", path);
		r = fs_walk(c, 0, 1, 0, (flags & AT_SYMLINK_NOFOLLOW) ? 0 : VW_FOLLOW, &p);
		if (r < 0)
			return fs_fail(c, &p, r);
		if (!p.exists) {
			struct verdict v = fs_fail(c, &p, -ENOENT);
			vfs_path_release(&p);
			return v;
		}
		if (p.kind == VN_HOST) {
			int sf = (flags & AT_STATX_SYNC_TYPE) | AT_SYMLINK_NOFOLLOW;
			if (p.parent >= 0)
				VFS_DAC_RETRY(&p, r, statx(p.parent, p.name, sf, mask, &sx));
			else
				r = statx(vfs_root_fd(&p), "", sf | AT_EMPTY_PATH, mask, &sx);
			if (r < 0)
				r = -errno;
			/* /dev placeholders stand for the host's device */
			if (r == 0 && p.mnt->kind == MNT_DEV && S_ISCHR(p.st.st_mode))
				stat_to_statx(&p.st, &sx);
			if (r == 0 && p.upper) {
				struct stat st = p.st;
				vfs_origin(&p, &st);
				statx_ident(&sx, &st);
			}
		} else {
			struct stat st;
			r = node_stat(c, &p, &st);
			if (r == 0)
				stat_to_statx(&st, &sx);
		}
		vfs_path_release(&p);
		if (r < 0)
			return v_error(-r);
	}
standin:
	show_owner(c, &sx.stx_uid, &sx.stx_gid);
	if (call_write(c, buf, &sx, sizeof sx) < 0)
		return v_error(EFAULT);
	return v_value(0);
}

static struct verdict access_common(struct call *c, int dirfd_argi, int path_argi, int mode,
				    int flags)
{
	if (mode & ~(R_OK | W_OK | X_OK))
		return v_error(EINVAL);
	if (flags & ~(AT_SYMLINK_NOFOLLOW | AT_EACCESS | AT_EMPTY_PATH))
		return v_error(EINVAL);
	struct vfs_path p;
	int r = fs_walk(c, dirfd_argi, path_argi, 0,
			((flags & AT_SYMLINK_NOFOLLOW) ? 0 : VW_FOLLOW) |
				((flags & AT_EMPTY_PATH) ? VW_EMPTY_PATH : 0),
			&p);
	if (r < 0)
		return fs_fail(c, &p, r);
	struct verdict v;
	if (!p.exists) {
		v = fs_fail(c, &p, -ENOENT);
	} else if ((mode & W_OK) && p.mnt->ro && (S_ISREG(p.st.st_mode) || S_ISDIR(p.st.st_mode))) {
		v = v_error(EROFS);
	} else if (p.kind != VN_HOST) {
		v = (mode & (W_OK | X_OK)) && !S_ISDIR(p.st.st_mode) ? v_error(EACCES) : v_value(0);
	} else if (p.mnt->kind == MNT_DEV && S_ISCHR(p.st.st_mode)) {
		v = (mode & X_OK) ? v_error(EACCES) : v_value(0);
	} else {
		/* The sandbox has no set-id programs: its real and effective
		 * ids agree, so checking with our fsuid answers both. */
		if (p.parent >= 0)
			r = faccessat(p.parent, p.name, mode, AT_EACCESS | AT_SYMLINK_NOFOLLOW);
		else
			r = (int)syscall(SYS_faccessat2, vfs_root_fd(&p), "", mode,
					 AT_EACCESS | AT_EMPTY_PATH);
		if (r < 0 && errno == EACCES)
			r = vfs_dac_access(&p, mode); /* the root inside (dac.c) */
		else if (r < 0)
			r = -errno;
		v = r < 0 ? v_error(-r) : v_value(0);
	}
	vfs_path_release(&p);
	return v;
}

struct verdict sys_access(struct call *c)
{
	return access_common(c, ARG_CWD, 0, (int)c->arg[1], 0);
}

struct verdict sys_faccessat(struct call *c)
{
	return access_common(c, 0, 1, (int)c->arg[2], 0);
}

struct verdict sys_faccessat2(struct call *c)
{
	return access_common(c, 0, 1, (int)c->arg[2], (int)c->arg[3]);
}

static struct verdict readlink_common(struct call *c, int dirfd_argi, int path_argi, int buf_argi,
				      int size_argi)
{
	int64_t size = (int64_t)c->arg[size_argi];
	if ((int)size <= 0)
		return v_error(EINVAL);
	struct vfs_path p;
	/* readlinkat(fd, ""): the fd's own link (an O_PATH|O_NOFOLLOW one) */
	int r = fs_walk(c, dirfd_argi, path_argi, 0, dirfd_argi >= 0 ? VW_EMPTY_PATH : 0, &p);
	if (r < 0)
		return fs_fail(c, &p, r);
	char link[PATH_MAX];
	ssize_t n = -ENOENT;
	struct verdict v;
	if (!p.exists) {
		v = fs_fail(c, &p, -ENOENT);
		goto out;
	}
	if (!S_ISLNK(p.st.st_mode)) {
		/* the kernel: ENOENT when the path was empty */
		v = v_error(c->path[0][0] ? EINVAL : ENOENT);
		goto out;
	}
	if (p.kind == VN_HOST) {
		VFS_DAC_RETRY(&p, n, readlinkat(p.parent, p.name, link, sizeof link));
		if (n < 0)
			n = -errno;
	} else {
		/* /proc links: ask the proc walk for the target again. */
		char dir[PATH_MAX];
		snprintf(dir, sizeof dir, "%s", p.rel);
		char *slash = strrchr(dir, '/');
		const char *name = slash ? slash + 1 : p.rel;
		if (slash)
			*slash = '\0';
		else
			snprintf(dir, sizeof dir, ".");
		struct stat st;
		int mfd;
		pid_t mpid;
		r = procfs_walk_step(c->vfs, c->task, dir, name, &st, link, sizeof link, &mfd,
				     &mpid);
		n = r < 0 ? r : (ssize_t)strlen(link);
	}
	if (n < 0) {
		v = v_error((int)-n);
		goto out;
	}
	if (n > size)
		n = size;
	v = call_write(c, c->arg[buf_argi], link, (size_t)n) < 0 ? v_error(EFAULT) : v_value(n);
out:
	vfs_path_release(&p);
	return v;
}

struct verdict sys_readlink(struct call *c)
{
	return readlink_common(c, ARG_CWD, 0, 1, 2);
}

struct verdict sys_readlinkat(struct call *c)
{
	return readlink_common(c, 0, 1, 2, 3);
}

/* What statfs says of a mount: the filesystem a program would find on
 * Linux for that kind of mount (tmpfs for /tmp, overlayfs for the system
 * directories, proc...), with the numbers of the host filesystem below it
 * (a quota's own when one is set: then the backing tmpfs is the mount). */
static void statfs_kind(const struct vfs_mount *m, struct statfs *sf)
{
	switch (m ? m->kind : MNT_BIND) {
	case MNT_TMPFS:
	case MNT_DEV:
	case MNT_ROOT: sf->f_type = TMPFS_MAGIC; break;
	case MNT_OVERLAY: sf->f_type = OVERLAYFS_SUPER_MAGIC; break;
	case MNT_PROC: sf->f_type = PROC_SUPER_MAGIC; break;
	case MNT_BIND: break; /* the host directory's own */
	}
	if (m && m->ro)
		sf->f_flags |= ST_RDONLY;
	sf->f_flags |= ST_NOSUID; /* set-id bits do nothing in the sandbox */
}

struct verdict sys_statfs(struct call *c)
{
	struct vfs_path p;
	int r = fs_walk(c, ARG_CWD, 0, 0, VW_FOLLOW, &p);
	if (r < 0)
		return fs_fail(c, &p, r);
	struct verdict v;
	struct statfs sf;
	if (!p.exists) {
		v = fs_fail(c, &p, -ENOENT);
		goto out;
	}
	if (p.kind != VN_HOST && p.kind != VN_HELD) {
		memset(&sf, 0, sizeof sf);
		sf.f_bsize = 4096;
		sf.f_namelen = 255;
		sf.f_frsize = 4096;
	} else {
		int fd = p.kind == VN_HELD ? p.magic_fd : fs_opath(c, &p);
		if (fd < 0) {
			v = v_error(-fd);
			goto out;
		}
		r = fstatfs(fd, &sf);
		if (p.kind != VN_HELD)
			close(fd);
		if (r < 0) {
			v = v_error(errno);
			goto out;
		}
	}
	statfs_kind(p.mnt, &sf);
	v = call_write(c, c->arg[1], &sf, sizeof sf) < 0 ? v_error(EFAULT) : v_value(0);
out:
	vfs_path_release(&p);
	return v;
}

struct verdict sys_fstatfs(struct call *c)
{
	int fd = call_getfd(c, (int)c->arg[0]);
	if (fd < 0)
		return v_error(EBADF);
	struct statfs sf;
	int r = fstatfs(fd, &sf);
	int e = errno;
	if (r == 0) {
		char self[64], host[PATH_MAX];
		fs_fdpath(fd, self, sizeof self);
		ssize_t n = readlink(self, host, sizeof host - 1);
		/* pipes, sockets, memfds keep the kernel's answer */
		if (n > 0 && host[0] == '/' && strncmp(host, "/memfd:", 7) != 0)
			statfs_kind(fs_mount_of_fd(c->vfs, fd), &sf);
	}
	call_putfd(fd);
	if (r < 0)
		return v_error(e);
	return call_write(c, c->arg[1], &sf, sizeof sf) < 0 ? v_error(EFAULT) : v_value(0);
}
