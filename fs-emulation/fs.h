/* Shared helpers of the file syscall handlers (sys_*.c). */
#ifndef MOAT_FS_H
#define MOAT_FS_H

#include <fcntl.h>
#include <sys/stat.h>

#include "core/call.h"
#include "fs-emulation/vfs.h"

#define ARG_CWD (-1)        /* no dirfd argument: relative to the cwd */
#define VW_EMPTY_PATH 0x100 /* fs_walk: "" names the dirfd itself (AT_EMPTY_PATH) */

/* Read path argument `argi` into slot `slot` and walk it, relative to the
 * dirfd in argument `dirfd_argi` (or the cwd).  0 or -errno; on error the
 * verdict to return is fs_fail(c, p, err). */
int fs_walk(struct call *c, int dirfd_argi, int argi, int slot, int flags, struct vfs_path *p);
/* fs_walk for a path already copied (a socket address, a name derived
 * from the caller's); the walked virtual path goes to c->resolved[slot]
 * unless slot < 0. */
int fs_walk_str(struct call *c, int dirfd_argi, const char *path, int slot, int flags,
		struct vfs_path *p);
/* Walk path argument `argi` (into slot `slot`, relative to the dirfd in
 * argument `dirfd_argi`) to a name the call is to make: mkdir, mknod,
 * symlink, link's new name.  The name must not exist (EEXIST), must lie
 * inside the view (outside: a denial), and takes no trailing slash
 * (ENOENT) unless FS_NEW_SLASH; then its directory is made writable for
 * it (vfs_make_writable, VC_CREATE: EROFS, an overlay's copy-up) unless
 * FS_NEW_LATER.  0 with *p walked (the caller releases it), or -1 with the
 * verdict to return in *v (and *p released). */
#define FS_NEW_SLASH 0x1 /* a directory: "name/" is allowed (mkdir) */
/* The caller makes the directory writable itself, after checks of its own
 * (link: EXDEV, EPERM). */
#define FS_NEW_LATER 0x2
int fs_walk_new_name(struct call *c, int dirfd_argi, int argi, int slot, int how,
		     struct vfs_path *p, struct verdict *v);
/* Its rules on a name already walked (flags 0): the same results. */
int fs_new_name(struct vfs *vfs, struct vfs_path *p, int how, struct verdict *v);
/* The verdict for a failed walk: a path outside the view is a denial
 * (audited), anything else an ordinary emulated error. */
struct verdict fs_fail(struct call *c, const struct vfs_path *p, int err);
/* The virtual directory a dirfd names, from the registry. */
int fs_dirfd_base(struct call *c, int dirfd, char *base, size_t len);
/* An O_PATH fd of the walked node itself (never following). */
int fs_opath(struct call *c, struct vfs_path *p);
/* "/proc/self/fd/N" for a supervisor fd. */
void fs_fdpath(int fd, char *buf, size_t len);
/* The virtual path of a supervisor fd: from the kernel's own idea of
 * where it is now (so renames are followed), else the registry.  0, or
 * -ENOENT when it was removed (with where it was in `out`, "" when that is
 * nowhere in the view), -EACCES when it means nothing. */
int fs_vpath_of_fd(struct vfs *v, int fd, char *out, size_t len);
/* The mount a supervisor fd's file lives in (a removed file: the mount of
 * the directory it was in), or NULL for a pipe, socket or anything moat
 * did not place. */
struct vfs_mount *fs_mount_of_fd(struct vfs *v, int fd);
/* The virtual path of fd `fd` of thread `tid` (from where the kernel says
 * its file is, else the registry).  *st gets its stat.  0, -EBADF,
 * -ENOENT (removed: `out` as fs_vpath_of_fd says), -EACCES (means
 * nothing). */
int fs_task_fd_vpath(struct vfs *v, pid_t tid, int fd, char *out, size_t len, struct stat *st);
/* stat of the file the caller's fd `fd` names (-EBADF when none), an
 * overlay copy with the identity of the lower entry it was copied from. */
int fs_task_fd_stat(struct call *c, int fd, struct stat *st);
/* Supervisor fd `fd` was just granted by the call: when it is the host
 * directory the call walked (from a dirfd), remember where it is, so that
 * resolving it as a dirfd later needs no readlink (see fs.c). */
void fs_note_grant(struct call *c, int fd);
/* May the file behind supervisor fd `fd` have its contents or metadata
 * changed by the sandbox?  Yes for pipes, sockets, anonymous files and
 * memfds, and for files of a writable mount; no for files of a read-only
 * mount, the host devices, and any host file outside every mount (an
 * inherited stdin, say).  0 or -EROFS. */
int fs_fd_changeable(struct vfs *v, int fd);
/* The caller's cwd, refreshed; -ENOENT when the directory is gone. */
int fs_cwd(struct call *c, const char **cwd);
/* Make `p` the cwd of the caller's fs context. */
int fs_set_cwd(struct call *c, const char *vpath, int fd);
/* The mode bits a file the sandbox makes or changes may have: no set-id
 * bit ever lands on a host file (inside they do nothing under
 * no_new_privs; outside, a host user could run the file). */
static inline mode_t fs_file_mode(mode_t mode)
{
	return mode & 01777;
}
/* What the last component of `path` (as the program wrote it) is, as the
 * kernel's last_type: a name, ".", "..", or the root ("/", "//"). */
enum fs_last { FS_LAST_NORM, FS_LAST_DOT, FS_LAST_DOTDOT, FS_LAST_ROOT };
enum fs_last fs_last_type(const char *path);
/* Register a granted fd's meaning. */
void fs_register(int fd, const char *vpath);

#endif
