/* chmod, chown, truncate, utimes, xattrs, inotify_add_watch. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/xattr.h>
#include <unistd.h>
#include <utime.h>

#include "core/creds.h"
#include "core/task.h"
#include "fs-emulation/fs.h"
#include "syscall-table/handlers.h"

static int meta_fd(struct call *c, int fd);

/* Walk to an existing node of a writable mount, for an attribute change. */
static int attr_walk(struct call *c, int dirfd_argi, int path_argi, int flags, struct vfs_path *p,
		     struct verdict *v)
{
	int r = fs_walk(c, dirfd_argi, path_argi, 0,
			((flags & AT_SYMLINK_NOFOLLOW) ? 0 : VW_FOLLOW) |
				((flags & AT_EMPTY_PATH) ? VW_EMPTY_PATH : 0),
			p);
	if (r < 0) {
		*v = fs_fail(c, p, r);
		return -1;
	}
	if (!p->exists) {
		*v = fs_fail(c, p, -ENOENT);
	} else if (p->kind != VN_HOST) {
		*v = v_error(EPERM);
	} else if ((r = vfs_make_writable(c->vfs, p, VC_CHANGE)) < 0) {
		*v = v_error(-r);
	} else {
		return 0;
	}
	vfs_path_release(p);
	return -1;
}

/* The sandbox's root over a node of the sandbox's own layers (a tmpfs
 * mount, an overlay's upper layer: reached beneath their roots, never a
 * host file) owned by host root or one of the sandbox's ids: what root's
 * CAP_CHOWN, CAP_FOWNER and CAP_FSETID allow there, moat does with its own
 * capabilities for that one change (docs/design.md "Root inside"). */
/* Decided on `fd`, an O_PATH fd of the node opened after the walk, and the
 * change is then made through that fd: the file checked is the file
 * changed, whatever a racing rename puts at the name (a copy-up of
 * another host user's file in the same directory must stay closed). */
static bool root_over(const struct call *c, const struct vfs_path *p, int fd)
{
	const struct creds *cr = c->creds;
	if (!cr->base || cr->uid != 0 || fd < 0)
		return false;
	bool own = p->mnt->kind == MNT_TMPFS || (p->mnt->kind == MNT_OVERLAY && p->upper);
	struct stat st;
	if (!own || fstat(fd, &st) < 0)
		return false;
	uid_t u = st.st_uid;
	return u == 0 || (u >= cr->base && u - cr->base < CREDS_NS_RANGE);
}

/* root_over for moat's copy `fd` of a caller's fd that meta_fd found
 * changeable (of a writable mount; of an overlay, its upper layer): where
 * the file is, the kernel's own path of it says (fs_mount_of_fd). */
static bool root_over_fd(const struct call *c, int fd)
{
	const struct creds *cr = c->creds;
	if (!cr->base || cr->uid != 0)
		return false;
	struct vfs_mount *m = fs_mount_of_fd(c->vfs, fd);
	struct stat st;
	if (!m || (m->kind != MNT_TMPFS && m->kind != MNT_OVERLAY) || fstat(fd, &st) < 0)
		return false;
	return st.st_uid == 0 || (st.st_uid >= cr->base && st.st_uid - cr->base < CREDS_NS_RANGE);
}

/* After a change of the file behind moat's copy `fd` of a caller's fd
 * failed (EACCES, EPERM): true, with root's DAC override and CAP_FOWNER
 * on (vfs_dac_leave ends them), when root_over_fd allows the change
 * (docs/filesystem.md "Permissions", dac.c): the owner's rights of the
 * sandbox's root over a file of its own layers. */
static bool root_fd_again(const struct call *c, int fd)
{
	if ((errno != EACCES && errno != EPERM) || !root_over_fd(c, fd))
		return false;
	creds_sticky_begin();
	return true;
}

/* chmod("/proc/self/fd/N"): glibc's fchmodat(AT_SYMLINK_NOFOLLOW) before
 * fchmodat2 (Debian 12's: tar, `chmod -h`) opens the node O_PATH and
 * changes it through its magic link.  The caller's fd N, as fchmod would
 * change it (meta_fd's rule: a file of a writable layer). */
static struct verdict chmod_magic(struct call *c, const struct vfs_path *p, mode_t mode)
{
	struct proc *owner = proc_find(p->magic_pid);
	int fd = owner ? (int)syscall(SYS_pidfd_getfd, owner->pidfd, p->magic_fd, 0) : -1;
	if (fd < 0)
		return v_error(ENOENT);
	int r = fs_fd_changeable(c->vfs, fd);
	struct stat st;
	if (r == 0 && fstat(fd, &st) < 0)
		r = -errno;
	if (r == 0 && S_ISLNK(st.st_mode))
		r = -EOPNOTSUPP;
	if (r < 0) {
		call_putfd(fd);
		return v_error(-r);
	}
	char self[64];
	fs_fdpath(fd, self, sizeof self);
	bool over = root_over_fd(c, fd);
	if (over)
		creds_owner_begin(c->creds);
	r = chmod(self, S_ISDIR(st.st_mode) ? mode & 07777 : fs_file_mode(mode)) < 0 ? -errno : 0;
	if (over)
		creds_admin_end(c->creds);
	call_putfd(fd);
	return r < 0 ? v_error(-r) : v_value(0);
}

static struct verdict chmod_common(struct call *c, int dirfd_argi, int path_argi, mode_t mode,
				   int flags)
{
	if (flags & ~(AT_SYMLINK_NOFOLLOW | AT_EMPTY_PATH))
		return v_error(EINVAL);
	struct vfs_path p;
	struct verdict v;
	int r = fs_walk(c, dirfd_argi, path_argi, 0,
			((flags & AT_SYMLINK_NOFOLLOW) ? 0 : VW_FOLLOW) |
				((flags & AT_EMPTY_PATH) ? VW_EMPTY_PATH : 0),
			&p);
	if (r == 0 && p.exists && p.kind == VN_MAGIC_FD) {
		v = chmod_magic(c, &p, mode);
		vfs_path_release(&p);
		return v;
	}
	if (r == 0)
		vfs_path_release(&p);
	if (attr_walk(c, dirfd_argi, path_argi, flags, &p, &v) < 0)
		return v;
	if (S_ISLNK(p.st.st_mode)) {
		v = v_error(EOPNOTSUPP);
	} else {
		/* chmod through an O_PATH fd of the node: a symlink swapped in
		 * after the walk is never followed to the host. */
		int fd = fs_opath(c, &p);
		char self[64];
		fs_fdpath(fd, self, sizeof self);
		bool over = root_over(c, &p, fd);
		if (over)
			creds_owner_begin(c->creds);
		if (fd < 0)
			v = v_error(-fd);
		else
			v = chmod(self, S_ISDIR(p.st.st_mode) ? mode & 07777 : fs_file_mode(mode)) <
					    0
				    ? v_error(errno)
				    : v_value(0);
		if (over)
			creds_admin_end(c->creds);
		if (fd >= 0)
			close(fd);
	}
	vfs_path_release(&p);
	return v;
}

struct verdict sys_chmod(struct call *c)
{
	return chmod_common(c, ARG_CWD, 0, (mode_t)c->arg[1], 0);
}

struct verdict sys_fchmodat(struct call *c)
{
	/* fchmodat has no flags argument; fchmodat2 (same handler) has. */
	return chmod_common(c, 0, 1, (mode_t)c->arg[2], c->nr == 452 ? (int)c->arg[3] : 0);
}

static struct verdict chown_common(struct call *c, int dirfd_argi, int path_argi, uid_t uid,
				   gid_t gid, int flags)
{
	if (flags & ~(AT_SYMLINK_NOFOLLOW | AT_EMPTY_PATH))
		return v_error(EINVAL);
	uint32_t hu, hg;
	if (creds_host_id(c->creds, uid, &hu) < 0 || creds_host_id(c->creds, gid, &hg) < 0)
		return v_error(EINVAL);
	struct vfs_path p;
	struct verdict v;
	if (attr_walk(c, dirfd_argi, path_argi, flags, &p, &v) < 0)
		return v;
	/* Through an O_PATH fd of the node: the file decided on is the file
	 * changed (root_over). */
	int fd = fs_opath(c, &p);
	bool over = root_over(c, &p, fd);
	if (over)
		creds_owner_begin(c->creds);
	int r = fd >= 0 ? fchownat(fd, "", hu, hg, AT_EMPTY_PATH) : -1;
	int e = fd >= 0 ? errno : -fd;
	if (over)
		creds_admin_end(c->creds);
	if (fd >= 0)
		close(fd);
	v = r < 0 ? v_error(e) : v_value(0);
	vfs_path_release(&p);
	return v;
}

struct verdict sys_chown(struct call *c)
{
	return chown_common(c, ARG_CWD, 0, (uid_t)c->arg[1], (gid_t)c->arg[2], 0);
}

struct verdict sys_lchown(struct call *c)
{
	return chown_common(c, ARG_CWD, 0, (uid_t)c->arg[1], (gid_t)c->arg[2], AT_SYMLINK_NOFOLLOW);
}

struct verdict sys_fchownat(struct call *c)
{
	return chown_common(c, 0, 1, (uid_t)c->arg[2], (gid_t)c->arg[3], (int)c->arg[4]);
}

struct verdict sys_truncate(struct call *c)
{
	int64_t len = (int64_t)c->arg[1];
	if (len < 0)
		return v_error(EINVAL);
	struct vfs_path p;
	struct verdict v;
	if (attr_walk(c, ARG_CWD, 0, 0, &p, &v) < 0)
		return v;
	if (S_ISDIR(p.st.st_mode))
		v = v_error(EISDIR);
	else if (!S_ISREG(p.st.st_mode))
		v = v_error(EINVAL);
	else {
		int fd = vfs_open(c->vfs, c->task, &p, O_WRONLY, 0);
		bool grows = len > p.st.st_size;
		unsigned long long limit = ~0ULL;
		if (fd < 0) {
			v = v_error(-fd);
		} else if (grows && task_fsize_limit(c->tid, &limit) < 0) {
			/* fail closed: the caller's limit is unknown */
			v = v_deny(EPERM, "limits.fsize-unknown");
		} else if (grows && (unsigned long long)len > limit) {
			/* The supervisor's ftruncate would not see the caller's
			 * RLIMIT_FSIZE: apply it as the kernel does for a file
			 * that grows past it (inode_newsize_ok). */
			task_signal(c->task, SIGXFSZ);
			v = v_error(EFBIG);
		} else {
			v = ftruncate(fd, len) < 0 ? v_error(errno) : v_value(0);
		}
		if (fd >= 0)
			close(fd);
	}
	vfs_path_release(&p);
	return v;
}

static struct verdict utimens_common(struct call *c, int dirfd_argi, int path_argi,
				     const struct timespec *ts, int flags)
{
	if (flags & ~(AT_SYMLINK_NOFOLLOW | AT_EMPTY_PATH))
		return v_error(EINVAL);
	struct vfs_path p;
	struct verdict v;
	if (attr_walk(c, dirfd_argi, path_argi, flags, &p, &v) < 0)
		return v;
	int r;
	if (p.parent >= 0)
		VFS_DAC_NODE_RETRY(&p, r, utimensat(p.parent, p.name, ts, AT_SYMLINK_NOFOLLOW));
	else
		r = utimensat(vfs_root_fd(&p), "", ts, AT_EMPTY_PATH);
	v = r < 0 ? v_error(errno) : v_value(0);
	vfs_path_release(&p);
	return v;
}

struct verdict sys_utimensat(struct call *c)
{
	struct timespec ts[2], *tp = NULL;
	if (c->arg[2]) {
		if (call_read(c, c->arg[2], ts, sizeof ts) < 0)
			return v_error(EFAULT);
		/* As the kernel: nothing to change, so neither the path, the
		 * fd nor the flags are looked at. */
		if (ts[0].tv_nsec == UTIME_OMIT && ts[1].tv_nsec == UTIME_OMIT)
			return v_value(0);
		for (int i = 0; i < 2; i++)
			if (ts[i].tv_nsec != UTIME_NOW && ts[i].tv_nsec != UTIME_OMIT &&
			    (ts[i].tv_nsec < 0 || ts[i].tv_nsec > 999999999))
				return v_error(EINVAL);
		tp = ts;
	}
	int flags = (int)c->arg[3];
	if (!c->arg[1] && (int)c->arg[0] != AT_FDCWD) {
		/* utimensat(fd, NULL, ...): futimens on the fd itself, which
		 * takes no flags.  (With AT_FDCWD the NULL path is a path:
		 * EFAULT from the walk.) */
		if (flags)
			return v_error(EINVAL);
		int fd = meta_fd(c, (int)c->arg[0]);
		if (fd < 0)
			return v_error(-fd);
		int r = futimens(fd, tp);
		if (r < 0 && root_fd_again(c, fd)) {
			r = futimens(fd, tp);
			vfs_dac_leave();
		}
		int e = errno;
		close(fd);
		return r < 0 ? v_error(e) : v_value(0);
	}
	return utimens_common(c, 0, 1, tp, flags);
}

static int read_timevals(struct call *c, uint64_t addr, struct timespec ts[2], struct timespec **tp)
{
	*tp = NULL;
	if (!addr)
		return 0;
	struct timeval tv[2];
	if (call_read(c, addr, tv, sizeof tv) < 0)
		return -EFAULT;
	for (int i = 0; i < 2; i++) {
		if (tv[i].tv_usec < 0 || tv[i].tv_usec >= 1000000)
			return -EINVAL;
		ts[i].tv_sec = tv[i].tv_sec;
		ts[i].tv_nsec = tv[i].tv_usec * 1000;
	}
	*tp = ts;
	return 0;
}

struct verdict sys_utimes(struct call *c)
{
	struct timespec ts[2], *tp;
	int r = read_timevals(c, c->arg[1], ts, &tp);
	return r < 0 ? v_error(-r) : utimens_common(c, ARG_CWD, 0, tp, 0);
}

struct verdict sys_futimesat(struct call *c)
{
	struct timespec ts[2], *tp;
	int r = read_timevals(c, c->arg[2], ts, &tp);
	return r < 0 ? v_error(-r) : utimens_common(c, 0, 1, tp, 0);
}

struct verdict sys_utime(struct call *c)
{
	struct timespec ts[2], *tp = NULL;
	if (c->arg[1]) {
		struct utimbuf ub;
		if (call_read(c, c->arg[1], &ub, sizeof ub) < 0)
			return v_error(EFAULT);
		ts[0] = (struct timespec){ ub.actime, 0 };
		ts[1] = (struct timespec){ ub.modtime, 0 };
		tp = ts;
	}
	return utimens_common(c, ARG_CWD, 0, tp, 0);
}

/* sys_xattr: below, after the name rules it shares with f*xattr. */

struct verdict sys_inotify_add_watch(struct call *c)
{
	uint32_t mask = (uint32_t)c->arg[2];
	struct vfs_path p;
	int r = fs_walk(c, ARG_CWD, 1, 0, (mask & IN_DONT_FOLLOW) ? 0 : VW_FOLLOW, &p);
	if (r < 0)
		return fs_fail(c, &p, r);
	struct verdict v;
	if (!p.exists) {
		v = fs_fail(c, &p, -ENOENT);
		goto out;
	}
	if (p.kind != VN_HOST) {
		v = v_error(EACCES);
		goto out;
	}
	int ifd = call_getfd(c, (int)c->arg[0]);
	if (ifd < 0) {
		v = v_error(EBADF);
		goto out;
	}
	int node = fs_opath(c, &p);
	if (node < 0) {
		call_putfd(ifd);
		v = v_error(-node);
		goto out;
	}
	/* A host inode the sandbox only reads (a lower layer, a --ro-bind)
	 * is the host's to use: a watch there must report nothing the host
	 * does (its reads and opens were a feed of every program it starts,
	 * of hidden files read; its changes, a clock of what it does).
	 * Nothing in the sandbox can change such a file, so the watch is
	 * valid and silent: IN_DELETE_SELF alone.  A directory that holds
	 * hidden names is watched through its listing copy.  The sandbox's
	 * own files and a writable --bind (shared by the user's choice) are
	 * watched as asked. */
	if (fs_fd_changeable(c->vfs, node) < 0) {
		mask = (mask & ~IN_ALL_EVENTS) | IN_DELETE_SELF;
		if (S_ISDIR(p.st.st_mode)) {
			char at[64];
			fs_fdpath(node, at, sizeof at);
			int d = open(at, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
			int f = d < 0 ? d : vfs_filter_listing(c->vfs, d, p.vpath);
			if (f >= 0 && f != d) {
				close(node);
				node = f;
			} else if (f >= 0) {
				close(f);
			}
		}
	}
	char self[64];
	fs_fdpath(node, self, sizeof self);
	r = inotify_add_watch(ifd, self, mask & ~IN_DONT_FOLLOW);
	v = r < 0 ? v_error(errno) : v_value(r);
	close(node);
	call_putfd(ifd);
out:
	vfs_path_release(&p);
	return v;
}

/* The caller's fd, if its file may have its metadata changed: a file of a
 * read-only mount answers EROFS (the host directory behind a --ro-bind is
 * not read-only to the kernel; the supervisor is what makes it so). */
static int meta_fd(struct call *c, int fd)
{
	int copy = call_getfd(c, fd);
	if (copy < 0)
		return -EBADF;
	int r = fs_fd_changeable(c->vfs, copy);
	if (r < 0) {
		call_putfd(copy);
		return r;
	}
	return copy;
}

struct verdict sys_fchmod(struct call *c)
{
	int fd = meta_fd(c, (int)c->arg[0]);
	if (fd < 0)
		return v_error(-fd);
	struct stat st;
	mode_t mode = (mode_t)c->arg[1];
	bool over = root_over_fd(c, fd);
	if (over)
		creds_owner_begin(c->creds);
	int r = fstat(fd, &st) == 0 && S_ISDIR(st.st_mode) ? fchmod(fd, mode & 07777)
							   : fchmod(fd, fs_file_mode(mode));
	int e = errno;
	if (over)
		creds_admin_end(c->creds);
	close(fd);
	return r < 0 ? v_error(e) : v_value(0);
}

struct verdict sys_fchown(struct call *c)
{
	int fd = meta_fd(c, (int)c->arg[0]);
	if (fd < 0)
		return v_error(-fd);
	uint32_t hu, hg;
	if (creds_host_id(c->creds, (uint32_t)c->arg[1], &hu) < 0 ||
	    creds_host_id(c->creds, (uint32_t)c->arg[2], &hg) < 0) {
		close(fd);
		return v_error(EINVAL);
	}
	bool over = root_over_fd(c, fd);
	if (over)
		creds_owner_begin(c->creds);
	int r = fchown(fd, hu, hg);
	int e = errno;
	if (over)
		creds_admin_end(c->creds);
	close(fd);
	return r < 0 ? v_error(e) : v_value(0);
}

#define XATTR_NAME_MAX_ 255
#define XATTR_SIZE_MAX_ 65536

/* The name in argument 1, into path slot `slot`; `any`: a name of every
 * namespace may be read (get), otherwise only user.* may be changed. */
static int read_xattr_name_in(struct call *c, int slot, bool any, char *name)
{
	/* names are short strings: read through the path reader */
	int r = call_read_path(c, 1, slot);
	if (r < 0)
		return r == -ENAMETOOLONG ? -ERANGE : -EFAULT;
	size_t n = strlen(c->path[slot]);
	if (n == 0 || n > XATTR_NAME_MAX_)
		return -ERANGE;
	if (any) {
		memcpy(name, c->path[slot], n + 1);
		return 0;
	}
	/* Only the user namespace: security.capability would hand out file
	 * capabilities, trusted.* and security.* are the host's business. */
	if (strncmp(c->path[slot], "system.", 7) == 0)
		return -EOPNOTSUPP; /* ACLs: cp -a and mv fall back to the mode bits */
	if (strncmp(c->path[slot], "user.", 5) != 0)
		return -EPERM;
	memcpy(name, c->path[slot], n + 1);
	return 0;
}

static int read_xattr_name(struct call *c, char *name)
{
	return read_xattr_name_in(c, 0, false, name);
}

static struct verdict xattr_name_fail(int r)
{
	return r == -EPERM ? v_deny(EPERM, "fs.xattr-namespace") : v_error(-r);
}

struct verdict sys_fsetxattr(struct call *c)
{
	char name[XATTR_NAME_MAX_ + 1];
	int r = read_xattr_name(c, name);
	if (r < 0)
		return xattr_name_fail(r);
	size_t size = (size_t)c->arg[3];
	if (size > XATTR_SIZE_MAX_)
		return v_error(E2BIG);
	static char value[XATTR_SIZE_MAX_];
	if (size && call_read(c, c->arg[2], value, size) < 0)
		return v_error(EFAULT);
	int fd = meta_fd(c, (int)c->arg[0]);
	if (fd < 0)
		return v_error(-fd);
	r = fsetxattr(fd, name, value, size, (int)c->arg[4]);
	if (r < 0 && root_fd_again(c, fd)) {
		r = fsetxattr(fd, name, value, size, (int)c->arg[4]);
		vfs_dac_leave();
	}
	int e = errno;
	close(fd);
	return r < 0 ? v_error(e) : v_value(0);
}

struct verdict sys_fremovexattr(struct call *c)
{
	char name[XATTR_NAME_MAX_ + 1];
	int r = read_xattr_name(c, name);
	if (r < 0)
		return xattr_name_fail(r);
	int fd = meta_fd(c, (int)c->arg[0]);
	if (fd < 0)
		return v_error(-fd);
	r = fremovexattr(fd, name);
	if (r < 0 && root_fd_again(c, fd)) {
		r = fremovexattr(fd, name);
		vfs_dac_leave();
	}
	int e = errno;
	close(fd);
	return r < 0 ? v_error(e) : v_value(0);
}

/* setxattr, getxattr, listxattr, removexattr and their l* forms: on a host
 * node of the view, through its parent directory's fd and the l* calls
 * (the walk already followed what was to be followed, so nothing is
 * followed again); changes only in writable mounts (an overlay copies the
 * node up first), names of the user namespace only.  Synthetic nodes have
 * none: EOPNOTSUPP. */
enum xattr_op { SET, GET, LIST, REMOVE };

/* The call itself, on `at` (followed when `follow`: a mount root's fd). */
static ssize_t xattr_op(enum xattr_op op, bool follow, const char *at, const char *name,
			char *value, size_t size, size_t cap, int flags)
{
	switch (op) {
	case SET:
		return follow ? setxattr(at, name, value, size, flags)
			      : lsetxattr(at, name, value, size, flags);
	case REMOVE: return follow ? removexattr(at, name) : lremovexattr(at, name);
	case GET:
		return follow ? getxattr(at, name, cap ? value : NULL, cap)
			      : lgetxattr(at, name, cap ? value : NULL, cap);
	case LIST:
		return follow ? listxattr(at, cap ? value : NULL, cap)
			      : llistxattr(at, cap ? value : NULL, cap);
	}
	return -1;
}

struct verdict sys_xattr(struct call *c)
{
	enum xattr_op op;
	bool nofollow;
	switch (c->nr) {
	case SYS_setxattr: op = SET, nofollow = false; break;
	case SYS_lsetxattr: op = SET, nofollow = true; break;
	case SYS_getxattr: op = GET, nofollow = false; break;
	case SYS_lgetxattr: op = GET, nofollow = true; break;
	case SYS_listxattr: op = LIST, nofollow = false; break;
	case SYS_llistxattr: op = LIST, nofollow = true; break;
	case SYS_removexattr: op = REMOVE, nofollow = false; break;
	default: op = REMOVE, nofollow = true; break;
	}
	char name[XATTR_NAME_MAX_ + 1] = "";
	static char value[XATTR_SIZE_MAX_];
	size_t size = op == SET    ? (size_t)c->arg[3]
		      : op == LIST ? (size_t)c->arg[2]
		      : op == GET  ? (size_t)c->arg[3]
				   : 0;
	if (op != LIST) {
		int r = read_xattr_name_in(c, 1, op == GET, name);
		if (r < 0)
			return xattr_name_fail(r);
	}
	if (op == SET) {
		if (size > XATTR_SIZE_MAX_)
			return v_error(E2BIG);
		if (size && call_read(c, c->arg[2], value, size) < 0)
			return v_error(EFAULT);
		if ((int)c->arg[4] & ~(XATTR_CREATE | XATTR_REPLACE))
			return v_error(EINVAL);
	}
	struct vfs_path p;
	int r = fs_walk(c, ARG_CWD, 0, 0, nofollow ? 0 : VW_FOLLOW, &p);
	if (r < 0)
		return fs_fail(c, &p, r);
	struct verdict v;
	if (!p.exists) {
		v = fs_fail(c, &p, -ENOENT);
		goto out;
	}
	if (p.kind != VN_HOST || (p.mnt->kind == MNT_DEV && !S_ISDIR(p.st.st_mode))) {
		v = op == LIST ? v_value(0) : v_error(EOPNOTSUPP); /* none there */
		goto out;
	}
	if ((op == SET || op == REMOVE) && (r = vfs_make_writable(c->vfs, &p, VC_CHANGE)) < 0) {
		v = v_error(-r);
		goto out;
	}
	char at[PATH_MAX + 64];
	int fd = -1;
	if (p.parent >= 0) {
		snprintf(at, sizeof at, "/proc/self/fd/%d/%s", p.parent, p.name);
	} else {
		fd = fs_opath(c, &p); /* a mount root: a directory, followed */
		if (fd < 0) {
			v = v_error(-fd);
			goto out;
		}
		fs_fdpath(fd, at, sizeof at);
	}
	bool root = fd >= 0;
	size_t cap = size > XATTR_SIZE_MAX_ ? XATTR_SIZE_MAX_ : size;
	ssize_t n = xattr_op(op, root, at, name, value, size, cap, (int)c->arg[4]);
	/* the root inside in its own layers (dac.c): a look up in the
	 * directory for a read, the node's owner's rights for a change */
	if (n < 0 && !root &&
	    ((op == GET || op == LIST) ? vfs_dac_enter(&p) : vfs_dac_enter_node(&p))) {
		n = xattr_op(op, root, at, name, value, size, cap, (int)c->arg[4]);
		vfs_dac_leave();
	}
	int e = errno;
	if (fd >= 0)
		close(fd);
	if (n < 0) {
		v = v_error(e == E2BIG && size > XATTR_SIZE_MAX_ ? ERANGE : e);
	} else if ((op == GET || op == LIST) && cap && n > 0) {
		const uint64_t buf = op == GET ? c->arg[2] : c->arg[1];
		v = call_write(c, buf, value, (size_t)n) < 0 ? v_error(EFAULT) : v_value(n);
	} else {
		v = v_value(n);
	}
out:
	vfs_path_release(&p);
	return v;
}
