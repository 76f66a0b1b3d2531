#include "fs-emulation/fs.h"

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>
#include <xxhash.h>

#include "core/creds.h"
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

/* ---- where a directory is: the kernel's answer, and facts that spare asking ----
 *
 * A dirfd (or the cwd, or a copied-up directory's fstat) means the virtual
 * path of where its directory is now.  The kernel says it: the stat of the
 * magic link /proc/TID/fd/N (which file) and its readlink (its host path,
 * mapped back into the view).  The readlink is spared where a fact
 * answers: "the directory (st_dev, st_ino) reached through mount id M has
 * host path H", checked against the statx that is made anyway.  A
 * directory has one name (no hard links), so through one mount it has one
 * host path; a fact is about the directory, not about an fd number, and
 * whatever the sandbox does with its numbers (close, dup2, SCM_RIGHTS,
 * fork, exec, threads) only changes which directory a number names — the
 * statx sees that.  What can change a directory's host path is a move or
 * removal of it or of a directory above it, so:
 *   - facts are kept only for directories of mounts whose trees change
 *     through the supervisor alone (the dentry cache's `cached` mounts:
 *     tmpfs, overlays, the skeleton, the system binds), never for a host
 *     --bind, which the host may change at any time;
 *   - every call that may move or remove a directory (rename, rmdir,
 *     unlinkat with AT_REMOVEDIR) makes all of them stale before it acts
 *     (dirs_gen), and none is taken while it runs;
 *   - a fact is H as the kernel says it for that very directory: read
 *     back from an fd of moat's own, built from the walk that found the
 *     directory a call grants, or read from the caller's fd and checked
 *     by a statx of H.
 * The rest of the answer (H mapped into the view, the registry, an
 * overlay copy's origin) is computed from H exactly as without a fact.
 * docs/security.md ("Facts about directories") has the argument. */

#ifndef STATX_MNT_ID
#define STATX_MNT_ID 0x1000U
#endif
#ifndef STATX_MNT_ID_UNIQUE
#define STATX_MNT_ID_UNIQUE 0x4000U /* Linux 6.8: ids never reused */
#endif

/* What a statx says of a file: which one it is, through which mount. */
struct fd_id {
	dev_t dev;
	ino_t ino;
	uint64_t mnt;
	bool mnt_known; /* the kernel gave a mount id */
};

static int statx_id(int dirfd, const char *path, int flags, struct stat *st, struct fd_id *id)
{
	struct statx sx;
	if (statx(dirfd, path, flags, STATX_BASIC_STATS | STATX_MNT_ID | STATX_MNT_ID_UNIQUE, &sx) <
	    0)
		return -errno;
	/* The fields newfstatat gives, as it gives them (a statx of the
	 * same path fills them from the same kstat). */
	memset(st, 0, sizeof *st);
	st->st_dev = makedev(sx.stx_dev_major, sx.stx_dev_minor);
	st->st_ino = sx.stx_ino;
	st->st_nlink = sx.stx_nlink;
	st->st_mode = sx.stx_mode;
	st->st_uid = sx.stx_uid;
	st->st_gid = sx.stx_gid;
	st->st_rdev = makedev(sx.stx_rdev_major, sx.stx_rdev_minor);
	st->st_size = (off_t)sx.stx_size;
	st->st_blksize = (blksize_t)sx.stx_blksize;
	st->st_blocks = (blkcnt_t)sx.stx_blocks;
	st->st_atim = (struct timespec){ sx.stx_atime.tv_sec, sx.stx_atime.tv_nsec };
	st->st_mtim = (struct timespec){ sx.stx_mtime.tv_sec, sx.stx_mtime.tv_nsec };
	st->st_ctim = (struct timespec){ sx.stx_ctime.tv_sec, sx.stx_ctime.tv_nsec };
	id->dev = st->st_dev;
	id->ino = st->st_ino;
	id->mnt = sx.stx_mnt_id;
	id->mnt_known = (sx.stx_mask & (STATX_MNT_ID | STATX_MNT_ID_UNIQUE)) != 0;
	return 0;
}

#define FACT_SLOTS 256 /* a miss costs only the readlink: evicted freely */
#define FACT_HOST 224  /* longer host paths are not kept */

struct fact {
	struct vfs *v;
	uint64_t gen; /* dirs_gen when taken; 0: empty */
	dev_t dev;
	ino_t ino;
	uint64_t mnt;
	char host[FACT_HOST];
};

static struct fact facts[FACT_SLOTS]; /* 66 KiB, touched as used */
static uint64_t dirs_gen = 1;
/* The call being served may move or remove a directory (moves_dirs): no
 * fact is taken until it is over, since what is seen now may move. */
static bool moving;

static struct fact *fact_slot(const struct fd_id *id)
{
	uint64_t key[2] = { (uint64_t)id->dev, (uint64_t)id->ino };
	return &facts[XXH3_64bits(key, sizeof key) % FACT_SLOTS];
}

/* The host path of the directory `id` (whose stat is `st`), or NULL. */
static const char *fact_get(struct vfs *v, const struct stat *st, const struct fd_id *id)
{
	if (!id->mnt_known || !S_ISDIR(st->st_mode) || st->st_nlink == 0)
		return NULL;
	const struct fact *f = fact_slot(id);
	if (f->gen != dirs_gen || f->v != v || f->dev != id->dev || f->ino != id->ino ||
	    f->mnt != id->mnt)
		return NULL;
	return f->host;
}

/* May "directory `id` is at host path `host`" be kept?  For a directory
 * the kernel names by a host path (not removed, not a memfd) that lies in
 * a mount whose tree changes through the supervisor alone. */
static bool fact_keepable(struct vfs *v, const struct stat *st, const struct fd_id *id,
			  const char *host)
{
	size_t n = strlen(host), bl;
	if (!id->mnt_known || !S_ISDIR(st->st_mode) || st->st_nlink == 0 || n >= FACT_HOST ||
	    host[0] != '/' || strncmp(host, "/memfd:", 7) == 0 ||
	    (n > 10 && strcmp(host + n - 10, " (deleted)") == 0))
		return false;
	const struct vfs_mount *m = vfs_mount_of_host(v, host, &bl);
	return m && m->cached;
}

/* Keep it.  Pre: fact_keepable, and `host` is what the kernel says of
 * `id` now. */
static void fact_put(struct vfs *v, const struct fd_id *id, const char *host)
{
	if (moving)
		return;
	struct fact *f = fact_slot(id);
	*f = (struct fact){ v, dirs_gen, id->dev, id->ino, id->mnt, "" };
	snprintf(f->host, sizeof f->host, "%s", host);
}

/* The virtual path of the file whose host path (a readlink of its magic
 * link, `n` bytes; n <= 0 when there was none) is `host` and whose stat
 * is `st`.  A removed file is -ENOENT, with where it was in `out` (""
 * when that is nowhere in the view). */
static int vpath_of_host_link(struct vfs *v, char *host, ssize_t n, const struct stat *st,
			      char *out, size_t len)
{
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

/* The host path of the file behind magic link `link` whose statx gave
 * `st` and `id`: from a fact, or read (and kept as a fact when `own`, an
 * fd of moat's own that nobody else can change, or when a statx of the
 * path read finds that very directory).  Its length, <= 0 for none. */
static ssize_t host_of_link(struct vfs *v, const char *link, const struct stat *st,
			    const struct fd_id *id, bool own, char *host, size_t len)
{
	const char *known = fact_get(v, st, id);
	if (known) {
		size_t n = strlen(known);
		memcpy(host, known, n + 1);
		return (ssize_t)n;
	}
	if (!own)
		creds_proc_begin();
	ssize_t n = readlink(link, host, len - 1);
	if (!own)
		creds_proc_end();
	if (n <= 0 || !S_ISDIR(st->st_mode) || !id->mnt_known)
		return n;
	host[n] = '\0';
	if (moving || !fact_keepable(v, st, id, host))
		return n;
	/* The caller's fd may have been swapped for another between the
	 * statx and the readlink (a dup2 from a sibling thread): only a path
	 * that leads to the same directory is its path.  moat's own fd
	 * nobody swaps. */
	struct stat now;
	struct fd_id nid;
	if (!own &&
	    (statx_id(AT_FDCWD, host, AT_SYMLINK_NOFOLLOW, &now, &nid) < 0 || !nid.mnt_known ||
	     nid.dev != id->dev || nid.ino != id->ino || nid.mnt != id->mnt))
		return n;
	fact_put(v, id, host);
	return n;
}

/* fs_vpath_of_fd; *kept says whether a fact now stands for the answer
 * (it holds until a directory may have moved: dirs_gen). */
static int own_fd_vpath(struct vfs *v, int fd, char *out, size_t len, bool *kept)
{
	char self[64], host[PATH_MAX];
	struct stat st;
	struct fd_id id;
	*kept = false;
	if (statx_id(fd, "", AT_EMPTY_PATH, &st, &id) < 0)
		return -EBADF;
	fs_fdpath(fd, self, sizeof self);
	ssize_t n = host_of_link(v, self, &st, &id, true, host, sizeof host);
	int r = vpath_of_host_link(v, host, n, &st, out, len);
	*kept = r == 0 && fact_get(v, &st, &id) != NULL;
	return r;
}

int fs_vpath_of_fd(struct vfs *v, int fd, char *out, size_t len)
{
	bool kept;
	return own_fd_vpath(v, fd, out, len, &kept);
}

/* One look at fd `fd` of thread `tid` through its magic link (`link`
 * gets its path): the statx that names the file.  Where moat's fs ids
 * are not the thread's own (the root inside, served as host root: its
 * /proc is not moat's to read without a switch of ids) the link is of a
 * copy of the fd, *copy, which the caller closes; else *copy is -1. */
static int task_fd_look(pid_t tid, int fd, char *link, size_t linklen, struct stat *st,
			struct fd_id *id, int *copy)
{
	*copy = -1;
	if (fd < 0)
		return -EBADF;
	if (!creds_proc_switches()) {
		snprintf(link, linklen, "/proc/%d/fd/%d", tid, fd);
		/* One lookup through the kernel's magic link instead of
		 * pidfd_getfd, fstat and close: the same file the caller's fd
		 * names now. */
		int r = statx_id(AT_FDCWD, link, 0, st, id);
		if (r == -ENOENT)
			return -EBADF;
		/* A process that changed its ids is not dumpable: its /proc
		 * directory is its namespace root's, 0500, and the kernel lets
		 * only the process itself in.  Then by a copy, as below. */
		if (r != -EACCES)
			return r;
	}
	struct task *t = task_find(tid);
	*copy = t && t->proc ? (int)syscall(SYS_pidfd_getfd, t->proc->pidfd, fd, 0) : -1;
	if (*copy < 0)
		return -EBADF;
	snprintf(link, linklen, "/proc/self/fd/%d", *copy);
	return statx_id(AT_FDCWD, link, 0, st, id);
}

int fs_task_fd_stat(struct call *c, int fd, struct stat *st)
{
	char link[64], host[PATH_MAX];
	struct fd_id id;
	int copy;
	int r = task_fd_look(c->tid, fd, link, sizeof link, st, &id, &copy);
	struct vfs *v = c->vfs;
	if (r < 0 || v->ov_base < 0 || !v->ov_used || st->st_dev != v->ov_dev) {
		if (copy >= 0)
			call_putfd(copy); /* a socket's last close may block */
		return r;
	}
	/* Maybe an overlay's copy: it shows the identity of the lower entry
	 * it was copied from (vfs_origin_of_host), found by its host path. */
	ssize_t n = host_of_link(v, link, st, &id, false, host, sizeof host);
	if (n > 0) {
		host[n] = '\0';
		vfs_origin_of_host(v, host, st);
	}
	if (copy >= 0)
		call_putfd(copy);
	return 0;
}

int fs_task_fd_vpath(struct vfs *v, pid_t tid, int fd, char *out, size_t len, struct stat *st)
{
	char link[64], host[PATH_MAX];
	struct fd_id id;
	int copy;
	int r = task_fd_look(tid, fd, link, sizeof link, st, &id, &copy);
	if (r < 0) {
		if (copy >= 0)
			call_putfd(copy);
		return r;
	}
	/* A copy is moat's own fd: nobody swaps it (own). */
	ssize_t n = host_of_link(v, link, st, &id, copy >= 0, host, sizeof host);
	if (copy >= 0)
		call_putfd(copy);
	return vpath_of_host_link(v, host, n, st, out, len);
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

/* Is the host path of mount m's layer (its upper one, or its only or
 * lower one) what the kernel calls the layer's fd (no symbolic link on
 * the way)?  Then a walk's canonical path below it is the kernel's own
 * name for what the walk found.  Asked once a layer. */
static bool layer_canonical(struct vfs *v, const struct vfs_mount *m, bool upper)
{
	static const struct vfs *known_for;
	static signed char known[VFS_MAX_MOUNTS][2]; /* 1 yes, -1 no, 0 not asked */
	if (known_for != v) {
		memset(known, 0, sizeof known);
		known_for = v;
	}
	ptrdiff_t i = m - v->mnt;
	if (i < 0 || i >= VFS_MAX_MOUNTS)
		return false;
	if (!known[i][upper]) {
		int fd = upper ? m->upper_fd : m->root_fd;
		const char *path = upper ? m->upper : m->host;
		char self[64], got[PATH_MAX];
		fs_fdpath(fd, self, sizeof self);
		ssize_t n = fd >= 0 ? readlink(self, got, sizeof got - 1) : -1;
		known[i][upper] = n > 0 && (size_t)n == strlen(path) &&
						  memcmp(got, path, (size_t)n) == 0
					  ? 1
					  : -1;
	}
	return known[i][upper] > 0;
}

/* The directory the call's walk (slot 0) found, for fs_note_grant. */
static struct {
	bool dir; /* a host directory, reached from a dirfd: worth a fact */
	uint64_t id;
	pid_t tid;
	dev_t dev;
	ino_t ino;
	char host[PATH_MAX];
} walked;

/* Calls that may move or remove a directory: before one acts on a
 * directory it walked, every fact may become stale.  (unlinkat without
 * AT_REMOVEDIR removes no directory: EISDIR.) */
static bool moves_dirs(const struct call *c)
{
	switch (c->nr) {
	case SYS_rename:
	case SYS_renameat:
	case SYS_renameat2:
	case SYS_rmdir: return true;
	case SYS_unlinkat: return (c->arg[2] & AT_REMOVEDIR) != 0;
	default: return false;
	}
}

/* After a walk of fs_walk_str: a directory a moving call walked makes
 * every fact stale, before the call acts on it; the directory a call
 * walked from a dirfd may get a fact when it is granted. */
static void note_walk(struct call *c, int slot, bool from_dirfd, int r, const struct vfs_path *p)
{
	bool dir = r == 0 && p->exists && S_ISDIR(p->st.st_mode);
	if (dir && moving)
		dirs_gen++;
	if (slot != 0)
		return;
	walked.dir = false;
	if (!dir || !from_dirfd || p->kind != VN_HOST || !p->mnt || !p->mnt->cached)
		return;
	bool upper = p->mnt->kind == MNT_OVERLAY && p->upper;
	const char *layer = upper ? p->mnt->upper : p->mnt->host;
	bool top = strcmp(p->rel, ".") == 0;
	if (snprintf(walked.host, sizeof walked.host, "%s%s%s", layer, top ? "" : "/",
		     top ? "" : p->rel) >= (int)sizeof walked.host ||
	    !layer_canonical(c->vfs, p->mnt, upper))
		return;
	walked.dir = true;
	walked.id = c->id;
	walked.tid = c->tid;
	walked.dev = p->st.st_dev;
	walked.ino = p->st.st_ino;
}

void fs_note_grant(struct call *c, int fd)
{
	if (!walked.dir || walked.id != c->id || walked.tid != c->tid)
		return;
	walked.dir = false;
	struct stat st;
	struct fd_id id;
	/* The granted file must be the directory walked (not a filtered
	 * listing's copy, say): then its host path is the walk's. */
	if (statx_id(fd, "", AT_EMPTY_PATH, &st, &id) == 0 && id.dev == walked.dev &&
	    id.ino == walked.ino && fact_keepable(c->vfs, &st, &id, walked.host))
		fact_put(c->vfs, &id, walked.host);
}

int fs_cwd(struct call *c, const char **cwd)
{
	struct fsctx *fs = c->task->proc->fs;
	*cwd = fs->cwd;
	if (fs->fd < 0)
		return fs->gone ? -ENOENT : 0;
	/* The fd is moat's own: only a move or removal of a directory changes
	 * where it is, and none happened since it was last asked. */
	if (fs->gen == dirs_gen)
		return 0;
	char now[PATH_MAX];
	bool kept;
	int r = own_fd_vpath(c->vfs, fs->fd, now, sizeof now, &kept);
	if (r == -ENOENT) {
		fs->gone = true; /* where it was still serves "..", as the dentry would */
		if (now[0])
			snprintf(fs->cwd, sizeof fs->cwd, "%s", now);
		return r;
	}
	if (r == 0)
		snprintf(fs->cwd, sizeof fs->cwd, "%s", now);
	fs->gen = r == 0 && kept ? dirs_gen : 0;
	return 0;
}

int fs_set_cwd(struct call *c, const char *vpath, int fd)
{
	struct fsctx *fs = c->task->proc->fs;
	if (fs->fd >= 0)
		close(fs->fd);
	fs->fd = fd;
	fs->gone = false;
	fs->gen = 0;
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
	/* Every call that moves or removes a directory walks it first: from
	 * here to the next call's walk, nothing it sees is kept. */
	moving = moves_dirs(c);
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
		gone = false;  /* an absolute path never looks at its base */
	flags |= VW_TASK_ROOT; /* the sandbox's path (not an fd's own, below) */
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
			flags &= ~VW_TASK_ROOT; /* a view path already */
			gone = false;           /* the fd's own path: the cwd plays no part */
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
	note_walk(c, slot, dirfd_given, r, p);
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
