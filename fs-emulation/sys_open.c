/* open, openat, openat2, creat. */
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "core/job.h"
#include "core/task.h"
#include "fs-emulation/fs.h"
#include "syscall-table/handlers.h"

/* The kernel's O_LARGEFILE (glibc's is 0 on x86_64; the kernel adds this
 * bit itself to every 64-bit open). */
#define KERNEL_O_LARGEFILE 00100000
#define VALID_OPEN_FLAGS                                                                       \
	(O_ACCMODE | O_CREAT | O_EXCL | O_NOCTTY | O_TRUNC | O_APPEND | O_NONBLOCK | O_DSYNC | \
	 O_ASYNC | O_DIRECT | KERNEL_O_LARGEFILE | O_DIRECTORY | O_NOFOLLOW | O_NOATIME |      \
	 O_CLOEXEC | O_SYNC | O_PATH | O_TMPFILE)
#define O_PATH_FLAGS (O_DIRECTORY | O_NOFOLLOW | O_PATH | O_CLOEXEC)
/* The kernel's __O_TMPFILE alone (glibc's includes O_DIRECTORY). */
#define O_TMPFILE_BIT (O_TMPFILE & ~O_DIRECTORY)

static bool wants_write(int flags)
{
	return (flags & O_ACCMODE) != O_RDONLY || (flags & O_TRUNC);
}

/* The kernel's build_open_flags: contradictory flags are EINVAL before
 * any lookup, wherever the path leads (a mount root too). */
static int open_flags_check(int flags)
{
	/* O_DIRECTORY|O_CREAT once created regular files; O_TMPFILE carries
	 * O_DIRECTORY, so this also refuses O_TMPFILE|O_CREAT. */
	if ((flags & (O_DIRECTORY | O_CREAT)) == (O_DIRECTORY | O_CREAT))
		return -EINVAL;
	if ((flags & O_TMPFILE_BIT) && (!(flags & O_DIRECTORY) || (flags & O_ACCMODE) == O_RDONLY))
		return -EINVAL;
	if ((flags & O_PATH) && (flags & ~O_PATH_FLAGS))
		return -EINVAL;
	return 0;
}

/* open(2)/openat(2) flags as the kernel takes them (build_open_how):
 * unknown bits dropped, O_PATH keeping only what it allows. */
static int legacy_open_flags(uint64_t raw)
{
	int flags = (int)(raw & VALID_OPEN_FLAGS);
	return (flags & O_PATH) ? flags & O_PATH_FLAGS : flags;
}

/* A FIFO's open, which waits for the other end, made by a job
 * (core/job.h): `name` below directory `dir`, or (dir < 0) the file `hold`
 * reopened through /proc/self/fd. */
struct open_job {
	struct job job; /* first: the job system's part */
	int dir;        /* owned, or -1 */
	int hold;       /* owned, or -1 */
	char name[256];
	int flags; /* without O_CLOEXEC */
};

static ssize_t open_job_run(struct job *job)
{
	struct open_job *j = (struct open_job *)job;
	if (j->dir < 0) {
		char self[64];
		snprintf(self, sizeof self, "/proc/self/fd/%d", j->hold);
		return open(self, (j->flags & ~O_NOFOLLOW) | O_CLOEXEC);
	}
	return openat(j->dir, j->name, j->flags | O_NOFOLLOW | O_CLOEXEC);
}

static void open_job_release(struct job *job)
{
	struct open_job *j = (struct open_job *)job;
	if (j->dir >= 0)
		call_putfd(j->dir);
	if (j->hold >= 0)
		call_putfd(j->hold);
	free(job->pending.call);
	free(j);
}

/* The FIFO's open on a job thread with the sandbox's ids.  Takes `dirfd`
 * and `hold` when the job starts (V_PENDING); else the caller keeps dirfd,
 * and `hold` is closed.  Never the blocking open on the loop: no thread
 * for it is EAGAIN. */
static struct verdict fifo_job(struct call *c, int dirfd, const char *name, int hold, int flags)
{
	struct open_job *j = calloc(1, sizeof *j);
	if (!j) {
		if (hold >= 0)
			close(hold);
		return v_error(EAGAIN);
	}
	j->dir = -1;
	j->hold = hold; /* the job's from here: its release closes it */
	j->job.release = open_job_release;
	if (!name || strlen(name) < sizeof j->name) {
		job_init(&j->job, c);
		j->job.run = open_job_run;
		j->job.grant = true;
		j->job.fd_flags = (flags & O_CLOEXEC) ? O_CLOEXEC : 0;
		j->dir = dirfd;
		snprintf(j->name, sizeof j->name, "%s", name ? name : "");
		j->flags = flags & ~(O_CLOEXEC | O_CREAT | O_EXCL); /* it exists */
		if (job_start(&j->job) == 0) {
			c->pending = &j->job.pending;
			return v_pending();
		}
		j->dir = -1; /* the caller's still */
	}
	open_job_release(&j->job);
	return v_error(EAGAIN);
}

/* The walk an open asks for.  O_CREAT names the last component itself:
 * with a trailing slash it is EISDIR whatever is there (open_walked says
 * so); O_CREAT|O_EXCL never follows a final symlink.  RESOLVE_* map onto
 * the walk's own flags (openat2 over the virtual walk). */
static int open_walk_flags(int flags, uint64_t resolve)
{
	int wflags = VW_FOLLOW;
	if ((flags & O_NOFOLLOW) || ((flags & O_CREAT) && (flags & O_EXCL)))
		wflags = 0;
	if (flags & O_CREAT)
		wflags |= VW_LAST_NAME;
	if (resolve & RESOLVE_NO_SYMLINKS)
		wflags |= VW_NO_SYMLINKS;
	if (resolve & RESOLVE_BENEATH)
		wflags |= VW_BENEATH;
	if (resolve & RESOLVE_IN_ROOT)
		wflags |= VW_IN_ROOT;
	if (resolve & RESOLVE_NO_XDEV)
		wflags |= VW_NO_XDEV;
	if (resolve & RESOLVE_NO_MAGICLINKS)
		wflags |= VW_NO_MAGICLINKS;
	return wflags;
}

/* A name that is not there: made only by O_CREAT (O_TMPFILE names a
 * directory that must exist), in its directory made writable for it.
 * 0 or -errno.  Pre: !p->exists, and p is inside the view. */
static int open_create(struct vfs *v, struct vfs_path *p, int flags)
{
	bool tmpfile = (flags & O_TMPFILE) == O_TMPFILE;
	if (!(flags & O_CREAT) || tmpfile)
		return -ENOENT;
	return vfs_make_writable(v, p, VC_CREATE);
}

/* An existing node: the kernel's rules in its order (EEXIST, EISDIR,
 * ENOTDIR), then, when it is to be written (or an O_TMPFILE made in it),
 * a file or directory made writable: EROFS in a read-only mount, an
 * overlay's copy-up.  0 or -errno.  Pre: p->exists. */
static int open_existing(struct vfs *v, struct vfs_path *p, int flags)
{
	bool tmpfile = (flags & O_TMPFILE) == O_TMPFILE;
	bool dir = S_ISDIR(p->st.st_mode);
	if ((flags & O_CREAT) && (flags & O_EXCL))
		return -EEXIST;
	if (dir && (flags & O_CREAT || (wants_write(flags) && !tmpfile && !(flags & O_PATH))))
		return -EISDIR;
	if ((flags & O_DIRECTORY) && !tmpfile && !dir && !S_ISLNK(p->st.st_mode))
		return -ENOTDIR;
	if ((flags & O_PATH) || !(wants_write(flags) || tmpfile) ||
	    !(S_ISREG(p->st.st_mode) || dir))
		return 0;
	if (p->kind == VN_HOST)
		return vfs_make_writable(v, p, VC_CHANGE);
	return p->mnt->ro ? -EROFS : 0;
}

/* moat's copy of the task's fd that a /proc/PID/fd/N names, or -1.
 * Pre: p->kind == VN_MAGIC_FD. */
static int magic_copy(const struct vfs_path *p)
{
	struct proc *owner = proc_find(p->magic_pid);
	return owner ? (int)syscall(SYS_pidfd_getfd, owner->pidfd, p->magic_fd, 0) : -1;
}

/* /proc/self/fd/N reopened for writing: the file must not sit in a
 * read-only mount, or a read-only fd would turn writable.  One already
 * open for writing (a terminal, /dev/null, a pipe) gains nothing by a
 * second.  0 or -errno.  Pre: p->kind == VN_MAGIC_FD. */
static int open_magic_write(struct call *c, const struct vfs_path *p)
{
	int copy = magic_copy(p);
	if (copy < 0)
		return -ENOENT;
	int fl = fcntl(copy, F_GETFL);
	bool had_write = fl >= 0 && (fl & O_ACCMODE) != O_RDONLY && !(fl & O_PATH);
	int r = had_write ? 0 : fs_fd_changeable(c->vfs, copy);
	call_putfd(copy);
	return r;
}

/* O_PATH|O_NOFOLLOW of a symlink: ADDFD cannot carry an O_PATH file (the
 * kernel's fget skips them), so the sandbox gets an empty sealed memfd
 * standing in for the link (vfs.h, reg_put_link), charged as a held file.
 * Pre: p exists and is a symlink. */
static struct verdict open_symlink_standin(struct call *c, const struct vfs_path *p, int flags)
{
	int hr = held_admit(c->vfs, 0);
	if (hr < 0)
		return v_deny(-hr, "limit.moat-memory");
	int fd = memfd_create("moat-symlink", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	struct stat st;
	if (fd < 0 ||
	    fcntl(fd, F_ADD_SEALS, F_SEAL_SEAL | F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE) < 0 ||
	    fstat(fd, &st) < 0 || held_track(fd) < 0) {
		int e = fd < 0 ? errno : EIO;
		if (fd >= 0)
			close(fd);
		return v_error(e);
	}
	reg_put_link(st.st_dev, st.st_ino, p->vpath);
	return v_fd(fd, (flags & O_CLOEXEC) ? O_CLOEXEC : 0);
}

/* A host node's open on a job, off the loop; the job takes p's parent
 * fd when it starts.  Pre: p->kind == VN_HOST, p->parent >= 0. */
static struct verdict open_in_job(struct call *c, struct vfs_path *p, int flags)
{
	int dir = vfs_path_take_parent(p);
	if (dir < 0)
		return v_error(-dir);
	struct verdict v = fifo_job(c, dir, p->name, -1, flags);
	if (v.kind != V_PENDING)
		close(dir);
	return v;
}

/* Opening a FIFO waits for the other end, which may be another sandbox
 * process this loop must keep serving: such an open goes to a job.  So
 * does a FIFO or a pipe reopened through /proc/PID/fd/N (or /dev/fd/N).
 * True with the verdict in *v when the open went there (or failed). */
static bool open_would_wait(struct call *c, struct vfs_path *p, int flags, struct verdict *v)
{
	if (flags & O_NONBLOCK)
		return false;
	if (p->kind == VN_HOST && p->exists && S_ISFIFO(p->st.st_mode) && p->parent >= 0) {
		*v = open_in_job(c, p, flags);
		return true;
	}
	if (p->kind != VN_MAGIC_FD)
		return false;
	int copy = magic_copy(p);
	struct stat cst;
	if (copy < 0 || fstat(copy, &cst) < 0) {
		if (copy >= 0)
			call_putfd(copy);
		*v = v_error(ENOENT);
		return true;
	}
	if (S_ISFIFO(cst.st_mode)) {
		*v = fifo_job(c, -1, NULL, copy, flags);
		return true;
	}
	call_putfd(copy);
	return false;
}

/* Open the node (vfs_open) and grant the fd: a listing of a directory
 * that holds hidden names is a filtered copy, and a synthetic node's
 * meaning goes to the registry.  Pre: every rule of open_walked passed;
 * `flags` is what is opened (an O_PATH open is a read-only one by now). */
static struct verdict open_node(struct call *c, struct vfs_path *p, int flags, mode_t mode)
{
	mode_t m = (flags & (O_CREAT | O_TMPFILE)) ? fs_file_mode(mode & ~c->task->proc->fs->umask)
						   : 0;
	int fd = vfs_open(c->vfs, c->task, p, flags & ~O_CLOEXEC, m);
	if (fd == -EWOULDBLOCK && !(flags & O_NONBLOCK) && p->kind == VN_HOST && p->parent >= 0)
		return open_in_job(c, p, flags); /* a FIFO after all, a lease */
	if (fd == -ENOSPC &&
	    (p->kind == VN_MAGIC_FD ||
	     (p->kind == VN_HOST && p->mnt->kind == MNT_DEV && !strcmp(p->name, "ptmx"))))
		return v_deny(ENOSPC, "dev.pty-limit");
	if ((fd == -ENOMEM || fd == -EMFILE) && p->kind == VN_PROC)
		return v_deny(-fd, "limit.moat-memory"); /* past what moat may hold (held.c) */
	if (fd < 0)
		return v_error(-fd);
	if (p->kind == VN_HOST && p->exists && S_ISDIR(p->st.st_mode) && !(flags & O_PATH) &&
	    !p->upper) {
		fd = vfs_filter_listing(c->vfs, fd, p->vpath);
		if (fd < 0)
			return v_error(-fd);
	}
	/* A host file's meaning comes back from where the kernel says it is
	 * (fs_vpath_of_fd); only synthetic directories need the registry. */
	if (p->kind != VN_HOST && p->kind != VN_HELD)
		fs_register(fd, p->vpath);
	return v_fd(fd, (flags & O_CLOEXEC) ? O_CLOEXEC : 0);
}

/* The layer below the open handlers: the walked node `p` opened as the
 * call asks, in the kernel's order — what the walk found, then creating
 * or the rules on an existing node, then the special files (a magic
 * link reopened for writing, an O_PATH symlink, a FIFO), then the open.
 * The verdict; p stays the caller's to release. */
static struct verdict open_walked(struct call *c, struct vfs_path *p, int flags, mode_t mode,
				  uint64_t resolve)
{
	if ((resolve & RESOLVE_NO_MAGICLINKS) && p->kind == VN_MAGIC_FD)
		return v_error(ELOOP);
	if (!p->exists && p->outside)
		return v_deny(ENOENT, "fs.outside-view");
	if ((flags & O_CREAT) && p->trailing_slash && fs_last_type(c->path[0]) == FS_LAST_NORM)
		return v_error(EISDIR);
	int r = p->exists ? open_existing(c->vfs, p, flags) : open_create(c->vfs, p, flags);
	if (r == 0 && p->kind == VN_MAGIC_FD && (wants_write(flags) || (flags & O_CREAT)))
		r = open_magic_write(c, p);
	if (r < 0)
		return v_error(-r);
	if (flags & O_PATH) {
		if (p->exists && S_ISLNK(p->st.st_mode))
			return open_symlink_standin(c, p, flags);
		/* Served as a read-only open, which needs read permission. */
		flags = (flags & (O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) | O_RDONLY | O_NONBLOCK |
			O_NOCTTY;
	}
	struct verdict v;
	if (open_would_wait(c, p, flags, &v))
		return v;
	return open_node(c, p, flags, mode);
}

/* open, openat, openat2, creat: flags as the kernel takes them (refused
 * before any lookup), the walk, and the layer below. */
static struct verdict do_open(struct call *c, int dirfd_argi, int path_argi, int flags, mode_t mode,
			      uint64_t resolve)
{
	int r = open_flags_check(flags);
	if (r < 0)
		return v_error(-r);
	/* RESOLVE_CACHED: never for an open that would create or truncate. */
	if ((resolve & RESOLVE_CACHED) && (flags & (O_TRUNC | O_CREAT | O_TMPFILE_BIT)))
		return v_error(EAGAIN);
	struct vfs_path p;
	r = fs_walk(c, dirfd_argi, path_argi, 0, open_walk_flags(flags, resolve), &p);
	if (r < 0)
		return fs_fail(c, &p, r);
	struct verdict v = open_walked(c, &p, flags, mode, resolve);
	vfs_path_release(&p);
	return v;
}

struct verdict sys_open(struct call *c)
{
	return do_open(c, ARG_CWD, 0, legacy_open_flags(c->arg[1]), (mode_t)c->arg[2], 0);
}

struct verdict sys_openat(struct call *c)
{
	return do_open(c, 0, 1, legacy_open_flags(c->arg[2]), (mode_t)c->arg[3], 0);
}

struct verdict sys_creat(struct call *c)
{
	return do_open(c, ARG_CWD, 0, O_CREAT | O_WRONLY | O_TRUNC, (mode_t)c->arg[1], 0);
}

struct verdict sys_openat2(struct call *c)
{
	struct open_how how;
	size_t size = (size_t)c->arg[3];
	if (size < sizeof how)
		return v_error(EINVAL);
	if (size > 4096)
		return v_error(E2BIG);
	unsigned char buf[4096];
	if (call_read(c, c->arg[2], buf, size) < 0)
		return v_error(EFAULT);
	for (size_t i = sizeof how; i < size; i++)
		if (buf[i])
			return v_error(E2BIG);
	memcpy(&how, buf, sizeof how);
	if (how.flags & ~(uint64_t)VALID_OPEN_FLAGS)
		return v_error(EINVAL);
	if (how.resolve &
	    ~(uint64_t)(RESOLVE_NO_XDEV | RESOLVE_NO_MAGICLINKS | RESOLVE_NO_SYMLINKS |
			RESOLVE_BENEATH | RESOLVE_IN_ROOT | RESOLVE_CACHED))
		return v_error(EINVAL);
	if ((how.resolve & RESOLVE_BENEATH) && (how.resolve & RESOLVE_IN_ROOT))
		return v_error(EINVAL); /* scoping flags exclude each other */
	if (how.mode & ~07777ULL || (how.mode && !(how.flags & (O_CREAT | O_TMPFILE_BIT))))
		return v_error(EINVAL);
	return do_open(c, 0, 1, (int)how.flags, (mode_t)how.mode, how.resolve);
}
