/* The mount table and the default view. */
#include "fs-emulation/etc.h"
#include "fs-emulation/scratch.h"
#include "fs-emulation/vfs.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "core/creds.h"
#include "core/machine.h"

/* What an unset path of a mount is: never freed. */
static const char no_path[] = "";

int vfs_mount_str(const char **slot, const char *s)
{
	char *copy = strdup(s);
	if (!copy)
		return -ENOMEM;
	if (*slot && *slot != no_path)
		free((char *)*slot);
	*slot = copy;
	return 0;
}

static void fd_drop(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

/* A mount's paths and fds let go of (its slot free for another). */
static void mount_free(struct vfs_mount *m)
{
	if (m->quota)
		umount2(m->host, MNT_DETACH);
	m->quota = false;
	fd_drop(&m->root_fd);
	fd_drop(&m->upper_fd);
	fd_drop(&m->shadow_fd);
	const char **str[] = { &m->vpath, &m->host, &m->upper, &m->shadow };
	for (size_t k = 0; k < sizeof str / sizeof str[0]; k++) {
		if (*str[k] && *str[k] != no_path)
			free((char *)*str[k]);
		*str[k] = no_path;
	}
}

/* Mount `m`'s paths and its root, host directory `host` (opened, its
 * identity kept).  0, or an errno with m's strings to free. */
static int mount_open(struct vfs_mount *m, const char *vpath, const char *host)
{
	m->vlen = strlen(vpath);
	if (vfs_mount_str(&m->vpath, vpath) < 0 || vfs_mount_str(&m->host, host) < 0)
		return ENOMEM;
	m->root_fd = open(host, O_PATH | O_DIRECTORY | O_CLOEXEC);
	struct stat st;
	if (m->root_fd < 0 || fstat(m->root_fd, &st) < 0)
		return errno;
	m->dev = st.st_dev;
	m->ino = st.st_ino;
	return 0;
}

static int add_mount(struct vfs *v, const char *vpath, enum mnt_kind kind, bool ro,
		     const char *host, char *err, size_t errlen)
{
	int idx = -1;
	for (int i = 0; i < v->nmnt; i++)
		if (strcmp(v->mnt[i].vpath, vpath) == 0)
			idx = i; /* a later mount at the same place replaces it */
	bool fresh = idx < 0;
	if (fresh) {
		if (v->nmnt == VFS_MAX_MOUNTS) {
			snprintf(err, errlen, "too many mounts (at most %d)", VFS_MAX_MOUNTS);
			return -ENOSPC;
		}
		idx = v->nmnt;
		v->mnt[idx] = (struct vfs_mount){ .root_fd = -1, .upper_fd = -1, .shadow_fd = -1 };
	}
	/* The replaced mount's quota tmpfs goes with it: no entry would be
	 * left to unmount it, and the scratch would stay. */
	struct vfs_mount *m = &v->mnt[idx];
	mount_free(m);
	m->kind = kind;
	m->ro = ro;
	/* Cached: trees that change only through the supervisor (rmdir and
	 * rename there invalidate exactly).  Host binds are not: the host can
	 * move a directory under them at any time.  The default system binds
	 * are marked after setup (see vfs_setup). */
	m->cached = kind == MNT_TMPFS || kind == MNT_ROOT || kind == MNT_OVERLAY;
	m->upper_real = false;
	int e = mount_open(m, vpath, host);
	if (e) {
		snprintf(err, errlen, "cannot open %s for %s: %s", host, vpath, strerror(e));
		mount_free(m);
		if (!fresh) /* the replaced slot goes: the table stays dense */
			v->mnt[idx] = v->mnt[--v->nmnt];
		return -e;
	}
	if (fresh)
		v->nmnt++;
	return idx;
}

/* Make the directories of `vpath` in the root skeleton, as long as the
 * path lies in the skeleton (not below another mount). */
static int skeleton_mkdirs(struct vfs *v, const char *vpath)
{
	char buf[PATH_MAX];
	snprintf(buf, sizeof buf, "%s", vpath);
	for (char *s = buf + 1;; s++) {
		if (*s != '/' && *s != '\0')
			continue;
		char c = *s;
		*s = '\0';
		if (vfs_mount_of(v, buf) == &v->mnt[0]) {
			char host[PATH_MAX * 2];
			snprintf(host, sizeof host, "%s%s", v->mnt[0].host, buf);
			/* Never through a symlink of the skeleton (/lib64 -> an
			 * absolute host path): that mkdir would land on the host. */
			struct stat st;
			if (lstat(host, &st) == 0) {
				if (!S_ISDIR(st.st_mode))
					return -ENOTDIR;
			} else if (mkdir(host, 0755) < 0) {
				return -errno;
			}
		}
		*s = c;
		if (!c)
			break;
	}
	return 0;
}

static int make_dir(const char *dir, const char *name, mode_t mode, char *out, size_t outlen)
{
	snprintf(out, outlen, "%s/%s", dir, name);
	if (mkdir(out, mode) < 0)
		return -errno;
	return chmod(out, mode) < 0 ? -errno : 0; /* past the umask */
}

/* A host system directory under a private writable layer: layer `name`
 * of the base (see overlay.c). */
static int add_overlay(struct vfs *v, const char *vpath, const char *host, const char *name,
		       char *err, size_t errlen)
{
	int r = add_mount(v, vpath, MNT_OVERLAY, false, host, err, errlen);
	if (r < 0)
		return r;
	return ov_add(v, &v->mnt[r], name, err, errlen);
}

/* The synthetic /etc files (etc.c), generated once into the skeleton and
 * shadowing the host's of those names in the /etc overlay: a program that
 * rewrites one (sed -i /etc/hosts) copies the synthetic file up. */
static int etc_files_make(struct vfs *v, struct vfs_mount *m, const char *skel)
{
	char dir[PATH_MAX];
	int r = make_dir(skel, "etc", 0755, dir, sizeof dir);
	if (r < 0)
		return r;
	static char buf[65536];
	for (const char *const *f = etc_files; *f; f++) {
		int n = etc_generate(v, *f, buf, sizeof buf);
		if (n < 0)
			return n;
		if (n == 0)
			continue;
		char path[PATH_MAX * 2];
		snprintf(path, sizeof path, "%s/%s", dir, *f);
		int fd = open(path, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0644);
		if (fd < 0)
			return -errno;
		bool ok = write(fd, buf, (size_t)n) == n;
		close(fd);
		if (!ok)
			return -EIO;
	}
	return ov_shadow(m, dir);
}

/* /bin, /lib...: kept as the host has them, a symlink or a directory. */
static int mirror_top(struct vfs *v, const char *name, char *err, size_t errlen)
{
	char host[PATH_MAX], link[PATH_MAX];
	snprintf(host, sizeof host, "/%s", name);
	struct stat st;
	if (lstat(host, &st) < 0)
		return 0;
	if (S_ISLNK(st.st_mode)) {
		ssize_t n = readlink(host, link, sizeof link - 1);
		if (n < 0)
			return 0;
		link[n] = '\0';
		char at[PATH_MAX * 2];
		snprintf(at, sizeof at, "%s/%s", v->mnt[0].host, name);
		return symlink(link, at) < 0 ? -errno : 0;
	}
	if (!S_ISDIR(st.st_mode))
		return 0;
	if (skeleton_mkdirs(v, host) < 0)
		return -errno;
	return add_overlay(v, host, host, name, err, errlen);
}

static int dev_skeleton(struct vfs *v, const char *dir)
{
	static const char *const devs[] = { "null",    "zero", "full", "random",
					    "urandom", "tty",  "ptmx" };
	for (size_t i = 0; i < sizeof devs / sizeof devs[0]; i++) {
		char p[PATH_MAX];
		snprintf(p, sizeof p, "%s/%s", dir, devs[i]);
		int fd = open(p, O_CREAT | O_WRONLY | O_CLOEXEC, 0666);
		if (fd < 0)
			return -errno;
		close(fd);
	}
	static const char *const links[][2] = {
		{ "fd", "/proc/self/fd" },
		{ "stdin", "/proc/self/fd/0" },
		{ "stdout", "/proc/self/fd/1" },
		{ "stderr", "/proc/self/fd/2" },
	};
	for (size_t i = 0; i < sizeof links / sizeof links[0]; i++) {
		char p[PATH_MAX];
		snprintf(p, sizeof p, "%s/%s", dir, links[i][0]);
		if (symlink(links[i][1], p) < 0)
			return -errno;
	}
	char p[PATH_MAX];
	/* pts: names appear as the sandbox opens /dev/ptmx (dev.c), written
	 * by the supervisor while it acts with the sandbox's fsuid. */
	snprintf(p, sizeof p, "%s/pts", dir);
	if (mkdir(p, 0755) < 0 || (chown(p, v->uid, v->gid) < 0 && geteuid() == 0))
		return -errno;
	/* The terminal moat runs in, when the sandbox inherits it: listed,
	 * so ttyname() works on the fds the sandbox holds. */
	if (v->machine && v->machine->tty_pts >= 0) {
		char ph[PATH_MAX + 16];
		snprintf(ph, sizeof ph, "%s/%d", p, v->machine->tty_pts);
		int f = open(ph, O_CREAT | O_WRONLY | O_CLOEXEC, 0620);
		if (f >= 0)
			close(f);
	}
	snprintf(p, sizeof p, "%s/shm", dir);
	return mkdir(p, 01777) < 0 ? -errno : 0;
}

/* The view's steps below return 0 or -errno (a message in `err` when the
 * step has more to say than the error); vfs_setup adds a general one. */
#define TRY(x)                     \
	do {                       \
		int r_ = (x);      \
		if (r_ < 0)        \
			return r_; \
	} while (0)

/* Before any mount: the scratch, the skeletons' directory and the ids.
 * Skeletons hold only empty directories, placeholders and symlinks: on
 * tmpfs their two dozen mkdirs cost microseconds, not the tens each costs
 * on a journaled disk.  Nothing there is ever exec'd. */
static void setup_begin(struct vfs *v, const char *scratch, uid_t uid, gid_t gid)
{
	/* `v` starts zeroed (static), and a mount slot is read only below
	 * nmnt, after add_mount has set all of it: touching the 64 slots
	 * here (a memset, or their fds set to -1) would fault in half a
	 * megabyte, ~200 pages, for the dozen a run uses. */
	v->nmnt = 0;
	snprintf(v->scratch, sizeof v->scratch, "%s", scratch);
	snprintf(v->skel, sizeof v->skel, "/dev/shm/moat-skel-XXXXXX");
	/* 0710 of the sandbox's group, as the scratch: no other local user
	 * may plant anything in the listings moat builds here. */
	bool made = mkdtemp(v->skel) != NULL;
	if (made &&
	    ((geteuid() == 0 && chown(v->skel, (uid_t)-1, gid) < 0) || chmod(v->skel, 0710) < 0)) {
		rmdir(v->skel); /* never left behind: the scratch serves instead */
		made = false;
	}
	if (made)
		scratch_hold(v->skel); /* removed even without vfs_teardown */
	else
		snprintf(v->skel, sizeof v->skel, "%s", scratch);
	v->uid = uid;
	v->gid = gid;
	v->ov_base = -1;
}

/* The root and the system directories: each under a private writable
 * layer (kept in `persist` across runs when given).  The root's lower
 * layer is the skeleton of mount points; what the sandbox makes at the
 * top (/data, /opt...) lands in its layer.  Pre: setup_begin. */
static int setup_system(struct vfs *v, const char *scratch, const char *persist, char *err,
			size_t errlen)
{
	char root[PATH_MAX], base[PATH_MAX];
	TRY(make_dir(v->skel, "root", 0755, root, sizeof root));
	if (persist)
		snprintf(base, sizeof base, "%s", persist);
	else
		snprintf(base, sizeof base, "%s/upper", scratch);
	TRY(ov_setup(v, base, persist != NULL, err, errlen));
	TRY(add_overlay(v, "/", root, "root", err, errlen));
	TRY(skeleton_mkdirs(v, "/usr"));
	TRY(add_overlay(v, "/usr", "/usr", "usr", err, errlen));
	static const char *const tops[] = { "bin", "sbin", "lib", "lib32", "lib64", "libx32" };
	for (size_t i = 0; i < sizeof tops / sizeof tops[0]; i++)
		TRY(mirror_top(v, tops[i], err, errlen));
	TRY(skeleton_mkdirs(v, "/etc"));
	TRY(add_overlay(v, "/etc", "/etc", "etc", err, errlen));
	return etc_files_make(v, vfs_mount_of(v, "/etc"), v->skel);
}

/* /tmp and /workspace: the sandbox's own directories in the scratch.
 * Pre: the root is mounted. */
static int setup_scratch(struct vfs *v, const char *scratch, char *err, size_t errlen)
{
	char dir[PATH_MAX];
	TRY(make_dir(scratch, "tmp", 01777, dir, sizeof dir));
	TRY(skeleton_mkdirs(v, "/tmp"));
	TRY(add_mount(v, "/tmp", MNT_TMPFS, false, dir, err, errlen));
	TRY(make_dir(scratch, "workspace", 0755, dir, sizeof dir));
	if (chown(dir, v->uid, v->gid) < 0 && geteuid() == 0)
		return -errno;
	TRY(skeleton_mkdirs(v, "/workspace"));
	TRY(add_mount(v, "/workspace", MNT_TMPFS, false, dir, err, errlen));
	return 0;
}

/* The synthetic /dev and its /dev/shm.  Pre: the root is mounted. */
static int setup_dev(struct vfs *v, const char *scratch, char *err, size_t errlen)
{
	char dir[PATH_MAX];
	TRY(make_dir(v->skel, "dev", 0755, dir, sizeof dir));
	TRY(dev_skeleton(v, dir));
	TRY(skeleton_mkdirs(v, "/dev"));
	/* Read-only: nothing is created there, and the device placeholders
	 * stand for the host's devices, whose modes must not be changed. */
	TRY(add_mount(v, "/dev", MNT_DEV, true, dir, err, errlen));
	TRY(make_dir(scratch, "shm", 01777, dir, sizeof dir));
	TRY(add_mount(v, "/dev/shm", MNT_TMPFS, false, dir, err, errlen));
	return 0;
}

/* The synthetic /proc, and the place its listings are made ("pv").
 * Pre: the root is mounted. */
static int setup_proc(struct vfs *v, char *err, size_t errlen)
{
	char dir[PATH_MAX];
	TRY(make_dir(v->skel, "proc", 0555, dir, sizeof dir));
	TRY(skeleton_mkdirs(v, "/proc"));
	TRY(add_mount(v, "/proc", MNT_PROC, true, dir, err, errlen));
	/* /proc listings are made here by the supervisor while it acts with
	 * the sandbox's fsuid; the sandbox itself cannot name this place. */
	TRY(make_dir(v->skel, "pv", 0700, dir, sizeof dir));
	if (chown(dir, v->uid, v->gid) < 0 && geteuid() == 0)
		return -errno;
	return 0;
}

/* The default view, in its order: the root and system layers, the
 * scratch directories, /dev, /proc.  Pre: setup_begin. */
static int setup_default_view(struct vfs *v, const char *scratch, const char *persist, char *err,
			      size_t errlen)
{
	TRY(setup_system(v, scratch, persist, err, errlen));
	TRY(setup_scratch(v, scratch, err, errlen));
	TRY(setup_dev(v, scratch, err, errlen));
	/* The host's system directories do not change under a running
	 * program (a package upgrade aside): their directories may be cached. */
	for (int i = 0; i < v->nmnt; i++)
		if (v->mnt[i].kind == MNT_BIND)
			v->mnt[i].cached = true;
	return setup_proc(v, err, errlen);
}

/* The host directory user mount `q` (the i-th) shows, into `host`
 * (PATH_MAX bytes): a new one in the scratch for a tmpfs — with a quota,
 * a tmpfs of that size, in moat's private mount namespace (cli made
 * one) — else its source, resolved. */
static int user_mount_host(const struct vfs_mount_req *q, int i, const char *scratch, char *host,
			   char *err, size_t errlen)
{
	if (q->kind != MNT_TMPFS) {
		if (realpath(q->src, host))
			return 0;
		snprintf(err, errlen, "%s: %s", q->src, strerror(errno));
		return -errno;
	}
	char name[32];
	snprintf(name, sizeof name, "tmpfs%d", i);
	TRY(make_dir(scratch, name, 01777, host, PATH_MAX));
	if (q->size) {
		char opts[64];
		snprintf(opts, sizeof opts, "size=%llu,mode=1777", q->size);
		if (mount("tmpfs", host, "tmpfs", MS_NOSUID | MS_NODEV, opts) < 0) {
			snprintf(err, errlen, "--tmpfs %s: cannot make its quota: %s", q->dst,
				 strerror(errno));
			return -errno;
		}
	}
	return 0;
}

/* User mount `q` (the i-th: --bind, --ro-bind, --tmpfs, --overlay) at
 * its destination, whose directories the root's skeleton gets.
 * Pre: the default view is set up. */
static int add_user_mount(struct vfs *v, const struct vfs_mount_req *q, int i, const char *scratch,
			  char *err, size_t errlen)
{
	/* The destination first: a quota's tmpfs mounted for a destination
	 * refused would be in no mount of the table, and vfs_teardown would
	 * never unmount it (the scratch then stays behind). */
	int r = skeleton_mkdirs(v, q->dst);
	if (r < 0) {
		snprintf(err, errlen, "%s: cannot mount there: %s", q->dst,
			 r == -ENOTDIR ? "a part of it is a symlink or a file in the view"
				       : strerror(-r));
		return r;
	}
	char host[PATH_MAX];
	TRY(user_mount_host(q, i, scratch, host, err, errlen));
	if (q->kind == MNT_OVERLAY) {
		/* The layer is named by the destination, so a persisted
		 * layer finds its mount again: "/data/in" -> "o+data+in"
		 * (never a name of the default layers: root, usr, etc...). */
		char name[PATH_MAX];
		snprintf(name, sizeof name, "o+%s", q->dst + 1);
		for (char *s = name; *s; s++)
			if (*s == '/')
				*s = '+';
		return add_overlay(v, q->dst, host, name, err, errlen);
	}
	r = add_mount(v, q->dst, q->kind, q->ro, host, err, errlen);
	if (r < 0) {
		if (q->size)
			umount2(host, MNT_DETACH);
		return r;
	}
	v->mnt[r].quota = q->size > 0;
	return 0;
}
#undef TRY

int vfs_setup(struct vfs *v, const char *scratch, const char *persist, uid_t uid, gid_t gid,
	      const struct vfs_mount_req *req, int nreq, char *err, size_t errlen)
{
	setup_begin(v, scratch, uid, gid);
	err[0] = '\0';
	int r = setup_default_view(v, scratch, persist, err, errlen);
	for (int i = 0; r >= 0 && i < nreq; i++)
		r = add_user_mount(v, &req[i], i, scratch, err, errlen);
	if (r < 0 && !err[0])
		snprintf(err, errlen, "setting up the view: %s", strerror(-r));
	return r < 0 ? r : 0;
}

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)ftw;
	if (flag == FTW_DNR) {
		/* A directory the sandbox made unreadable, and moat is not
		 * root (no DAC override): opened up, then walked.  Nothing
		 * swaps it for a link meanwhile: the sandbox is gone. */
		if (chmod(path, 0700) == 0)
			nftw(path, rm_entry, 16, FTW_DEPTH | FTW_PHYS | FTW_MOUNT);
		rmdir(path);
		return 0;
	}
	if (flag == FTW_DP || flag == FTW_D)
		chmod(path, 0700), rmdir(path);
	else
		unlink(path);
	return 0;
}

void vfs_teardown(struct vfs *v)
{
	vfs_dcache_clear();
	for (int i = 0; i < v->nmnt; i++)
		mount_free(&v->mnt[i]);
	if (v->ov_base >= 0)
		close(v->ov_base);
	v->ov_base = -1;
	v->nmnt = 0;
	/* fd by fd, an empty directory in one rmdir; nftw for what is left
	 * (a tree deeper than SCRATCH_DEPTH) */
	if (v->skel[0] && strcmp(v->skel, v->scratch) != 0) {
		if (!scratch_remove(v->skel))
			nftw(v->skel, rm_entry, 32, FTW_DEPTH | FTW_PHYS | FTW_MOUNT);
		scratch_forget(v->skel);
	}
	if (v->scratch[0] && !scratch_remove(v->scratch))
		nftw(v->scratch, rm_entry, 32, FTW_DEPTH | FTW_PHYS | FTW_MOUNT);
	v->skel[0] = v->scratch[0] = '\0';
}

int vfs_mounts_text(struct vfs *v, char *buf, size_t len)
{
	size_t off = 0;
	for (int i = 0; i < v->nmnt; i++) {
		const struct vfs_mount *m = &v->mnt[i];
		static const char *const fstype[] = { "rootfs",   "bind", "tmpfs",
						      "devtmpfs", "proc", "overlay" };
		int n = snprintf(buf + off, len - off, "%s %s %s %s 0 0\n",
				 m->kind == MNT_BIND ? "moat" : fstype[m->kind], m->vpath,
				 m->kind == MNT_BIND ? "none" : fstype[m->kind],
				 m->ro ? "ro" : "rw");
		if (n < 0 || (size_t)n >= len - off)
			return -ENAMETOOLONG;
		off += (size_t)n;
	}
	return (int)off;
}

struct vfs_mount *vfs_mount_of_host(struct vfs *v, const char *host, size_t *len)
{
	struct vfs_mount *best = NULL;
	size_t bl = 0;
	for (int i = 0; i < v->nmnt; i++) {
		struct vfs_mount *m = &v->mnt[i];
		size_t hl = strlen(m->host);
		if (hl > bl && strncmp(host, m->host, hl) == 0 &&
		    (host[hl] == '/' || host[hl] == '\0') && m->kind != MNT_PROC) {
			best = m;
			bl = hl;
		}
		for (int k = 0; k < 2 && m->kind == MNT_OVERLAY; k++) {
			const char *h = k ? m->shadow : m->upper;
			hl = strlen(h);
			if (hl && hl > bl && strncmp(host, h, hl) == 0 &&
			    (host[hl] == '/' || host[hl] == '\0')) {
				best = m;
				bl = hl;
			}
		}
	}
	*len = bl;
	return best;
}

int vfs_vpath_of_host(struct vfs *v, const char *host, char *out, size_t len)
{
	/* The host devices /dev shows, and ptys of /dev/pts (dev.c decides
	 * which can be opened): the same name inside. */
	if (strncmp(host, "/dev/", 5) == 0 &&
	    (vfs_dev_name(host + 5) || (strncmp(host + 5, "pts/", 4) == 0 && host[9] &&
					strspn(host + 9, "0123456789") == strlen(host + 9)))) {
		snprintf(out, len, "%s", host);
		return 0;
	}
	size_t bl;
	const struct vfs_mount *m = vfs_mount_of_host(v, host, &bl);
	if (!m)
		return -ENOENT;
	const char *rest = host + bl;
	if (m->vlen == 1)
		snprintf(out, len, "%s", *rest ? rest : "/");
	else
		snprintf(out, len, "%s%s", m->vpath, rest);
	return 0;
}

bool vfs_holds_mount(struct vfs *v, const char *vpath)
{
	size_t n = strlen(vpath);
	for (int i = 1; i < v->nmnt; i++) {
		const struct vfs_mount *m = &v->mnt[i];
		if (m->vlen > n && strncmp(m->vpath, vpath, n) == 0 &&
		    (m->vpath[n] == '/' || n == 1))
			return true;
	}
	return false;
}

/* Every cached directory goes (a pinned one when its walk lets go). */
static void forget_dirs(struct vfs *v)
{
	for (int i = 0; i < v->nmnt; i++)
		vfs_invalidate(v, &v->mnt[i]);
}

int vfs_mount_add(struct vfs *v, const char *vpath, enum mnt_kind kind, bool ro, const char *host,
		  unsigned long long size, mode_t mode)
{
	static unsigned made_count;
	char dir[PATH_MAX];
	if (v->nmnt == VFS_MAX_MOUNTS)
		return -ENOSPC;
	bool quota = false;
	if (!host) {
		char name[32];
		snprintf(name, sizeof name, "mnt%u", made_count++);
		int r = make_dir(v->scratch, name, mode & 07777, dir, sizeof dir);
		if (r < 0)
			return r;
		if (size) {
			/* a tmpfs of that size, in moat's own mount namespace
			 * (never the host's): moat's capability for the call */
			char opts[64];
			snprintf(opts, sizeof opts, "size=%llu,mode=%o", size,
				 (unsigned)(mode & 07777));
			int e = v->private_mounts && v->creds ? 0 : EPERM;
			if (v->disk_limited)
				size = 0; /* in the limited scratch, as every layer */
			else if (!e) {
				creds_admin_begin(v->creds);
				e = mount("tmpfs", dir, "tmpfs", MS_NOSUID | MS_NODEV, opts) < 0
					    ? errno
					    : 0;
				creds_admin_end(v->creds);
			}
			if (e && size) {
				rmdir(dir);
				return -e;
			}
			quota = size != 0;
		}
		host = dir;
	}
	/* Appended, never replacing: add_mount replaces a mount at the same
	 * place, so the slot is taken by hand. */
	int idx = v->nmnt;
	struct vfs_mount *m = &v->mnt[idx];
	*m = (struct vfs_mount){ .root_fd = -1, .upper_fd = -1, .shadow_fd = -1 };
	m->vpath = m->host = m->upper = m->shadow = no_path;
	m->kind = kind;
	m->ro = ro;
	m->cached = kind == MNT_TMPFS;
	m->made = true;
	int e = mount_open(m, vpath, host);
	if (e) {
		m->quota = quota;
		if (quota && v->creds)
			creds_admin_begin(v->creds); /* its umount2, in mount_free */
		mount_free(m);
		if (quota && v->creds)
			creds_admin_end(v->creds);
		if (host == dir)
			rmdir(dir);
		return -e;
	}
	m->quota = quota;
	m->owns_dir = host == dir;
	v->nmnt++;
	forget_dirs(v); /* what lay below the mount point is hidden now */
	return idx;
}

static int rm_made(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)ftw;
	if (flag == FTW_DP)
		rmdir(path);
	else
		unlink(path);
	return 0;
}

void vfs_mount_remove(struct vfs *v, int idx)
{
	struct vfs_mount *m = &v->mnt[idx];
	char host[PATH_MAX] = "";
	/* a tmpfs of the sandbox's own making: its contents go with it,
	 * unless a bind still shows some of them (then at the run's end) */
	if (m->owns_dir) {
		snprintf(host, sizeof host, "%s", m->host);
		size_t n = strlen(host);
		for (int i = 0; i < v->nmnt; i++)
			if (i != idx && strncmp(v->mnt[i].host, host, n) == 0 &&
			    (v->mnt[i].host[n] == '/' || v->mnt[i].host[n] == '\0'))
				host[0] = '\0';
	}
	forget_dirs(v); /* the cache names mounts by their slots, which move */
	bool admin = m->quota && v->creds;
	if (admin)
		creds_admin_begin(v->creds); /* its umount2, in mount_free */
	mount_free(m);
	if (admin)
		creds_admin_end(v->creds);
	if (host[0])
		nftw(host, rm_made, 16, FTW_DEPTH | FTW_PHYS);
	for (int i = idx; i + 1 < v->nmnt; i++)
		v->mnt[i] = v->mnt[i + 1];
	v->nmnt--;
}
