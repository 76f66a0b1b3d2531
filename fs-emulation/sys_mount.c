/* mount(2) and umount2(2) of the sandbox, served by its mount table
 * (docs/filesystem.md "mount inside"): a tmpfs, a bind of a directory of
 * the view, a remount read-only, propagation changes (no-ops: every mount
 * of the view is private), and the unmount of what the sandbox mounted.
 * The kernel's mount is never reached.  No filesystem image, no other
 * type, no move. */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "core/creds.h"
#include "core/task.h"
#include "fs-emulation/fs.h"
#include "fs-emulation/vfs.h"
#include "syscall-table/handlers.h"

#define PROPAGATION (MS_SHARED | MS_PRIVATE | MS_SLAVE | MS_UNBINDABLE)

/* tmpfs's options the view honours: size= (bytes, with k/m/g) and mode=
 * (octal); the others (nr_inodes, uid, gid, huge...) EINVAL, as unknown
 * ones are to the kernel. */
static int tmpfs_opts(char *data, unsigned long long *size, mode_t *mode)
{
	for (char *save, *o = strtok_r(data, ",", &save); o; o = strtok_r(NULL, ",", &save)) {
		char *end;
		if (strncmp(o, "size=", 5) == 0) {
			unsigned long long n = strtoull(o + 5, &end, 10);
			int shift = tolower((unsigned char)*end) == 'k'   ? 10
				    : tolower((unsigned char)*end) == 'm' ? 20
				    : tolower((unsigned char)*end) == 'g' ? 30
									  : 0;
			if (end == o + 5 || (shift && end[1]) || (!shift && *end))
				return -EINVAL;
			*size = n << shift;
		} else if (strncmp(o, "mode=", 5) == 0) {
			unsigned long m = strtoul(o + 5, &end, 8);
			if (end == o + 5 || *end || m > 07777)
				return -EINVAL;
			*mode = (mode_t)m;
		} else if (*o) {
			return -EINVAL;
		}
	}
	return 0;
}

/* The mount whose root `vpath` is (the latest there), or -1. */
static int mount_at(const struct vfs *v, const char *vpath)
{
	for (int i = v->nmnt - 1; i > 0; i--)
		if (strcmp(v->mnt[i].vpath, vpath) == 0)
			return i;
	return -1;
}

/* A mount below `vpath`: a new mount there would not hide it (the table
 * finds the deepest), unlike Linux; refused (EBUSY). */
static bool has_mounts_below(const struct vfs *v, const char *vpath)
{
	size_t n = strlen(vpath);
	for (int i = 1; i < v->nmnt; i++)
		if (v->mnt[i].vlen > n && strncmp(v->mnt[i].vpath, vpath, n) == 0 &&
		    v->mnt[i].vpath[n == 1 ? 0 : n] == '/')
			return true;
	return false;
}

/* MS_BIND of the directory the call's first path names at `dst`: one host
 * directory behind it, a tmpfs's or a bind's (an overlay merges two; /proc
 * and /dev are moat's own).  The walk is let go of before the table
 * changes. */
static struct verdict bind_dir(struct call *c, const char *dst, unsigned long flags)
{
	struct vfs_path s;
	int r = fs_walk(c, ARG_CWD, 0, 1, VW_FOLLOW, &s);
	if (r < 0)
		return fs_fail(c, &s, r);
	struct verdict vd = v_value(0);
	char host[PATH_MAX];
	enum mnt_kind k = s.mnt->kind;
	bool src_ro = s.mnt->ro;
	if (!s.exists)
		vd = fs_fail(c, &s, -ENOENT);
	else if (!S_ISDIR(s.st.st_mode))
		vd = v_deny(EINVAL, "mount.bind-file");
	else if (s.kind != VN_HOST || (k != MNT_TMPFS && k != MNT_BIND))
		vd = v_deny(EINVAL, "mount.bind-source");
	else if (has_mounts_below(c->vfs, s.vpath))
		/* its host directory without the mounts on it: a --ro-bind
		 * there would turn writable, a --tmpfs show what it hides
		 * (Linux keeps such mounts locked for a user namespace) */
		vd = v_deny(EINVAL, "mount.bind-covers");
	else if ((r = vfs_host_path(&s, host, sizeof host)) < 0)
		vd = v_error(-r);
	vfs_path_release(&s);
	if (vd.kind != V_VALUE)
		return vd;
	r = vfs_mount_add(c->vfs, dst, k, src_ro || (flags & MS_RDONLY), host, 0, 0);
	if (r < 0)
		return v_error(-r);
	c->vfs->mnt[r].ro_locked = src_ro; /* a --ro-bind stays read-only, bound anywhere */
	c->vfs->aliased = true;
	return v_value(0);
}

/* A new tmpfs at `dst`, with the options in the call's data. */
static struct verdict new_tmpfs(struct call *c, const char *dst, unsigned long flags)
{
	char type[32];
	if (!c->arg[2] || call_read(c, c->arg[2], type, sizeof type) < 0)
		return v_error(EFAULT);
	type[sizeof type - 1] = '\0';
	if (strcmp(type, "tmpfs") != 0)
		return v_deny(EPERM, "mount.type");
	char data[512] = "";
	if (c->arg[4] && call_read(c, c->arg[4], data, sizeof data - 1) < 0)
		return v_error(EFAULT);
	unsigned long long size = 0;
	mode_t mode = 01777;
	if (tmpfs_opts(data, &size, &mode) < 0)
		return v_error(EINVAL);
	int r = vfs_mount_add(c->vfs, dst, MNT_TMPFS, flags & MS_RDONLY, NULL, size, mode);
	return r < 0 ? v_error(-r) : v_value(0);
}

/* A remount of the mount at `dst`: read-only always, writable again only
 * one the sandbox made writable (a --ro-bind, and a bind of one, stay
 * read-only). */
static struct verdict remount(struct call *c, const char *dst, unsigned long flags)
{
	struct vfs *v = c->vfs;
	int i = mount_at(v, dst);
	if (i < 0)
		return v_error(EINVAL);
	if (!(flags & MS_RDONLY) && v->mnt[i].ro && (!v->mnt[i].made || v->mnt[i].ro_locked))
		return v_deny(EPERM, "mount.remount-rw");
	v->mnt[i].ro = (flags & MS_RDONLY) != 0;
	return v_value(0);
}

/* A target named through /proc/PID/fd/N: the O_PATH fd of a symlink
 * there (its stand-in) is ENOENT, as Linux refuses a magic link to a
 * magic link; any other is not served (moat's table is by view path). */
static struct verdict magic_target(const struct vfs_path *t)
{
	struct proc *owner = proc_find(t->magic_pid);
	int fd = owner ? (int)syscall(SYS_pidfd_getfd, owner->pidfd, t->magic_fd, 0) : -1;
	struct stat st;
	bool standin = fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size == 0 &&
		       reg_get_link(st.st_dev, st.st_ino);
	if (fd >= 0)
		call_putfd(fd);
	return standin ? v_error(ENOENT) : v_deny(EINVAL, "mount.target-fd");
}

struct verdict sys_mount(struct call *c)
{
	unsigned long flags = (unsigned long)c->arg[3];
	/* As Linux: the capability first (the sandbox's root holds it over
	 * its own mount table), then the target. */
	if (c->creds->uid != 0)
		return v_error(EPERM);
	if (flags & MS_MOVE)
		return v_deny(EINVAL, "mount.move");
	struct vfs_path t;
	int r = fs_walk(c, ARG_CWD, 1, 0, VW_FOLLOW, &t);
	if (r < 0)
		return fs_fail(c, &t, r);
	char dst[PATH_MAX];
	snprintf(dst, sizeof dst, "%s", t.vpath);
	struct verdict vd = v_value(1); /* 1: go on, below */
	if (!t.exists)
		vd = fs_fail(c, &t, -ENOENT);
	else if (t.kind == VN_MAGIC_FD)
		vd = magic_target(&t);
	else if ((flags & PROPAGATION) && !(flags & (MS_BIND | MS_REMOUNT)))
		vd = v_value(0); /* every mount of the view is private already */
	else if (!S_ISDIR(t.st.st_mode))
		vd = v_error(ENOTDIR);
	else if (!(flags & MS_REMOUNT) && (!strcmp(dst, "/") || has_mounts_below(c->vfs, dst)))
		vd = v_error(EBUSY);
	else if (t.mnt->kind == MNT_PROC || t.mnt->kind == MNT_DEV)
		vd = v_deny(EPERM, "mount.target");
	vfs_path_release(&t);
	if (vd.kind != V_VALUE || vd.value != 1)
		return vd;
	if (flags & MS_REMOUNT)
		return remount(c, dst, flags);
	return (flags & MS_BIND) ? bind_dir(c, dst, flags) : new_tmpfs(c, dst, flags);
}

/* Is some sandbox process's cwd at or below `vpath`?  (Linux: EBUSY.) */
static int cwd_below(struct proc *p, void *arg)
{
	if (p->zombie)
		return 0; /* a zombie holds no cwd */
	const char *vpath = arg;
	size_t n = strlen(vpath);
	const char *cwd = p->fs->cwd;
	return strncmp(cwd, vpath, n) == 0 && (cwd[n] == '/' || cwd[n] == '\0');
}

struct verdict sys_umount2(struct call *c)
{
	int flags = (int)c->arg[1];
	if (flags & ~(MNT_FORCE | MNT_DETACH | MNT_EXPIRE | UMOUNT_NOFOLLOW))
		return v_error(EINVAL);
	if (c->creds->uid != 0)
		return v_error(EPERM);
	struct vfs_path t;
	int r = fs_walk(c, ARG_CWD, 0, 0, (flags & UMOUNT_NOFOLLOW) ? 0 : VW_FOLLOW, &t);
	if (r < 0)
		return fs_fail(c, &t, r);
	char vpath[PATH_MAX];
	snprintf(vpath, sizeof vpath, "%s", t.vpath);
	bool exists = t.exists;
	vfs_path_release(&t);
	if (!exists)
		return v_error(ENOENT);
	int i = mount_at(c->vfs, vpath);
	if (i < 0)
		return v_error(EINVAL); /* not a mount point */
	if (!c->vfs->mnt[i].made)
		return v_deny(EPERM, "mount.umount-view");
	if (has_mounts_below(c->vfs, vpath) || proc_foreach(cwd_below, vpath))
		return v_error(EBUSY);
	vfs_mount_remove(c->vfs, i);
	return v_value(0);
}
