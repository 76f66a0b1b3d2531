/* The overlay backend: a writable upper layer over a read-only lower one
 * (a host directory).  The lower layer is never written.
 *
 * A directory of the upper layer is either *real* or a *placeholder*.  A
 * real directory is complete: it holds every name of the merged view, so
 * the kernel's getdents64 on it is the merged listing, the open file
 * description's offset its cursor (rewinddir, seekdir, a stream shared
 * across fork behave as Linux's), and a deletion is simply the name's
 * absence (no whiteout files).  Names that still mean the lower entry are
 * hard links to a *phantom* inode of the entry's type (regular file,
 * symlink, FIFO, socket), so d_type is right and a lookup recognises them
 * by (st_dev, st_ino) without a syscall; a lower subdirectory is an empty
 * directory holding one link to the regular phantom named PH_NAME.  The
 * phantoms live in the base directory, outside every view, so the sandbox
 * can neither link to one nor forge a marker.
 *
 * Copy-up makes a directory real (a placeholder for each lower entry, then
 * the marker goes) and replaces a phantom link by a copy of the lower file
 * (contents, mode without set-id bits, owner when moat is root, times),
 * renamed over it.  A directory is real exactly when its parent's entry is
 * not a placeholder, so once a walk reaches a lower directory everything
 * below it is lower too and resolves with one openat2 there.
 *
 * What differs from the kernel's overlayfs: d_ino of a name still in the
 * lower layer is the phantom's inode, not the file's (overlayfs without
 * xino has the same gap); renaming a directory that exists in the lower
 * layer fails with EXDEV (as overlayfs without redirect_dir), and programs
 * fall back to copying; hard links between lower files break on copy-up. */
#include "fs-emulation/vfs.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/fsuid.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "core/creds.h"
#include "core/hurry.h"

#define PH_NAME ".moat-lower"    /* inside a placeholder directory */
#define PH_FILE ".moat-phantom-" /* in the base: + type letter + number */
#define LAYER_MARK ".moat-layer" /* in the base: it is ours */


static struct vfs *the_vfs; /* one view per supervisor */

static bool is_phantom(const struct stat *st)
{
	struct vfs *v = the_vfs;
	for (int i = 0; v && i < v->nphantom; i++)
		if (v->phantom[i].ino == st->st_ino && v->phantom[i].dev == st->st_dev)
			return true;
	return false;
}

/* Is directory `name` of `dirfd` a placeholder (holding the marker link)? */
static bool dir_is_placeholder(int dirfd, const char *name)
{
	char at[NAME_MAX + sizeof PH_NAME + 2];
	snprintf(at, sizeof at, "%s/%s", name, PH_NAME);
	struct stat st;
	return fstatat(dirfd, at, &st, AT_SYMLINK_NOFOLLOW) == 0 && is_phantom(&st);
}

/* Does entry `name` of upper directory `dirfd`, whose lstat is `st`, stand
 * for the lower entry of that name? */
static bool placeholder(int dirfd, const char *name, const struct stat *st)
{
	if (S_ISDIR(st->st_mode))
		return dir_is_placeholder(dirfd, name);
	return is_phantom(st);
}

static bool root_real(struct vfs_mount *m)
{
	struct stat st;
	return fstatat(m->upper_fd, PH_NAME, &st, AT_SYMLINK_NOFOLLOW) < 0 || !is_phantom(&st);
}

/* Only a copy-up makes a layer's root real, and every copy-up goes through
 * vfs_make_writable, which asks again: the walk reads a flag. */
bool ov_root_upper(struct vfs_mount *m)
{
	return m->upper_real;
}

static char phantom_letter(mode_t type)
{
	return type == S_IFLNK ? 'l' : type == S_IFIFO ? 'p' : type == S_IFSOCK ? 's' : 'f';
}

/* Make (or, persisted, find) a phantom of `type`; its index or -errno. */
static int phantom_new(struct vfs *v, mode_t type)
{
	if (v->nphantom == VFS_MAX_PHANTOMS)
		return -EMLINK;
	char name[64];
	int n = 0;
	for (int i = 0; i < v->nphantom; i++)
		n += v->phantom[i].type == type;
	snprintf(name, sizeof name, PH_FILE "%c%d", phantom_letter(type), n);
	struct stat st;
	if (fstatat(v->ov_base, name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
		int r;
		if (type == S_IFLNK)
			r = symlinkat("/", v->ov_base, name);
		else if (type == S_IFREG)
			r = mknodat(v->ov_base, name, S_IFREG | 0, 0);
		else
			r = mknodat(v->ov_base, name, type | 0, 0);
		if (r < 0 || fstatat(v->ov_base, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
			return -errno;
	}
	if ((st.st_mode & S_IFMT) != type)
		return -EEXIST;
	v->phantom[v->nphantom].dev = st.st_dev;
	v->phantom[v->nphantom].ino = st.st_ino;
	v->phantom[v->nphantom].type = type;
	return v->nphantom++;
}

/* Link a phantom of `type` as `name` in `dirfd` (a new one when the last
 * has as many links as the filesystem allows). */
static int phantom_link(struct vfs *v, mode_t type, int dirfd, const char *name)
{
	for (;;) {
		int last = -1;
		for (int i = 0; i < v->nphantom; i++)
			if (v->phantom[i].type == type)
				last = i;
		if (last < 0 && (last = phantom_new(v, type)) < 0)
			return last;
		char src[64];
		int n = 0;
		for (int i = 0; i < last; i++)
			n += v->phantom[i].type == type;
		snprintf(src, sizeof src, PH_FILE "%c%d", phantom_letter(type), n);
		if (linkat(v->ov_base, src, dirfd, name, 0) == 0)
			return 0;
		if (errno != EMLINK)
			return -errno;
		if (phantom_new(v, type) < 0)
			return -EMLINK;
	}
}

/* The base: made (or, persisted, found and checked), its markers and
 * phantoms.  As moat. */
static int base_open(struct vfs *v, bool persist, char *err, size_t errlen)
{
	const char *base = v->ov_base_path;
	if (mkdir(base, 0711) < 0 && !(persist && errno == EEXIST)) {
		snprintf(err, errlen, "%s: cannot make the writable layer: %s", base,
			 strerror(errno));
		return -errno;
	}
	/* Never through a link (a sandbox that could write DIR's parent may
	 * have left one, to another user's layer or directory), and only a
	 * directory of moat's own user nobody else may write. */
	v->ov_base = open(base, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (v->ov_base < 0) {
		snprintf(err, errlen, "%s: %s", base,
			 errno == ENOTDIR || errno == ELOOP ? "a symbolic link or not a directory"
							    : strerror(errno));
		return -errno;
	}
	struct stat st;
	if (fstat(v->ov_base, &st) < 0 || st.st_uid != geteuid() || (st.st_mode & 022)) {
		snprintf(err, errlen,
			 "%s: not a directory of moat's own user that only it may write", base);
		return -EPERM;
	}
	v->ov_dev = st.st_dev;
	if (fstatat(v->ov_base, LAYER_MARK, &st, AT_SYMLINK_NOFOLLOW) < 0) {
		/* A persisted layer must be ours or empty: never adopt (and
		 * later write into) a directory of the user's. */
		int d = openat(v->ov_base, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		DIR *dir = d >= 0 ? fdopendir(d) : NULL;
		struct dirent *de;
		int entries = 0;
		while (dir && (de = readdir(dir)))
			entries += strcmp(de->d_name, ".") && strcmp(de->d_name, "..");
		if (dir)
			closedir(dir);
		if (!dir || entries) {
			snprintf(
				err, errlen,
				"%s: not empty and not a moat layer (choose an empty or new directory)",
				base);
			return -ENOTEMPTY;
		}
		int f = openat(v->ov_base, LAYER_MARK,
			       O_CREAT | O_EXCL | O_NOFOLLOW | O_WRONLY | O_CLOEXEC, 0644);
		if (f < 0 || write(f, "moat layer 1\n", 13) != 13) {
			snprintf(err, errlen, "%s: %s", base, strerror(errno));
			if (f >= 0)
				close(f);
			return -EIO;
		}
		close(f);
	}
	/* The phantoms a persisted layer already links to. */
	static const mode_t types[] = { S_IFREG, S_IFLNK, S_IFIFO, S_IFSOCK };
	for (size_t t = 0; t < sizeof types / sizeof types[0]; t++) {
		int r = phantom_new(v, types[t]);
		if (r < 0) {
			snprintf(err, errlen, "%s: cannot make the layer's markers: %s", base,
				 strerror(-r));
			return r;
		}
		for (int n = 1; n < VFS_MAX_PHANTOMS; n++) {
			char name[64];
			snprintf(name, sizeof name, PH_FILE "%c%d", phantom_letter(types[t]), n);
			if (fstatat(v->ov_base, name, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
			    phantom_new(v, types[t]) < 0)
				break;
		}
	}
	return 0;
}

/* base_open, and on a failure no base fd kept: the next write checks all
 * again. */
static int base_make(struct vfs *v, bool persist, char *err, size_t errlen)
{
	int r = base_open(v, persist, err, errlen);
	if (r < 0 && v->ov_base >= 0) {
		close(v->ov_base);
		v->ov_base = -1;
	}
	return r;
}

int ov_setup(struct vfs *v, const char *base, bool persist, char *err, size_t errlen)
{
	the_vfs = v;
	v->nphantom = 0;
	snprintf(v->ov_base_path, sizeof v->ov_base_path, "%s", base);
	/* A run's own layers are made at its first write (ov_ensure): on
	 * this VM's disk a directory costs ~0.1 ms to make and remove, and
	 * most runs write below /tmp and /workspace only. */
	v->ov_lazy = !persist;
	return v->ov_lazy ? 0 : base_make(v, persist, err, errlen);
}

/* Layer `name` of the base for m: made as a placeholder of the lower
 * root, or (persisted) found.  As moat. */
static int layer_make(struct vfs *v, struct vfs_mount *m, const char *name, char *err,
		      size_t errlen)
{
	struct stat st;
	if (fstatat(v->ov_base, name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
		/* A new layer starts as a placeholder of the lower root. */
		if (mkdirat(v->ov_base, name, 0755) < 0) {
			snprintf(err, errlen, "%s: %s", m->upper, strerror(errno));
			return -errno;
		}
		int d = openat(v->ov_base, name, O_PATH | O_DIRECTORY | O_CLOEXEC);
		int r = d < 0 ? -errno : phantom_link(v, S_IFREG, d, PH_NAME);
		if (d >= 0)
			close(d);
		if (r < 0) {
			/* never left without its marker: a later write would take
			 * it for a real, empty root */
			unlinkat(v->ov_base, name, AT_REMOVEDIR);
			snprintf(err, errlen, "%s: %s", m->upper, strerror(-r));
			return r;
		}
	} else if (!S_ISDIR(st.st_mode)) {
		snprintf(err, errlen, "%s: not a directory", m->upper);
		return -ENOTDIR;
	}
	m->upper_fd = vfs_open_beneath(v->ov_base, name, O_PATH | O_DIRECTORY);
	if (m->upper_fd < 0) {
		snprintf(err, errlen, "%s: %s", m->upper, strerror(-m->upper_fd));
		return m->upper_fd;
	}
	m->upper_real = root_real(m);
	if (m->upper_real)
		v->ov_used = true; /* a persisted layer with something in it */
	return 0;
}

int ov_add(struct vfs *v, struct vfs_mount *m, const char *name, char *err, size_t errlen)
{
	char upper[PATH_MAX];
	snprintf(upper, sizeof upper, "%s/%s", v->ov_base_path, name);
	if (vfs_mount_str(&m->upper, upper) < 0) {
		snprintf(err, errlen, "%s: %s", upper, strerror(ENOMEM));
		return -ENOMEM;
	}
	return v->ov_lazy ? 0 : layer_make(v, m, name, err, errlen);
}

/* m's layer, made now if this run has not made it yet (and the base
 * with it): its first write.  0, or -errno.  As moat. */
static int ov_ensure(struct vfs *v, struct vfs_mount *m)
{
	if (m->upper_fd >= 0)
		return 0;
	char err[PATH_MAX + 128];
	int r = v->ov_base < 0 ? base_make(v, false, err, sizeof err) : 0;
	if (r == 0)
		r = layer_make(v, m, strrchr(m->upper, '/') + 1, err, sizeof err);
	return r;
}

int ov_shadow(struct vfs_mount *m, const char *dir)
{
	if (vfs_mount_str(&m->shadow, dir) < 0)
		return -ENOMEM;
	m->shadow_fd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	return m->shadow_fd < 0 ? -errno : 0;
}

bool ov_shadowed(const struct vfs_mount *m, const char *name)
{
	struct stat st;
	return m->shadow_fd >= 0 && !strchr(name, '/') && strcmp(name, ".") && strcmp(name, "..") &&
	       fstatat(m->shadow_fd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode);
}

/* The lower directory `dir` of `m`, for looking up `name` there: the
 * shadow directory when it stands in for that name. */
static int lower_dir_for(struct vfs_mount *m, const char *dir, const char *name, int flags)
{
	if (strcmp(dir, ".") == 0 && ov_shadowed(m, name)) {
		int fd = fcntl(m->shadow_fd, F_DUPFD_CLOEXEC, 0);
		return fd < 0 ? -errno : fd;
	}
	return vfs_open_beneath(m->root_fd, dir, flags);
}

int ov_open_dir(struct vfs_mount *m, const char *rel, bool *upper)
{
	*upper = false;
	if (!ov_root_upper(m))
		return vfs_open_beneath(m->root_fd, rel, O_PATH | O_DIRECTORY);
	if (strcmp(rel, ".") == 0) {
		*upper = true;
		return vfs_open_beneath(m->upper_fd, ".", O_PATH | O_DIRECTORY);
	}
	int fd = vfs_open_beneath(m->upper_fd, rel, O_PATH | O_DIRECTORY);
	if (fd >= 0) {
		if (!dir_is_placeholder(fd, ".")) {
			*upper = true;
			return fd;
		}
		close(fd);
		return vfs_open_beneath(m->root_fd, rel, O_PATH | O_DIRECTORY);
	}
	if (fd != -ENOENT && fd != -ENOTDIR)
		return fd;
	/* Some prefix is a placeholder (everything below it is lower), or a
	 * real directory lacks the next name (it does not exist). */
	char buf[PATH_MAX];
	snprintf(buf, sizeof buf, "%s", rel);
	int cur = vfs_open_beneath(m->upper_fd, ".", O_PATH | O_DIRECTORY);
	for (char *s = buf, *e; cur >= 0 && s; s = e) {
		e = strchr(s, '/');
		if (e)
			*e++ = '\0';
		struct stat st;
		if (fstatat(cur, s, &st, AT_SYMLINK_NOFOLLOW) < 0) {
			int r = -errno;
			close(cur);
			return r;
		}
		if (!S_ISDIR(st.st_mode)) {
			/* A lower symlink here was resolved by the walk; a file
			 * cannot be a directory. */
			close(cur);
			return is_phantom(&st) && S_ISLNK(st.st_mode) ? -ELOOP : -ENOTDIR;
		}
		if (dir_is_placeholder(cur, s)) {
			close(cur);
			return vfs_open_beneath(m->root_fd, rel, O_PATH | O_DIRECTORY);
		}
		int next = openat(cur, s, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		close(cur);
		cur = next < 0 ? -errno : next;
	}
	if (cur >= 0) { /* real all the way: it appeared meanwhile */
		*upper = true;
		return cur;
	}
	return cur;
}

int ov_lookup(struct vfs_mount *m, int pfd, int *moved, bool *upper, const char *dir,
	      const char *name, struct stat *st)
{
	*moved = -1;
	if (!*upper && strcmp(dir, ".") == 0 && ov_shadowed(m, name)) {
		int sh = lower_dir_for(m, dir, name, 0);
		if (sh < 0)
			return sh;
		*moved = pfd = sh;
	}
	if (fstatat(pfd, name, st, AT_SYMLINK_NOFOLLOW) < 0)
		return -errno;
	if (!*upper || !placeholder(pfd, name, st))
		return 0;
	/* An upper placeholder: the shadow case (lower only) is not this one. */
	int low = lower_dir_for(m, dir, name, O_PATH | O_DIRECTORY);
	if (low < 0)
		return low == -ENOTDIR ? -ENOENT : low;
	*moved = low;
	*upper = false;
	if (fstatat(low, name, st, AT_SYMLINK_NOFOLLOW) < 0)
		return -errno; /* the host removed it: the name means nothing */
	return 0;
}

/* Directories only: a lower directory never moves (EXDEV), so its path
 * names it; a file may be renamed or linked after its copy-up, and then
 * the path would name another file (two names with one identity). */
static void origin_at(struct vfs_mount *m, const char *rel, struct stat *st)
{
	if (!S_ISDIR(st->st_mode))
		return;
	struct stat low;
	int dir = ov_shadowed(m, rel) ? m->shadow_fd : m->root_fd;
	if (fstatat(dir, rel, &low, AT_SYMLINK_NOFOLLOW | AT_EMPTY_PATH) == 0 &&
	    (low.st_mode & S_IFMT) == (st->st_mode & S_IFMT)) {
		st->st_dev = low.st_dev;
		st->st_ino = low.st_ino;
	}
}

void vfs_origin(const struct vfs_path *p, struct stat *st)
{
	if (p->kind != VN_HOST || p->mnt->kind != MNT_OVERLAY || !p->upper)
		return;
	/* rel has no symlink and no "..": the walk made it canonical, and
	 * a lower entry is only ever looked at, never followed. */
	origin_at(p->mnt, strcmp(p->rel, ".") == 0 ? "" : p->rel, st);
}

void vfs_origin_of_host(struct vfs *v, const char *host, struct stat *st)
{
	if (v->ov_base < 0 || !v->ov_used || st->st_dev != v->ov_dev)
		return;
	size_t bl;
	struct vfs_mount *m = vfs_mount_of_host(v, host, &bl);
	if (!m || m->kind != MNT_OVERLAY || strncmp(host, m->upper, bl) != 0)
		return;
	const char *rel = host + bl;
	while (*rel == '/')
		rel++;
	char canon[PATH_MAX];
	snprintf(canon, sizeof canon, "%s", rel);
	if (strstr(canon, "/../") || strncmp(canon, "../", 3) == 0)
		return;
	origin_at(m, canon, st);
}

/* ---- copy-up ---- */

/* Work on the upper layer as moat itself when moat is root (every
 * capability: a copy keeps the lower owner and ACLs whatever the sandbox's
 * uid, 0 included); the sandbox's credentials come back afterwards. */
struct as_self {
	bool on;
	uid_t uid;
	gid_t gid;
	struct vfs *v;
};

static struct as_self self_begin(struct vfs *v)
{
	struct as_self s = { false, 0, 0, v };
	if (geteuid() != 0)
		return s;
	s.on = true;
	if (v && v->creds) {
		creds_self(v->creds);
	} else {
		s.uid = (uid_t)setfsuid(0);
		s.gid = (gid_t)setfsgid(0);
	}
	return s;
}

static void self_end(struct as_self s)
{
	if (!s.on)
		return;
	if (s.v && s.v->creds) {
		creds_sandbox(s.v->creds);
	} else {
		setfsuid(s.uid);
		setfsgid(s.gid);
	}
}

/* The extended attributes a copy keeps: ACLs (they decide who may read
 * it) and user.* — never security.* (file capabilities) or trusted.*. */
static void copy_xattrs(int fd, int src)
{
	static const char *const acls[] = { "system.posix_acl_access", "system.posix_acl_default" };
	static char value[65536];
	for (size_t i = 0; i < sizeof acls / sizeof acls[0]; i++) {
		ssize_t n = fgetxattr(src, acls[i], value, sizeof value);
		if (n >= 0)
			fsetxattr(fd, acls[i], value, (size_t)n, 0);
	}
	char names[8192];
	ssize_t len = flistxattr(src, names, sizeof names);
	for (ssize_t off = 0; len > 0 && off < len; off += (ssize_t)strlen(names + off) + 1) {
		const char *nm = names + off;
		if (strncmp(nm, "user.", 5) != 0)
			continue;
		ssize_t n = fgetxattr(src, nm, value, sizeof value);
		if (n >= 0)
			fsetxattr(fd, nm, value, (size_t)n, 0);
	}
}

/* Owner, mode, and (from lower fd `src`, when given) ACLs and user.*. */
static void copy_attrs(int fd, int src, const struct stat *from)
{
	if (geteuid() == 0 && fchown(fd, from->st_uid, from->st_gid) < 0) {
		/* an id this filesystem cannot hold: keep moat's */
	}
	/* Never a set-id bit on a host file: no use inside (no_new_privs),
	 * and a gift to any host user who finds the copy. */
	if (fchmod(fd, from->st_mode & 01777) < 0) {
		/* keeps the creation mode */
	}
	/* after the mode: setting an ACL rewrites the group bits */
	if (src >= 0)
		copy_xattrs(fd, src);
}

static void copy_times(int dirfd, const char *name, const struct stat *from)
{
	struct timespec ts[2] = { from->st_atim, from->st_mtim };
	utimensat(dirfd, name, ts, AT_SYMLINK_NOFOLLOW);
}

static void path_join(char *out, size_t len, const char *dir, const char *name)
{
	if (strcmp(dir, ".") == 0)
		snprintf(out, len, "%s", name);
	else
		snprintf(out, len, "%s/%s", dir, name);
}

/* Fill placeholder directory `up` (upper rel `rel`) with a placeholder for
 * each entry of lower directory `rel`, then make it real. */
static int populate(struct vfs *v, struct vfs_mount *m, int up, const char *rel)
{
	int low = vfs_open_beneath(m->root_fd, rel, O_RDONLY | O_DIRECTORY);
	if (low < 0)
		return low;
	struct stat lst;
	int dup = fcntl(low, F_DUPFD_CLOEXEC, 0);
	DIR *d = dup >= 0 ? fdopendir(dup) : NULL;
	if (!d || fstat(low, &lst) < 0) {
		if (dup >= 0 && !d)
			close(dup);
		if (d)
			closedir(d);
		close(low);
		return -EIO;
	}
	int r = 0;
	struct dirent *de;
	while (r == 0 && (errno = 0, de = readdir(d))) {
		const char *n = de->d_name;
		if (strcmp(n, ".") == 0 || strcmp(n, "..") == 0 || strcmp(n, PH_NAME) == 0)
			continue;
		char vp[PATH_MAX * 2], sub[PATH_MAX];
		path_join(sub, sizeof sub, rel, n);
		snprintf(vp, sizeof vp, "%s/%s", m->vlen == 1 ? "" : m->vpath, sub);
		if (vfs_is_hidden(v, vp))
			continue; /* a secret never gets even a name here */
		unsigned char t = de->d_type;
		if (t == DT_UNKNOWN) {
			struct stat st;
			if (fstatat(low, n, &st, AT_SYMLINK_NOFOLLOW) < 0)
				continue;
			t = (unsigned char)IFTODT(st.st_mode);
		}
		if (t == DT_DIR) {
			if (mkdirat(up, n, 0755) < 0 && errno != EEXIST) {
				r = -errno;
				break;
			}
			int sd = openat(up, n, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			r = sd < 0 ? -errno : phantom_link(v, S_IFREG, sd, PH_NAME);
			if (sd >= 0)
				close(sd);
		} else {
			mode_t type = t == DT_LNK    ? S_IFLNK
				      : t == DT_FIFO ? S_IFIFO
				      : t == DT_SOCK ? S_IFSOCK
						     : S_IFREG;
			r = phantom_link(v, type, up, n);
		}
	}
	closedir(d);
	/* Shadowing files the lower layer lacks get their names too. */
	if (r == 0 && strcmp(rel, ".") == 0 && m->shadow_fd >= 0) {
		int sd = openat(m->shadow_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		DIR *sh = sd >= 0 ? fdopendir(sd) : NULL;
		while (sh && r == 0 && (de = readdir(sh))) {
			struct stat st;
			if (de->d_type == DT_REG &&
			    fstatat(up, de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
				r = phantom_link(v, S_IFREG, up, de->d_name);
		}
		if (sh)
			closedir(sh);
		else if (sd >= 0)
			close(sd);
	}
	if (r < 0) {
		close(low);
		return r;
	}
	/* Real now: the marker goes last, so an interrupted copy-up leaves a
	 * placeholder, never a half-listed real directory. */
	copy_attrs(up, low, &lst);
	close(low);
	if (unlinkat(up, PH_NAME, 0) < 0)
		return -errno;
	struct timespec ts[2] = { lst.st_atim, lst.st_mtim };
	futimens(up, ts);
	return 0;
}

/* Make every directory from the layer's root down to `rel` real; an O_PATH
 * fd of the upper `rel`, or -errno. */
static int copy_up_dirs(struct vfs *v, struct vfs_mount *m, const char *rel, bool *changed)
{
	int cur = vfs_open_beneath(m->upper_fd, ".", O_RDONLY | O_DIRECTORY);
	if (cur < 0)
		return cur;
	if (dir_is_placeholder(cur, ".")) {
		int r = populate(v, m, cur, ".");
		*changed = true;
		if (r < 0) {
			close(cur);
			return r;
		}
	}
	if (strcmp(rel, ".") == 0)
		return cur;
	char buf[PATH_MAX], sofar[PATH_MAX] = ".";
	snprintf(buf, sizeof buf, "%s", rel);
	for (char *s = buf, *e; s; s = e) {
		e = strchr(s, '/');
		if (e)
			*e++ = '\0';
		char nx[PATH_MAX];
		path_join(nx, sizeof nx, sofar, s);
		snprintf(sofar, sizeof sofar, "%s", nx);
		struct stat st;
		if (fstatat(cur, s, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISDIR(st.st_mode)) {
			int r = S_ISDIR(st.st_mode) ? -errno : -ENOTDIR;
			close(cur);
			return r;
		}
		int next = openat(cur, s, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		close(cur);
		if (next < 0)
			return -errno;
		cur = next;
		if (dir_is_placeholder(cur, ".")) {
			int r = populate(v, m, cur, sofar);
			*changed = true;
			if (r < 0) {
				close(cur);
				return r;
			}
		}
	}
	return cur;
}

/* Replace the phantom link `name` of real upper directory `up` by a copy
 * of the lower entry (lower directory `dir`). */
static int copy_up_file(struct vfs_mount *m, int up, const char *dir, const char *name)
{
	int low = lower_dir_for(m, dir, name, O_PATH | O_DIRECTORY);
	if (low < 0)
		return low;
	struct stat st;
	if (fstatat(low, name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
		close(low);
		return -errno;
	}
	char tmp[64];
	static unsigned seq;
	int r = 0;
	for (int tries = 0;; tries++) {
		snprintf(tmp, sizeof tmp, ".moat-copy-%u", ++seq);
		if (S_ISREG(st.st_mode)) {
			int out = openat(up, tmp, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0600);
			if (out < 0) {
				r = -errno;
			} else {
				/* Never blocks (a FIFO swapped in by a host writer of
				 * the lower directory) and copies only what was
				 * stat'ed: the same regular file. */
				int in = openat(low, name,
						O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
				struct stat ist;
				r = in < 0 ? -errno : 0;
				if (r == 0 && (fstat(in, &ist) < 0 || !S_ISREG(ist.st_mode) ||
					       ist.st_ino != st.st_ino || ist.st_dev != st.st_dev))
					r = -EAGAIN;
				while (r == 0) {
					/* In steps: a file of GBs is a stall of the
					 * loop; when a limit or a signal is due it is
					 * given up (EINTR). */
					if (hurry_now()) {
						r = -EINTR;
						break;
					}
					ssize_t n = copy_file_range(in, NULL, out, NULL, 64 << 20,
								    0);
					if (n < 0 && (errno == EXDEV || errno == EINVAL ||
						      errno == EOPNOTSUPP)) {
						char b[65536];
						n = read(in, b, sizeof b);
						if (n > 0 && write(out, b, (size_t)n) != n)
							n = -1;
					}
					if (n <= 0) {
						r = n < 0 ? -errno : 0;
						break;
					}
				}
				copy_attrs(out, in, &st);
				if (in >= 0)
					close(in);
				close(out);
			}
		} else if (S_ISLNK(st.st_mode)) {
			char target[PATH_MAX];
			ssize_t n = readlinkat(low, name, target, sizeof target - 1);
			if (n < 0) {
				r = -errno;
			} else {
				target[n] = '\0';
				r = symlinkat(target, up, tmp) < 0 ? -errno : 0;
				if (r == 0 && geteuid() == 0)
					fchownat(up, tmp, st.st_uid, st.st_gid,
						 AT_SYMLINK_NOFOLLOW);
			}
		} else {
			r = mknodat(up, tmp, (st.st_mode & S_IFMT) | (st.st_mode & 0777), 0) < 0
				    ? -errno
				    : 0;
			if (r == 0 && geteuid() == 0)
				fchownat(up, tmp, st.st_uid, st.st_gid, AT_SYMLINK_NOFOLLOW);
		}
		if (r != -EEXIST || tries > 100)
			break;
	}
	close(low);
	if (r == 0) {
		copy_times(up, tmp, &st);
		if (renameat(up, tmp, up, name) < 0)
			r = -errno;
	}
	if (r < 0 && r != -EEXIST)
		unlinkat(up, tmp, 0);
	return r;
}

static bool sticky(int dirfd)
{
	struct stat st;
	return fstat(dirfd, &st) == 0 && (st.st_mode & S_ISVTX);
}

/* Is lower directory `rel` empty? */
static int lower_empty(struct vfs_mount *m, const char *rel)
{
	int fd = vfs_open_beneath(m->root_fd, rel, O_RDONLY | O_DIRECTORY);
	if (fd < 0)
		return fd == -ENOENT ? 0 : fd;
	DIR *d = fdopendir(fd);
	if (!d) {
		close(fd);
		return -EIO;
	}
	struct dirent *de;
	int r = 0;
	while ((de = readdir(d)))
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, "..")) {
			r = -ENOTEMPTY;
			break;
		}
	closedir(d);
	return r;
}

static bool lower_has_dir(struct vfs_mount *m, const char *rel)
{
	int fd = vfs_open_beneath(m->root_fd, rel, O_PATH | O_DIRECTORY);
	if (fd < 0)
		return false;
	close(fd);
	return true;
}

int vfs_root_fd(const struct vfs_path *p)
{
	return p->mnt->kind == MNT_OVERLAY && p->upper ? p->mnt->upper_fd : p->mnt->root_fd;
}

int vfs_make_writable(struct vfs *v, struct vfs_path *p, enum vfs_change what)
{
	struct vfs_mount *m = p->mnt;
	if (p->kind != VN_HOST)
		return m->ro ? -EROFS : -EACCES;
	if (m->kind != MNT_OVERLAY)
		return m->ro ? -EROFS : 0;
	bool root = p->parent < 0;
	if (root && what != VC_CHANGE && what != VC_CREATE)
		return -EBUSY;
	char dir[PATH_MAX];
	const char *slash = strrchr(p->rel, '/');
	if (root)
		snprintf(dir, sizeof dir, ".");
	else if (slash)
		snprintf(dir, sizeof dir, "%.*s", (int)(slash - p->rel), p->rel);
	else
		snprintf(dir, sizeof dir, ".");
	if (what == VC_RENAME && p->exists && S_ISDIR(p->st.st_mode) && lower_has_dir(m, p->rel))
		return -EXDEV;
	if (p->upper && (what == VC_CREATE || (p->exists && !root)))
		return 0; /* already there: the kernel does the rest */

	struct as_self s = self_begin(v);
	bool changed = false;
	int r = ov_ensure(v, m);
	if (r < 0)
		goto out;
	v->ov_used = true;
	int up = copy_up_dirs(v, m, root ? "." : dir, &changed);
	if (up < 0) {
		r = up;
		goto out;
	}
	if (root) {
		p->upper = true;
		close(up);
		goto out;
	}
	struct stat st;
	if (p->exists && fstatat(up, p->name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
	    placeholder(up, p->name, &st)) {
		if (S_ISDIR(st.st_mode)) {
			if (what == VC_CHANGE) {
				int sd = openat(up, p->name,
						O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
				r = sd < 0 ? -errno : populate(v, m, sd, p->rel);
				if (sd >= 0)
					close(sd);
			} else if (what == VC_REMOVE) {
				/* Gone from the view only if the lower one is empty;
				 * then it is an empty real directory the caller removes. */
				r = lower_empty(m, p->rel);
				if (r == 0) {
					char at[PATH_MAX];
					snprintf(at, sizeof at, "%s/%s", p->name, PH_NAME);
					r = unlinkat(up, at, 0) < 0 ? -errno : 0;
				}
				if (r == 0) {
					int sd = openat(up, p->name,
							O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
								O_CLOEXEC);
					if (sd >= 0) {
						copy_attrs(sd, -1, &p->st);
						close(sd);
					}
				}
			}
		} else if (what == VC_CHANGE || what == VC_RENAME ||
			   (what == VC_REMOVE && sticky(up))) {
			/* In a sticky directory the kernel asks who owns the
			 * name: the copy's owner is the file's, the phantom's
			 * is moat's. */
			r = copy_up_file(m, up, dir, p->name);
		}
		changed = true;
	}
	if (r < 0) {
		close(up);
		goto out;
	}
	/* `p` now names the upper layer: the caller's host call lands there. */
	int pfd = openat(up, ".", O_PATH | O_DIRECTORY | O_CLOEXEC);
	close(up);
	if (pfd < 0) {
		r = -errno;
		goto out;
	}
	vfs_path_release(p);
	p->parent = pfd;
	p->upper = true;
	if (p->exists && fstatat(pfd, p->name, &p->st, AT_SYMLINK_NOFOLLOW) < 0)
		p->exists = false;
out:
	self_end(s);
	if (changed) {
		m->upper_real = root_real(m);
		vfs_invalidate(v, m);
	}
	return r;
}
