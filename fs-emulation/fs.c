#include "fs-emulation/fs.h"

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/task.h"

int fs_fd_changeable(struct vfs *v, int fd)
{
	char self[64], host[PATH_MAX];
	fs_fdpath(fd, self, sizeof self);
	ssize_t n = readlink(self, host, sizeof host - 1);
	if (n <= 0)
		return -EROFS;
	host[n] = '\0';
	if (host[0] != '/' || strncmp(host, "/memfd:", 7) == 0)
		return 0; /* pipe:[..], socket:[..], anon_inode:..., a memfd */
	struct vfs_mount *m = fs_mount_of_fd(v, fd);
	if (m && m->kind == MNT_OVERLAY) {
		/* Only the upper layer changes; a file still in the lower one
		 * is the host's. */
		size_t ul = strlen(m->upper);
		return strncmp(host, m->upper, ul) == 0 && (host[ul] == '/' || !host[ul]) ? 0
											  : -EROFS;
	}
	return m && !m->ro && m->kind != MNT_DEV ? 0 : -EROFS;
}

struct vfs_mount *fs_mount_of_fd(struct vfs *v, int fd)
{
	char self[64], host[PATH_MAX];
	fs_fdpath(fd, self, sizeof self);
	ssize_t n = readlink(self, host, sizeof host - 1);
	if (n <= 0 || host[0] != '/')
		return NULL;
	host[n] = '\0';
	if (n > 10 && strcmp(host + n - 10, " (deleted)") == 0)
		host[n - 10] = '\0';
	size_t bl;
	return vfs_mount_of_host(v, host, &bl);
}

/* The virtual path of the file behind magic link `link` (a /proc/.../fd/N
 * path) whose stat is `st`.  A removed file is -ENOENT, with where it was
 * in `out` ("" when that is nowhere in the view). */
static int vpath_of_link(struct vfs *v, const char *link, const struct stat *st, char *out,
			 size_t len)
{
	char host[PATH_MAX];
	ssize_t n = readlink(link, host, sizeof host - 1);
	out[0] = '\0';
	/* memfds (synthetic files, a symlink's stand-in) are "/memfd:NAME
	 * (deleted)": never removed files, known by the registry */
	if (n > 0 && host[0] == '/' && strncmp(host, "/memfd:", 7) != 0) {
		host[n] = '\0';
		if (n > 10 && strcmp(host + n - 10, " (deleted)") == 0) {
			host[n - 10] = '\0';
			if (vfs_vpath_of_host(v, host, out, len) < 0)
				out[0] = '\0';
			return -ENOENT;
		}
		if (vfs_vpath_of_host(v, host, out, len) == 0)
			return 0;
	}
	const char *vp = reg_get(st->st_dev, st->st_ino);
	if (!vp)
		return -EACCES; /* an fd we never granted means nothing */
	snprintf(out, len, "%s", vp);
	return 0;
}

int fs_vpath_of_fd(struct vfs *v, int fd, char *out, size_t len)
{
	char self[64];
	struct stat st;
	if (fstat(fd, &st) < 0)
		return -EBADF;
	fs_fdpath(fd, self, sizeof self);
	return vpath_of_link(v, self, &st, out, len);
}

int fs_task_fd_stat(struct call *c, int fd, struct stat *st)
{
	if (fd < 0)
		return -EBADF;
	char link[64];
	snprintf(link, sizeof link, "/proc/%d/fd/%d", c->tid, fd);
	/* One lookup through the kernel's magic link instead of pidfd_getfd,
	 * fstat and close: the same file the caller's fd names now. */
	return stat(link, st) < 0 ? (errno == ENOENT ? -EBADF : -errno) : 0;
}

int fs_task_fd_vpath(struct vfs *v, pid_t tid, int fd, char *out, size_t len, struct stat *st)
{
	if (fd < 0)
		return -EBADF;
	char link[64];
	snprintf(link, sizeof link, "/proc/%d/fd/%d", tid, fd);
	if (stat(link, st) < 0)
		return errno == ENOENT ? -EBADF : -errno;
	return vpath_of_link(v, link, st, out, len);
}

int fs_dirfd_base(struct call *c, int dirfd, char *base, size_t len)
{
	struct stat st = { 0 };
	int r = fs_task_fd_vpath(c->vfs, c->tid, dirfd, base, len, &st);
	/* Not a directory wins over "means nothing", as the kernel says. */
	if (st.st_mode && !S_ISDIR(st.st_mode))
		return -ENOTDIR;
	return r;
}

int fs_cwd(struct call *c, const char **cwd)
{
	struct fsctx *fs = c->task->proc->fs;
	*cwd = fs->cwd;
	if (fs->fd < 0)
		return fs->gone ? -ENOENT : 0;
	char now[PATH_MAX];
	int r = fs_vpath_of_fd(c->vfs, fs->fd, now, sizeof now);
	if (r == -ENOENT) {
		fs->gone = true; /* where it was still serves "..", as the dentry would */
		if (now[0])
			snprintf(fs->cwd, sizeof fs->cwd, "%s", now);
		return r;
	}
	if (r == 0)
		snprintf(fs->cwd, sizeof fs->cwd, "%s", now);
	return 0;
}

int fs_set_cwd(struct call *c, const char *vpath, int fd)
{
	struct fsctx *fs = c->task->proc->fs;
	if (fs->fd >= 0)
		close(fs->fd);
	fs->fd = fd;
	fs->gone = false;
	snprintf(fs->cwd, sizeof fs->cwd, "%s", vpath);
	return 0;
}

/* A walk from a removed directory (the cwd, or a dirfd: `dirfd` >= 0)
 * whose path was `dead`.  As the kernel: "." is the directory itself,
 * reached through the fd that holds it (stat, open and getdents work on
 * it); ".." is its parent, where the directory used to be; any other name
 * is looked up in a dead directory: ENOENT, even when a new directory of
 * the old name exists now. */
static int walk_dead(struct call *c, int dirfd, const char *dead, const char *path, int flags,
		     struct vfs_path *p)
{
	const char *s = path;
	for (;;) {
		while (*s == '/')
			s++;
		if (s[0] == '.' && (s[1] == '/' || s[1] == '\0')) {
			s++;
			continue;
		}
		if (s[0] == '.' && s[1] == '.' && (s[2] == '/' || s[2] == '\0')) {
			if (flags & VW_BENEATH)
				return -EXDEV;
			if (flags & VW_IN_ROOT) {
				s += 2; /* ".." at the root stays there */
				continue;
			}
			return vfs_walk(c->vfs, c->task, dead, s, flags, p);
		}
		break;
	}
	if (*s)
		return -ENOENT;
	int fd = dirfd >= 0                   ? call_getfd(c, dirfd)
		 : c->task->proc->fs->fd >= 0 ? fcntl(c->task->proc->fs->fd, F_DUPFD_CLOEXEC, 0)
					      : -ENOENT;
	if (fd < 0)
		return fd == -1 ? -errno : fd;
	memset(p, 0, offsetof(struct vfs_path, vpath));
	p->kind = VN_HELD;
	p->magic_fd = fd;
	p->parent = -1;
	p->parent_pin = 0;
	p->mnt = vfs_mount_of(c->vfs, dead);
	snprintf(p->vpath, sizeof p->vpath, "%s", dead);
	snprintf(p->rel, sizeof p->rel, ".");
	p->name = p->rel;
	size_t n = strlen(path);
	p->trailing_slash = n > 0 && path[n - 1] == '/';
	p->exists = fstat(fd, &p->st) == 0;
	if (!p->exists) {
		/* A failed walk leaves nothing for the caller to release. */
		close(fd);
		p->magic_fd = -1;
		return -ENOENT;
	}
	return 0;
}

int fs_walk(struct call *c, int dirfd_argi, int argi, int slot, int flags, struct vfs_path *p)
{
	p->parent = -1;
	p->parent_pin = 0;
	p->kind = VN_HOST;
	p->outside = false;
	p->vpath[0] = '\0';
	int r = call_read_path(c, argi, slot);
	if (r < 0)
		return r == -ESRCH ? -EFAULT : r;
	return fs_walk_str(c, dirfd_argi, c->path[slot], slot, flags, p);
}

int fs_walk_str(struct call *c, int dirfd_argi, const char *path, int slot, int flags,
		struct vfs_path *p)
{
	p->parent = -1;
	p->parent_pin = 0;
	p->kind = VN_HOST;
	p->outside = false;
	p->vpath[0] = '\0';
	int r;
	char base[PATH_MAX] = "";
	const char *b;
	bool gone = fs_cwd(c, &b) == -ENOENT;
	int dead_fd = -1; /* the removed dirfd the walk starts from */
	bool dirfd_given = dirfd_argi >= 0 && (int)c->arg[dirfd_argi] != AT_FDCWD;
	if (path[0] == '/' && !(flags & (VW_IN_ROOT | VW_BENEATH)))
		gone = false; /* an absolute path never looks at its base */
	if (path[0] == '\0') {
		if (!(flags & VW_EMPTY_PATH))
			return -ENOENT;
		/* AT_EMPTY_PATH: the node is the dirfd (or the cwd) itself. */
		if (dirfd_given) {
			int copy = call_getfd(c, (int)c->arg[dirfd_argi]);
			if (copy < 0)
				return -EBADF;
			r = fs_vpath_of_fd(c->vfs, copy, base, sizeof base);
			struct stat st;
			/* a symlink's stand-in: the link itself, never followed */
			if (r == 0 && fstat(copy, &st) == 0 && S_ISREG(st.st_mode) &&
			    st.st_size == 0 && reg_get_link(st.st_dev, st.st_ino))
				flags &= ~VW_FOLLOW;
			call_putfd(copy);
			if (r < 0)
				return r;
			path = base;
			gone = false; /* the fd's own path: the cwd plays no part */
		} else {
			path = ".";
		}
	} else if ((path[0] != '/' || (flags & (VW_IN_ROOT | VW_BENEATH))) && dirfd_given) {
		r = fs_dirfd_base(c, (int)c->arg[dirfd_argi], base, sizeof base);
		gone = r == -ENOENT && base[0];
		if (r < 0 && !gone)
			return r;
		if (gone)
			dead_fd = (int)c->arg[dirfd_argi];
		b = base;
	}
	flags &= ~VW_EMPTY_PATH;
	r = gone ? walk_dead(c, dead_fd, b, path, flags, p)
		 : vfs_walk(c->vfs, c->task, b, path, flags, p);
	if (slot >= 0)
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

int fs_new_name(struct vfs *vfs, struct vfs_path *p, int how, struct verdict *v)
{
	int r;
	if (p->exists)
		*v = v_error(EEXIST);
	else if (p->outside)
		*v = v_deny(ENOENT, "fs.outside-view");
	else if (p->trailing_slash && !(how & FS_NEW_SLASH))
		*v = v_error(ENOENT); /* "name/" names a directory: only mkdir makes one */
	else if (!(how & FS_NEW_LATER) && (r = vfs_make_writable(vfs, p, VC_CREATE)) < 0)
		*v = v_error(-r);
	else
		return 0;
	vfs_path_release(p);
	return -1;
}

int fs_walk_new_name(struct call *c, int dirfd_argi, int argi, int slot, int how,
		     struct vfs_path *p, struct verdict *v)
{
	int r = fs_walk(c, dirfd_argi, argi, slot, 0, p);
	if (r < 0) {
		*v = fs_fail(c, p, r);
		return -1;
	}
	return fs_new_name(c->vfs, p, how, v);
}

int fs_opath(struct call *c, struct vfs_path *p)
{
	return vfs_open(c->vfs, c->task, p, O_PATH | O_NOFOLLOW, 0);
}

void fs_fdpath(int fd, char *buf, size_t len)
{
	snprintf(buf, len, "/proc/self/fd/%d", fd);
}

enum fs_last fs_last_type(const char *path)
{
	size_t n = strlen(path);
	while (n > 0 && path[n - 1] == '/')
		n--;
	if (n == 0)
		return path[0] == '/' ? FS_LAST_ROOT : FS_LAST_NORM;
	const char *s = path + n;
	while (s > path && s[-1] != '/')
		s--;
	size_t l = (size_t)(path + n - s);
	if (l == 1 && s[0] == '.')
		return FS_LAST_DOT;
	if (l == 2 && s[0] == '.' && s[1] == '.')
		return FS_LAST_DOTDOT;
	return FS_LAST_NORM;
}

void fs_register(int fd, const char *vpath)
{
	struct stat st;
	if (fstat(fd, &st) == 0)
		reg_put(st.st_dev, st.st_ino, vpath);
}
