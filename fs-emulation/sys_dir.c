/* getcwd, chdir, fchdir, chroot, mkdir, rmdir, mknod. */
#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "core/creds.h"
#include "core/task.h"
#include "fs-emulation/fs.h"
#include "syscall-table/handlers.h"

struct verdict sys_getcwd(struct call *c)
{
	const char *cwd;
	if (fs_cwd(c, &cwd) < 0)
		return v_error(ENOENT); /* as Linux: the cwd was removed */
	/* Below a chroot: the path from that root; outside it, as Linux,
	 * "(unreachable)" before the path. */
	char shown[PATH_MAX + 16];
	const char *root = c->task->proc->fs->root;
	size_t rl = strlen(root);
	if (rl && strncmp(cwd, root, rl) == 0 && (cwd[rl] == '/' || !cwd[rl]))
		cwd = cwd[rl] ? cwd + rl : "/";
	else if (rl)
		cwd = (snprintf(shown, sizeof shown, "(unreachable)%s", cwd), shown);
	size_t n = strlen(cwd) + 1;
	if (n > (size_t)c->arg[1])
		return v_error(ERANGE);
	if (call_write(c, c->arg[0], cwd, n) < 0)
		return v_error(EFAULT);
	return v_value((int64_t)n);
}

/* Search permission on a directory node, as chdir checks it. */
static int may_search(struct vfs_path *p)
{
	if (p->kind == VN_HELD)
		return syscall(SYS_faccessat2, p->magic_fd, "", X_OK, AT_EACCESS | AT_EMPTY_PATH) <
				       0
			       ? -errno
			       : 0;
	if (p->kind != VN_HOST)
		return 0;
	int r = p->parent >= 0 ? faccessat(p->parent, p->name, X_OK, AT_EACCESS)
			       : (int)syscall(SYS_faccessat2, vfs_root_fd(p), "", X_OK,
					      AT_EACCESS | AT_EMPTY_PATH);
	if (r < 0 && errno == EACCES)
		return vfs_dac_access(p, X_OK); /* the root inside (dac.c) */
	return r < 0 ? -errno : 0;
}

/* chdir's and chroot's walk to a directory the caller may search: 0 with
 * *p to release, or -1 with the verdict in *v (nothing to release). */
static int walk_search_dir(struct call *c, struct vfs_path *p, struct verdict *v)
{
	int r = fs_walk(c, ARG_CWD, 0, 0, VW_FOLLOW, p);
	if (r < 0) {
		*v = fs_fail(c, p, r);
		return -1;
	}
	if (!p->exists)
		*v = fs_fail(c, p, -ENOENT);
	else if (!S_ISDIR(p->st.st_mode))
		*v = v_error(ENOTDIR);
	else if ((r = may_search(p)) < 0)
		*v = v_error(-r);
	else
		return 0;
	vfs_path_release(p);
	return -1;
}

struct verdict sys_chdir(struct call *c)
{
	struct vfs_path p;
	struct verdict v;
	if (walk_search_dir(c, &p, &v) < 0)
		return v;
	/* Hold the directory itself: the cwd follows it through renames, as
	 * a kernel cwd does.  A removed one stays held (chdir(".") in it);
	 * anything else is synthetic. */
	int fd = p.kind == VN_HOST   ? fs_opath(c, &p)
		 : p.kind == VN_HELD ? fcntl(p.magic_fd, F_DUPFD_CLOEXEC, 0)
				     : -1;
	if (fd == -1 && p.kind == VN_HELD)
		fd = -errno;
	if ((p.kind == VN_HOST || p.kind == VN_HELD) && fd < 0) {
		v = v_error(-fd);
	} else {
		fs_set_cwd(c, p.vpath, fd);
		v = v_value(0);
	}
	vfs_path_release(&p);
	return v;
}

/* chroot(path), served by the process's root in the view (fsctx root):
 * the kernel's chroot is never reached, and the root only narrows what
 * the view already shows.  As Linux decides: the lookup's errors, search
 * permission on the directory (EACCES), then CAP_SYS_CHROOT (EPERM; the
 * root inside holds it). */
struct verdict sys_chroot(struct call *c)
{
	struct vfs_path p;
	struct verdict v;
	if (walk_search_dir(c, &p, &v) < 0)
		return v;
	unsigned ids[3];
	unsigned long long cap = 0;
	if (creds_thread_read(c->tid, ids, &cap) < 0 || !(cap & (1ULL << CAP_SYS_CHROOT)))
		v = v_error(EPERM);
	else {
		struct fsctx *fs = c->task->proc->fs;
		snprintf(fs->root, sizeof fs->root, "%s", strcmp(p.vpath, "/") ? p.vpath : "");
		v = v_value(0);
	}
	vfs_path_release(&p);
	return v;
}

/* Under /proc: synthetic, moat's own nodes. */
static bool fs_is_proc(const char *vpath)
{
	return strncmp(vpath, "/proc", 5) == 0 && (vpath[5] == '/' || !vpath[5]);
}

/* Search permission on directory fd `fd` (moat's copy of the caller's),
 * as fchdir checks it, with the root inside's override in its own layers
 * (dac.c). */
static bool may_search_fd(struct call *c, int fd)
{
	if (syscall(SYS_faccessat2, fd, "", X_OK, AT_EACCESS | AT_EMPTY_PATH) == 0 ||
	    errno != EACCES)
		return true;
	struct vfs_mount *m = fs_mount_of_fd(c->vfs, fd);
	if (!vfs_dac_fd(m, m && fs_fd_changeable(c->vfs, fd) == 0, fd))
		return false;
	creds_dac_begin();
	bool ok = syscall(SYS_faccessat2, fd, "", X_OK, AT_EACCESS | AT_EMPTY_PATH) == 0;
	creds_dac_end();
	return ok;
}

/* fchdir's EACCES of a directory without search permission, told apart
 * from the registry's "not an fd moat knows". */
#define EACCES_SEARCH 4096

struct verdict sys_fchdir(struct call *c)
{
	char base[PATH_MAX] = "";
	int copy = call_getfd(c, (int)c->arg[0]);
	if (copy < 0)
		return v_error(EBADF);
	struct stat st;
	int r = fstat(copy, &st) < 0 ? -EBADF : !S_ISDIR(st.st_mode) ? -ENOTDIR : 0;
	if (r == 0)
		r = fs_vpath_of_fd(c->vfs, copy, base, sizeof base);
	/* Search permission, as fchdir checks it (a held directory is a
	 * host one: the kernel's check with the caller's ids). */
	if ((r == 0 || (r == -ENOENT && base[0])) && !fs_is_proc(base) && !may_search_fd(c, copy))
		r = -EACCES_SEARCH;
	if (r == -ENOENT && base[0])
		r = 0; /* a removed directory: the cwd holds it, and knows it is gone */
	if (r < 0) {
		call_putfd(copy);
		return r == -EACCES_SEARCH ? v_error(EACCES)
		       : r == -EACCES      ? v_deny(EACCES, "fs.unknown-dirfd")
					   : v_error(-r);
	}
	bool synthetic = fs_is_proc(base);
	if (synthetic) {
		call_putfd(copy);
		copy = -1;
	}
	fs_set_cwd(c, base, copy);
	return v_value(0);
}

static struct verdict mkdir_common(struct call *c, int dirfd_argi, int path_argi, mode_t mode)
{
	struct vfs_path p;
	struct verdict v;
	if (fs_walk_new_name(c, dirfd_argi, path_argi, 0, FS_NEW_SLASH, &p, &v) < 0)
		return v;
	int r;
	VFS_DAC_RETRY(&p, r, mkdirat(p.parent, p.name, mode & ~c->task->proc->fs->umask & 07777));
	v = r < 0 ? v_error(errno) : v_value(0);
	vfs_path_release(&p);
	return v;
}

struct verdict sys_mkdir(struct call *c)
{
	return mkdir_common(c, ARG_CWD, 0, (mode_t)c->arg[1]);
}

struct verdict sys_mkdirat(struct call *c)
{
	return mkdir_common(c, 0, 1, (mode_t)c->arg[2]);
}

/* The last component as written: "." and ".." are refused by rmdir. */
static int last_is_dot(const char *path)
{
	switch (fs_last_type(path)) {
	case FS_LAST_DOT: return -EINVAL;
	case FS_LAST_DOTDOT: return -ENOTEMPTY;
	default: return 0;
	}
}

struct verdict fs_remove(struct call *c, int dirfd_argi, int path_argi, bool dir);

/* unlinkat of walked node `p`, with the root inside's override (dac.c)
 * where the kernel refused: EACCES of its directory, or EPERM of a sticky
 * one (/tmp) for a node of another sandbox id, which root's CAP_FOWNER
 * passes.  -1 with errno, or 0. */
static int remove_at(struct vfs_path *p, bool dir)
{
	int r;
	VFS_DAC_RETRY(p, r, unlinkat(p->parent, p->name, dir ? AT_REMOVEDIR : 0));
	if (r < 0 && errno == EPERM)
		r = vfs_dac_unlink_sticky(p, dir);
	return r;
}

struct verdict fs_remove(struct call *c, int dirfd_argi, int path_argi, bool dir)
{
	struct vfs_path p;
	int r = fs_walk(c, dirfd_argi, path_argi, 0, 0, &p);
	if (r < 0)
		return fs_fail(c, &p, r);
	struct verdict v;
	if (!p.exists)
		v = fs_fail(c, &p, -ENOENT);
	else if (dir && (r = last_is_dot(c->path[0])) < 0)
		v = v_error(-r);
	else if (dir && !S_ISDIR(p.st.st_mode))
		v = v_error(ENOTDIR);
	else if (!dir && S_ISDIR(p.st.st_mode))
		v = v_error(EISDIR);
	else if (p.parent < 0 || vfs_holds_mount(c->vfs, p.vpath))
		v = v_error(EBUSY); /* a mount point, or above one */
	else if ((r = vfs_make_writable(c->vfs, &p, VC_REMOVE)) < 0)
		v = v_error(-r);
	else if (remove_at(&p, dir) < 0)
		v = v_error(errno);
	else
		v = v_value(0);
	if (dir && v.kind == V_VALUE)
		vfs_invalidate(c->vfs, p.mnt);
	vfs_path_release(&p);
	return v;
}

struct verdict sys_rmdir(struct call *c)
{
	return fs_remove(c, ARG_CWD, 0, true);
}

static struct verdict mknod_common(struct call *c, int dirfd_argi, int path_argi, mode_t mode,
				   dev_t dev)
{
	mode_t type = mode & S_IFMT;
	if (type == S_IFCHR || type == S_IFBLK)
		return v_deny(EPERM, "fs.device-node");
	if (type != 0 && type != S_IFREG && type != S_IFIFO && type != S_IFSOCK)
		return v_error(EINVAL);
	struct vfs_path p;
	struct verdict v;
	if (fs_walk_new_name(c, dirfd_argi, path_argi, 0, 0, &p, &v) < 0)
		return v;
	mode_t perm = fs_file_mode(mode & ~c->task->proc->fs->umask);
	int r;
	VFS_DAC_RETRY(&p, r, mknodat(p.parent, p.name, (type ? type : S_IFREG) | perm, dev));
	v = r < 0 ? v_error(errno) : v_value(0);
	vfs_path_release(&p);
	return v;
}

struct verdict sys_mknod(struct call *c)
{
	return mknod_common(c, ARG_CWD, 0, (mode_t)c->arg[1], (dev_t)c->arg[2]);
}

struct verdict sys_mknodat(struct call *c)
{
	return mknod_common(c, 0, 1, (mode_t)c->arg[2], (dev_t)c->arg[3]);
}
