/* unlink, rename, symlink, link. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "core/task.h"
#include "fs-emulation/fs.h"
#include "syscall-table/handlers.h"

struct verdict fs_remove(struct call *c, int dirfd_argi, int path_argi, bool dir);

struct verdict sys_unlink(struct call *c)
{
	return fs_remove(c, ARG_CWD, 0, false);
}

struct verdict sys_unlinkat(struct call *c)
{
	int flags = (int)c->arg[2];
	if (flags & ~AT_REMOVEDIR)
		return v_error(EINVAL);
	return fs_remove(c, 0, 1, flags & AT_REMOVEDIR);
}

/* What the kernel says before it looks at the layers: an overlay's
 * placeholder of a lower directory must not answer for a type mismatch. */
static int rename_check(const struct vfs_path *a, const struct vfs_path *b, unsigned flags)
{
	if (!b->exists || (flags & RENAME_EXCHANGE) || a->mnt->ro)
		return 0;
	if (flags & RENAME_NOREPLACE)
		return -EEXIST;
	if (a->st.st_dev == b->st.st_dev && a->st.st_ino == b->st.st_ino)
		return 0;
	if (S_ISDIR(a->st.st_mode) && !S_ISDIR(b->st.st_mode))
		return -ENOTDIR;
	if (!S_ISDIR(a->st.st_mode) && S_ISDIR(b->st.st_mode))
		return -EISDIR;
	return 0;
}

/* The mount of the directory a walked name is in: what the kernel compares
 * for EXDEV, right after looking up both parents and before anything about
 * the names themselves.  A mount root's is the mount it sits on.  A final
 * "." is looked up in the directory itself, a final ".." in the directory
 * before it ("X/..": X, walked again; this is the error path only). */
static struct vfs_mount *parent_mount(struct call *c, int dirfd_argi, const char *path,
				      const struct vfs_path *p)
{
	enum fs_last last = fs_last_type(path);
	if (last == FS_LAST_DOTDOT) {
		char x[PATH_MAX];
		size_t n = strlen(path);
		while (n > 0 && path[n - 1] == '/')
			n--;
		n -= 2;
		while (n > 0 && path[n - 1] == '/')
			n--;
		if (n == 0)
			snprintf(x, sizeof x, "%s", path[0] == '/' ? "/" : ".");
		else
			snprintf(x, sizeof x, "%.*s", (int)n, path);
		struct vfs_path t;
		struct vfs_mount *m = p->mnt;
		if (fs_walk_str(c, dirfd_argi, x, -1, VW_FOLLOW, &t) == 0 && t.exists)
			m = t.mnt;
		vfs_path_release(&t);
		return m;
	}
	if (last != FS_LAST_NORM || strcmp(p->rel, ".") != 0)
		return p->mnt;
	char dir[PATH_MAX];
	snprintf(dir, sizeof dir, "%s", p->vpath);
	char *slash = strrchr(dir, '/');
	if (slash)
		*slash = '\0';
	return vfs_mount_of(c->vfs, dir[0] ? dir : "/");
}

/* Is virtual path `p` strictly below directory `dir`? */
static bool below(const char *p, const char *dir)
{
	size_t n = strlen(dir);
	return strncmp(p, dir, n) == 0 && (p[n] == '/' || (n == 1 && p[1]));
}

static struct verdict rename_common(struct call *c, int odir, int opath, int ndir, int npath,
				    unsigned flags)
{
	if (flags & ~(RENAME_NOREPLACE | RENAME_EXCHANGE | RENAME_WHITEOUT))
		return v_error(EINVAL);
	if ((flags & RENAME_EXCHANGE) && (flags & (RENAME_NOREPLACE | RENAME_WHITEOUT)))
		return v_error(EINVAL);
	/* The last components are looked up, never followed: a trailing
	 * slash is judged below, in the kernel's order. */
	struct vfs_path a, b;
	int r = fs_walk(c, odir, opath, 0, VW_LAST_NAME, &a);
	if (r < 0)
		return fs_fail(c, &a, r);
	r = fs_walk(c, ndir, npath, 1, VW_LAST_NAME, &b);
	if (r < 0) {
		vfs_path_release(&a);
		return fs_fail(c, &b, r);
	}
	enum fs_last la = fs_last_type(c->path[0]), lb = fs_last_type(c->path[1]);
	struct vfs_mount *pm = parent_mount(c, odir, c->path[0], &a);
	struct verdict v;
	if (!a.exists && a.outside)
		v = fs_fail(c, &a, -ENOENT);
	else if (b.outside)
		v = v_deny(ENOENT, "fs.outside-view");
	else if (pm != parent_mount(c, ndir, c->path[1], &b))
		v = v_error(EXDEV);
	else if (la != FS_LAST_NORM)
		v = v_error(EBUSY);
	else if (lb != FS_LAST_NORM)
		v = v_error((flags & RENAME_NOREPLACE) ? EEXIST : EBUSY);
	else if (pm->ro)
		v = v_error(EROFS);
	else if (!a.exists)
		v = v_error(ENOENT);
	else if ((flags & RENAME_NOREPLACE) && b.exists)
		v = v_error(EEXIST);
	else if ((flags & RENAME_EXCHANGE) && !b.exists)
		v = v_error(ENOENT);
	else if ((flags & RENAME_EXCHANGE) && !S_ISDIR(b.st.st_mode) && b.trailing_slash)
		v = v_error(ENOTDIR);
	else if (!S_ISDIR(a.st.st_mode) &&
		 (a.trailing_slash || (!(flags & RENAME_EXCHANGE) && b.trailing_slash)))
		v = v_error(ENOTDIR);
	else if (a.parent < 0 || (b.exists && b.parent < 0) || vfs_holds_mount(c->vfs, a.vpath) ||
		 vfs_holds_mount(c->vfs, b.vpath))
		v = v_error(EBUSY); /* mounts are placed by path: their parents stay */
	else if (a.mnt != b.mnt)
		v = v_error(EXDEV);
	else if (a.kind != VN_HOST || b.kind != VN_HOST)
		v = v_error(a.mnt->ro ? EROFS : EACCES);
	else if ((r = rename_check(&a, &b, flags)) < 0)
		v = v_error(-r);
	else if (b.exists && !(flags & RENAME_EXCHANGE) && a.st.st_dev == b.st.st_dev &&
		 a.st.st_ino == b.st.st_ino)
		v = v_value(0); /* two names of one file: nothing happens (POSIX) */
	else if (S_ISDIR(a.st.st_mode) && below(b.vpath, a.vpath))
		v = v_error(EINVAL); /* into itself, before an overlay's EXDEV */
	else if ((r = vfs_make_writable(c->vfs, &a, VC_RENAME)) < 0 ||
		 (r = vfs_make_writable(c->vfs, &b,
					(flags & RENAME_EXCHANGE) ? VC_RENAME
					: b.exists                ? VC_REMOVE
								  : VC_CREATE)) < 0)
		v = v_error(-r);
	else if (renameat2(a.parent, a.name, b.parent, b.name, flags) < 0 &&
		 ((errno != EACCES && errno != EPERM) || vfs_dac_rename(&a, &b, flags) < 0))
		v = v_error(errno);
	else
		v = v_value(0);
	if (v.kind == V_VALUE)
		vfs_invalidate(c->vfs, a.mnt); /* a directory may have moved */
	vfs_path_release(&a);
	vfs_path_release(&b);
	return v;
}

struct verdict sys_rename(struct call *c)
{
	return rename_common(c, ARG_CWD, 0, ARG_CWD, 1, 0);
}

struct verdict sys_renameat(struct call *c)
{
	return rename_common(c, 0, 1, 2, 3, 0);
}

struct verdict sys_renameat2(struct call *c)
{
	return rename_common(c, 0, 1, 2, 3, (unsigned)c->arg[4]);
}

static struct verdict symlink_common(struct call *c, int target_argi, int dirfd_argi, int path_argi)
{
	/* The target is text, stored as written; it is walked (virtually)
	 * only when something follows the link. */
	int r = call_read_path(c, target_argi, 1);
	if (r < 0)
		return v_error(r == -ENAMETOOLONG ? ENAMETOOLONG : EFAULT);
	if (c->path[1][0] == '\0')
		return v_error(ENOENT);
	char target[PATH_MAX];
	snprintf(target, sizeof target, "%s", c->path[1]);
	struct vfs_path p;
	struct verdict v;
	if (fs_walk_new_name(c, dirfd_argi, path_argi, 0, 0, &p, &v) < 0)
		return v;
	VFS_DAC_RETRY(&p, r, symlinkat(target, p.parent, p.name));
	v = r < 0 ? v_error(errno) : v_value(0);
	vfs_path_release(&p);
	return v;
}

struct verdict sys_symlink(struct call *c)
{
	return symlink_common(c, 0, ARG_CWD, 1);
}

struct verdict sys_symlinkat(struct call *c)
{
	return symlink_common(c, 0, 1, 2);
}

/* linkat(fd, "", AT_EMPTY_PATH) by a process without CAP_DAC_READ_SEARCH
 * (the sandbox never has it): Linux 6.10 and later allow it for a file
 * opened with the caller's own credentials, earlier kernels never.  moat
 * answers as the kernel it runs on would. */
static bool kernel_links_own_fds(void)
{
	static int known = -1;
	if (known < 0) {
		struct utsname u;
		int major = 0, minor = 0;
		known = uname(&u) == 0 && sscanf(u.release, "%d.%d", &major, &minor) == 2 &&
			(major > 6 || (major == 6 && minor >= 10));
	}
	return known;
}

/* link and linkat, in the kernel's order: the old name (with the
 * credentials rule for an fd), the new name (EEXIST), EXDEV, and only then
 * what cannot be linked (a directory: EPERM). */
static struct verdict link_common(struct call *c, int odir, int opath, int ndir, int npath,
				  int flags)
{
	if (flags & ~(AT_SYMLINK_FOLLOW | AT_EMPTY_PATH))
		return v_error(EINVAL);
	int src = -1;                /* an fd of the file to link */
	struct vfs_mount *om = NULL; /* the old name's mount (NULL: none of ours) */
	bool linkable = true;        /* false: a directory or a synthetic node */
	struct vfs_path a = { .parent = -1 }, b;
	struct verdict v;
	struct stat st;
	int r = call_read_path(c, opath, 0);
	if (r < 0)
		return v_error(r == -ENAMETOOLONG ? ENAMETOOLONG : EFAULT);
	if ((flags & AT_EMPTY_PATH) && c->path[0][0] == '\0') {
		/* linkat(fd, "", ...): give a name to an open file (O_TMPFILE). */
		int fd = (int)c->arg[odir];
		if (fd == AT_FDCWD) {
			const char *cwd;
			fs_cwd(c, &cwd);
			om = vfs_mount_of(c->vfs, cwd);
			linkable = false; /* the cwd: a directory */
		} else {
			src = call_getfd(c, fd);
			if (src < 0)
				return v_error(EBADF);
			/* The kernel's f_cred rule: only a file this process
			 * opened itself; an inherited or received fd is ENOENT. */
			if (!kernel_links_own_fds() || !proc_fd_granted(c->task->proc, fd)) {
				call_putfd(src);
				return v_error(ENOENT);
			}
			om = fs_mount_of_fd(c->vfs, src);
			linkable = fstat(src, &st) == 0 && !S_ISDIR(st.st_mode);
		}
	} else {
		r = fs_walk(c, odir, opath, 0, (flags & AT_SYMLINK_FOLLOW) ? VW_FOLLOW : 0, &a);
		if (r < 0)
			return fs_fail(c, &a, r);
		if (!a.exists) {
			v = fs_fail(c, &a, -ENOENT);
			vfs_path_release(&a);
			return v;
		}
		if (a.kind == VN_MAGIC_FD) {
			/* linkat("/proc/self/fd/N", AT_SYMLINK_FOLLOW): the man
			 * page's way to name an O_TMPFILE file; link that file. */
			struct proc *owner = proc_find(a.magic_pid);
			src = owner ? (int)syscall(SYS_pidfd_getfd, owner->pidfd, a.magic_fd, 0)
				    : -1;
			vfs_path_release(&a);
			if (src < 0)
				return v_error(ENOENT);
			om = fs_mount_of_fd(c->vfs, src);
			linkable = fstat(src, &st) == 0 && !S_ISDIR(st.st_mode);
		} else {
			/* A /proc entry itself (a magic link not followed) sits
			 * on /proc: EXDEV below, as the kernel says. */
			om = a.mnt;
			linkable = a.kind == VN_HOST && !S_ISDIR(a.st.st_mode);
		}
	}
	if (fs_walk_new_name(c, ndir, npath, 1, FS_NEW_LATER, &b, &v) < 0)
		goto out;
	if (b.kind != VN_HOST)
		v = v_error(ENOENT); /* /proc's lookup fails on a name it lacks */
	else if (b.mnt->ro)
		v = v_error(EROFS);
	else if (om != b.mnt)
		v = v_error(EXDEV);
	else if (!linkable)
		v = v_error(EPERM);
	else if (src >= 0 && fs_fd_changeable(c->vfs, src) < 0)
		/* An fd's file must be one the sandbox may change where it is:
		 * a lower file of an overlay linked into the upper layer would
		 * be a host file writable through the new name. */
		v = v_error(EXDEV);
	else {
		r = 0;
		/* A lower file of an overlay is linked as its upper copy (the
		 * kernel's protected_hardlinks check then applies to that). */
		if (src < 0 && a.mnt->kind == MNT_OVERLAY && !a.upper)
			r = vfs_make_writable(c->vfs, &a, VC_CHANGE);
		if (src < 0 && r >= 0)
			r = src = fs_opath(c, &a);
		if (r < 0)
			v = v_error(-r);
		else if ((r = vfs_make_writable(c->vfs, &b, VC_CREATE)) < 0)
			v = v_error(-r);
		else {
			/* Link the inode we hold, by its magic link: the name
			 * cannot be swapped under us. */
			char self[64];
			fs_fdpath(src, self, sizeof self);
			int lr;
			VFS_DAC_RETRY(&b, lr,
				      linkat(AT_FDCWD, self, b.parent, b.name, AT_SYMLINK_FOLLOW));
			v = lr < 0 ? v_error(errno) : v_value(0);
		}
	}
	vfs_path_release(&b);
out:
	if (src >= 0)
		call_putfd(src);
	vfs_path_release(&a);
	return v;
}

struct verdict sys_link(struct call *c)
{
	return link_common(c, ARG_CWD, 0, ARG_CWD, 1, 0);
}

struct verdict sys_linkat(struct call *c)
{
	return link_common(c, 0, 1, 2, 3, (int)c->arg[4]);
}
