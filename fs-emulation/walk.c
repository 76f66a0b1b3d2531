/* The virtual path walk.  See vfs.h for the contract. */
#include "core/call.h"
#include "fs-emulation/vfs.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <linux/openat2.h>
#include <stdint.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <xxhash.h>

#include "core/creds.h"
#include "core/task.h"

#define MAX_HOPS 40

/* Resolve beneath the mount root, refusing every symlink and magic link:
 * the supervisor has already decided what each component is, so a symlink
 * found here was swapped in after the decision and must not be followed. */
int vfs_open_beneath(int root, const char *rel, int flags)
{
	struct open_how how = {
		.flags = (uint64_t)(flags | O_CLOEXEC),
		.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
	};
	int fd = (int)syscall(SYS_openat2, root, rel, &how, sizeof how);
	return fd < 0 ? -errno : fd;
}


struct vfs_mount *vfs_mount_of(struct vfs *v, const char *vpath)
{
	struct vfs_mount *best = &v->mnt[0]; /* the root */
	for (int i = 1; i < v->nmnt; i++) {
		struct vfs_mount *m = &v->mnt[i];
		/* >=: of two at one place, the later (a mount(2) on top) */
		if (m->vlen >= best->vlen && strncmp(vpath, m->vpath, m->vlen) == 0 &&
		    (vpath[m->vlen] == '/' || vpath[m->vlen] == '\0'))
			best = m;
	}
	return best;
}

/* The part of `vpath` below mount `m`: "." for the mount root. */
static const char *rel_of(const struct vfs_mount *m, const char *vpath)
{
	const char *r = vpath + (m->vlen == 1 ? 1 : m->vlen);
	while (*r == '/')
		r++;
	return *r ? r : ".";
}

/* Secrets of the host's /etc that the default view never shows. */
/* The default /etc is an allowlist (docs/filesystem.md "/etc"): the
 * host's /etc holds its accounts (passwd-, group-, shadow), its identity
 * (machine-id, mailname, fstab), its secrets (ssh host keys, sudoers,
 * credentials in environment or apt's auth.conf) and its services'
 * configuration, and a program needs little of it.  These top-level names
 * are shown (fnmatch patterns), from traces of what the programs moat's
 * users run open (python, pandas, matplotlib, pip, gcc, git, node, sqlite,
 * perl, bash, coreutils, openssl, curl, apt); every other name of the
 * host's is absent, as if the host had none. */
/* clang-format off */
static const char *const etc_allowed[] = {
	/* the loader, the C library, locales, time */
	"ld.so.cache", "ld.so.conf", "ld.so.conf.d", "locale.alias", "locale.gen", "localtime",
	"timezone", "xattr.conf",
	/* names and the network, synthetic where they name the host */
	"passwd", "group", "hostname", "hosts", "resolv.conf", "nsswitch.conf", "machine-id",
	"host.conf", "gai.conf", "services", "protocols", "networks", "rpc", "ethertypes",
	"bindresvport.blacklist", "mtab",
	/* what the system is */
	"os-release", "debian_version", "lsb-release",
	/* certificates: /etc/ssl without private/ (below) */
	"ssl", "ca-certificates", "ca-certificates.conf",
	/* programs' own configuration, and where /usr's symlinks point */
	"alternatives", "python3", "python3.*", "pip.conf", "java-*", "maven", "perl", "fonts",
	"matplotlibrc", "mime.types", "mailcap", "magic", "magic.mime", "vim", "nanorc", "groff",
	"manpath.config", "terminfo", "ImageMagick-*", "gdb", "R", "texmf", "ghostscript", "xdg",
	"papersize", "emacs",
	/* shells */
	"profile", "bash.bashrc", "bash_completion", "bash_completion.d", "inputrc", "shells",
	"skel", "login.defs", "adduser.conf", "dpkg",
	/* PAM's configuration (su, runuser inside) and its modules' limits
	 * and environment defaults; not opasswd (the secrets below); the
	 * accounts' shadow is generated, locked (fs-emulation/etc.c) */
	"pam.d", "pam.conf", "security", "shadow",
	/* Not here, for what they may hold: ssh (the host's sshd
	 * configuration), apt (repository and proxy credentials beside
	 * auth.conf), profile.d (a proxy's password exported), environment.
	 * --etc NAME shows one where a program needs it. */
	NULL,
};
/* clang-format on */

/* The length of the part of `vpath` that the view hides (/etc/NAME for a
 * NAME the allowlist lacks, /etc/ssl/private...), 0 when none is. */
/* The secrets: hidden by name, whether the host has them or not, so that
 * no answer (ENOENT here, EACCES or EEXIST for a name the host lacks)
 * tells which the host has. */
static size_t secret_prefix(const char *vpath)
{
	/* clang-format off */
	static const char *const secret[] = {
		"/etc/shadow-", "/etc/gshadow", "/etc/gshadow-", "/etc/passwd-", "/etc/group-",
		"/etc/sudoers", "/etc/sudoers.d", "/etc/security/opasswd", "/etc/ssl/private",
		"/etc/apt/auth.conf", "/etc/apt/auth.conf.d", NULL,
	};
	/* clang-format on */
	for (const char *const *h = secret; *h; h++) {
		size_t n = strlen(*h);
		if (strncmp(vpath, *h, n) == 0 && (vpath[n] == '\0' || vpath[n] == '/'))
			return n;
	}
	/* ssh host keys, private and public: the host's identity. */
	if (strncmp(vpath, "/etc/ssh/ssh_host_", 18) == 0)
		return 18 + strcspn(vpath + 18, "/");
	return 0;
}

/* The length of /etc/NAME when NAME is a top-level name the allowlist
 * (and --etc) does not show; 0 otherwise. */
static size_t unlisted_prefix(const struct vfs *v, const char *vpath)
{
	if (strncmp(vpath, "/etc/", 5) != 0 || !vpath[5])
		return 0;
	const char *name = vpath + 5;
	size_t nl = strcspn(name, "/");
	char top[NAME_MAX + 1];
	if (nl > NAME_MAX)
		return 5 + nl;
	memcpy(top, name, nl);
	top[nl] = '\0';
	for (const char *const *a = etc_allowed; *a; a++)
		if (fnmatch(*a, top, FNM_PERIOD) == 0)
			return 0;
	for (int i = 0; i < v->netc_allow; i++) /* --etc NAME */
		if (fnmatch(v->etc_allow[i], top, FNM_PERIOD) == 0)
			return 0;
	return 5 + nl;
}

static size_t hidden_prefix(const struct vfs *v, const char *vpath)
{
	size_t n = secret_prefix(vpath);
	return n ? n : unlisted_prefix(v, vpath);
}

/* Does a mount of the user's stand at `pre` or below it, or hold it? */
static bool user_mount_at(const struct vfs *v, const char *pre, size_t n)
{
	for (int i = 0; i < v->nmnt; i++) {
		const char *mv = v->mnt[i].vpath;
		size_t ml = strlen(mv);
		if (strncmp(mv, pre, n) == 0 && (mv[n] == '\0' || mv[n] == '/'))
			return true;
		if (ml > 5 && strncmp(mv, "/etc/", 5) == 0 && ml <= n &&
		    strncmp(pre, mv, ml) == 0 && (pre[ml] == '\0' || pre[ml] == '/'))
			return true;
	}
	return false;
}

bool vfs_is_hidden(const struct vfs *v, const char *vpath)
{
	size_t n = hidden_prefix(v, vpath);
	return n && !user_mount_at(v, vpath, n);
}

/* Hidden here, in a walk: hidden, unless what stands at the hidden name
 * is the sandbox's own file in /etc's upper layer (copy-up never brings a
 * hidden name there, so a name found in the upper layer was made by the
 * sandbox: sed -i's temporary file, a package's new configuration). */
static bool hidden_here(struct vfs *v, const char *vpath)
{
	size_t n = hidden_prefix(v, vpath);
	if (!n || user_mount_at(v, vpath, n))
		return false;
	struct vfs_mount *m = vfs_mount_of(v, "/etc");
	if (m->kind != MNT_OVERLAY || strcmp(m->vpath, "/etc") != 0 || m->root_fd < 0)
		return true;
	bool upper = m->upper_fd >= 0 && ov_root_upper(m);
	char rel[PATH_MAX];
	snprintf(rel, sizeof rel, "%.*s", (int)(n - 5), vpath + 5);
	struct stat st;
	/* A name the host has no file of (and no secret's) is nobody's: the
	 * sandbox may make it (sed -i's temporary file, a package's new
	 * file).  That the answers then differ from a host name's tells
	 * which top-level names the host's /etc has (which software it
	 * keeps configuration for), never whether a secret is there. */
	if (!secret_prefix(vpath) && fstatat(m->root_fd, rel, &st, AT_SYMLINK_NOFOLLOW) < 0 &&
	    errno == ENOENT)
		return false;
	return !upper || fstatat(m->upper_fd, rel, &st, AT_SYMLINK_NOFOLLOW) < 0;
}

static void dcache_unpin(int pin);

/* Done with directory fd `fd`: closed when owned, else its pin on the
 * cache released. */
static void dir_drop(int fd, int pin)
{
	if (pin)
		dcache_unpin(pin);
	else if (fd >= 0)
		close(fd);
}

void vfs_path_release(struct vfs_path *p)
{
	dir_drop(p->parent, p->parent_pin);
	p->parent = -1;
	p->parent_pin = 0;
	if (p->kind == VN_HELD && p->magic_fd >= 0)
		call_putfd(p->magic_fd); /* may be a copy of the sandbox's */
	if (p->kind == VN_HELD)
		p->magic_fd = -1;
}

int vfs_path_take_parent(struct vfs_path *p)
{
	int fd = p->parent;
	if (fd >= 0 && p->parent_pin) {
		fd = fcntl(fd, F_DUPFD_CLOEXEC, 0);
		if (fd < 0)
			return -errno;
		dcache_unpin(p->parent_pin);
	}
	p->parent = -1;
	p->parent_pin = 0;
	return fd;
}

/* The dentry cache: directory fds by (mount, path below it), so a lookup
 * in a directory seen before costs one fstatat instead of an openat2 of
 * the whole parent path.  Only for mounts whose tree changes through the
 * supervisor alone (tmpfs, where rmdir and rename invalidate exactly) or
 * not at all (read-only binds of host system directories).
 *
 * A walk borrows the cached fd itself (no copy: two syscalls a call
 * saved) and pins its entry until the path is released.  A pinned entry
 * is never evicted, and one invalidated while pinned (rename of a
 * directory during the call that walked it) is only marked stale: out of
 * lookups at once, closed when its last pin goes. */
#define DCACHE_SLOTS 1024

struct dentry {
	const struct vfs_mount *mnt;
	char *rel;
	int fd;
	bool upper;   /* an overlay's upper-layer directory */
	bool stale;   /* invalidated while pinned: found by no lookup */
	int pins;     /* walks of the current call holding fd */
	uint64_t who; /* whose walk opened it (creds_who): only theirs use it */
};

static struct dentry dcache[DCACHE_SLOTS];
/* Which slots hold an entry: a sweep visits those alone, and never
 * touches the table's other pages (a page fault each, at a run's end). */
static uint64_t dcache_used[DCACHE_SLOTS / 64];

/* Slot after `i` (start with -1) that holds an entry, or -1. */
static int dcache_next(int i)
{
	for (unsigned w = (unsigned)(i + 1) / 64; w < DCACHE_SLOTS / 64; w++) {
		uint64_t bits = dcache_used[w];
		if (w == (unsigned)(i + 1) / 64)
			bits &= ~0ULL << ((unsigned)(i + 1) % 64);
		if (bits)
			return (int)(w * 64 + (unsigned)__builtin_ctzll(bits));
	}
	return -1;
}

static bool cacheable(const struct vfs_mount *m)
{
	return m->cached;
}

static struct dentry *dcache_slot(const struct vfs_mount *m, const char *rel)
{
	XXH64_hash_t h = XXH3_64bits_withSeed(rel, strlen(rel), (uint64_t)(uintptr_t)m);
	return &dcache[h % DCACHE_SLOTS];
}

static void dentry_free(struct dentry *d)
{
	size_t i = (size_t)(d - dcache);
	close(d->fd);
	free(d->rel);
	*d = (struct dentry){ 0 };
	dcache_used[i / 64] &= ~(1ULL << (i % 64));
}

/* The cached fd of (m, rel), pinned (*pin: its pin), or -1. */
static int dcache_get(const struct vfs_mount *m, const char *rel, bool *upper, int *pin)
{
	struct dentry *d = dcache_slot(m, rel);
	/* Another identity's fd would skip the search permission of the
	 * directories above it, which its walk checked and this one has not
	 * (the root inside caches /tmp/a/b; uid 1000 may not pass /tmp/a). */
	if (!d->rel || d->stale || d->mnt != m || d->who != creds_who() || strcmp(d->rel, rel) != 0)
		return -1;
	*upper = d->upper;
	d->pins++;
	*pin = 1 + (int)(d - dcache);
	return d->fd;
}

/* Hand `fd` to the cache, pinned (*pin).  False when its slot is pinned by
 * another walk or memory is short: the fd stays the caller's. */
static bool dcache_put(const struct vfs_mount *m, const char *rel, int fd, bool upper, int *pin)
{
	struct dentry *d = dcache_slot(m, rel);
	if (d->pins)
		return false;
	char *copy = strdup(rel);
	if (!copy)
		return false;
	if (d->rel)
		dentry_free(d);
	*d = (struct dentry){ m, copy, fd, upper, false, 1, creds_who() };
	*pin = 1 + (int)(d - dcache);
	dcache_used[(d - dcache) / 64] |= 1ULL << ((d - dcache) % 64);
	return true;
}

static void dcache_unpin(int pin)
{
	struct dentry *d = &dcache[pin - 1];
	if (--d->pins == 0 && d->stale)
		dentry_free(d);
}

void vfs_invalidate(struct vfs *v, const struct vfs_mount *m)
{
	for (int i = dcache_next(-1); i >= 0; i = dcache_next(i)) {
		struct dentry *d = &dcache[i];
		/* A bind the sandbox made shows a host tree another mount
		 * shows too: a move through either is a move in both. */
		if (d->mnt != m && !(v && v->aliased))
			continue;
		if (d->pins)
			d->stale = true;
		else
			dentry_free(d);
	}
}

/* The parent directory `dir` below mount `m`, as an fd the caller owns:
 * a duplicate of the cached one, or opened (and a copy cached when the
 * mount allows).  The caller's fd never dies with a cache eviction: two
 * walks of one call (rename) may evict each other's entries. */
static int open_parent(struct vfs_mount *m, const char *dir, bool *upper)
{
	*upper = false;
	if (m->kind == MNT_OVERLAY)
		return ov_open_dir(m, dir, upper);
	int fd = vfs_open_beneath(m->root_fd, dir, O_PATH | O_DIRECTORY);
	return fd == -EACCES ? vfs_dac_open_beneath(m, m->root_fd, dir) : fd;
}

/* Directory `dir` of `m`: the cache's fd, pinned (*pin != 0), or one of
 * the caller's own (*pin == 0); dir_drop lets go of either. */
static int open_dir(struct vfs_mount *m, const char *dir, bool *upper, int *pin)
{
	*pin = 0;
	int fd = cacheable(m) ? dcache_get(m, dir, upper, pin) : -1;
	if (fd >= 0)
		return fd;
	fd = open_parent(m, dir, upper);
	if (fd >= 0 && cacheable(m))
		dcache_put(m, dir, fd, *upper, pin);
	return fd;
}

void vfs_dcache_clear(void)
{
	for (int i = dcache_next(-1); i >= 0; i = dcache_next(i))
		dentry_free(&dcache[i]);
}

/* /dev entries that are placeholders for the host's device of that name. */
bool vfs_dev_name(const char *name)
{
	static const char *const devs[] = { "null",    "zero", "full", "random",
					    "urandom", "tty",  "ptmx", NULL };
	for (const char *const *d = devs; *d; d++)
		if (strcmp(name, *d) == 0)
			return true;
	return false;
}

/* Fill out->st for a host node at (*parent, name) and substitute device
 * nodes of the synthetic /dev.  In an overlay, a name of an upper
 * directory that stands for the lower entry moves *parent to the lower
 * directory `dir`. */
static int host_lstat(struct vfs_mount *m, int *parent, int *pin, bool *upper, const char *dir,
		      const char *name, struct stat *st)
{
	if (m->kind == MNT_OVERLAY) {
		int moved;
		int r = ov_lookup(m, *parent, &moved, upper, dir, name, st);
		if (moved >= 0) {
			dir_drop(*parent, *pin);
			*parent = moved;
			*pin = 0;
		}
		return r;
	}
	if (fstatat(*parent, name, st, AT_SYMLINK_NOFOLLOW) < 0) {
		int e = errno;
		if (e != EACCES || !vfs_dac_fd(m, false, *parent))
			return -e;
		creds_dac_begin(); /* the root inside searches its own layers */
		e = fstatat(*parent, name, st, AT_SYMLINK_NOFOLLOW) < 0 ? errno : 0;
		creds_dac_end();
		if (e)
			return -e;
	}
	/* /dev/pts/N: a placeholder for a pty of the sandbox's (dev.c) */
	bool pts = strcmp(dir, "pts") == 0;
	if (m->kind == MNT_DEV && S_ISREG(st->st_mode) && (pts || vfs_dev_name(name))) {
		char host[PATH_MAX];
		snprintf(host, sizeof host, "/dev/%s%s", pts ? "pts/" : "", name);
		if (stat(host, st) < 0)
			return -errno;
	}
	return 0;
}

/* A name missing at the top of the view is a look outside it when the
 * host has that name at its root (/home, /var, /root...): the view hides
 * it, and the attempt is audited.  Any other name is simply free — the
 * root is writable (its own layer), so /data can be made. */
static bool host_has_top(const char *rel)
{
	/* The host's top names, read once: a missing path there is common
	 * (a program probing /sys, /run...) and costs no syscall. */
	static char *names[256];
	static int nnames = -1;
	if (nnames < 0) {
		nnames = 0;
		DIR *d = opendir("/");
		struct dirent *de;
		while (d && (de = readdir(d)) && nnames < 256)
			if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
				names[nnames] = strdup(de->d_name), nnames += names[nnames] != NULL;
		if (d)
			closedir(d);
	}
	size_t n = strcspn(rel, "/");
	for (int i = 0; i < nnames; i++)
		if (strlen(names[i]) == n && strncmp(names[i], rel, n) == 0)
			return true;
	return false;
}

static void fill_root(struct vfs_path *out, struct vfs_mount *m)
{
	out->mnt = m;
	out->kind = m->kind == MNT_PROC ? VN_PROC : VN_HOST;
	snprintf(out->rel, sizeof out->rel, ".");
	out->name = out->rel;
	out->parent = -1;
	out->parent_pin = 0;
	out->upper = m->kind == MNT_OVERLAY && ov_root_upper(m);
	out->exists = fstat(vfs_root_fd(out), &out->st) == 0;
}

/* Split "a/b/c" into the directory part ("a/b", or "." ) and the name. */
static const char *split_rel(const char *rel, char *dir, size_t dirlen)
{
	const char *slash = strrchr(rel, '/');
	if (!slash) {
		snprintf(dir, dirlen, ".");
		return rel;
	}
	snprintf(dir, dirlen, "%.*s", (int)(slash - rel), rel);
	return slash + 1;
}

/* Does the last component get followed when it is a symlink? */
static bool follow_last(int flags, bool trailing_slash)
{
	if (flags & VW_LAST_NAME)
		return !trailing_slash && (flags & VW_FOLLOW);
	return (flags & VW_FOLLOW) || trailing_slash;
}

/* Fast path: a path without "." or ".." components that crosses no
 * symlink resolves with one openat2 of its parent.  Returns 1 when the slow
 * walk must take over. */
static int walk_fast(struct vfs *v, const char *full, int flags, struct vfs_path *out)
{
	struct vfs_mount *m = vfs_mount_of(v, full);
	if (m->kind == MNT_PROC || hidden_here(v, full))
		return 1;
	snprintf(out->vpath, sizeof out->vpath, "%s", full);
	const char *rel = rel_of(m, full);
	if (strcmp(rel, ".") == 0) {
		fill_root(out, m);
		return 0;
	}
	char dir[PATH_MAX];
	snprintf(out->rel, sizeof out->rel, "%s", rel);
	const char *name = split_rel(out->rel, dir, sizeof dir);
	bool upper;
	int pin;
	int pfd = open_dir(m, dir, &upper, &pin);
	if (pfd < 0) {
		if (pfd == -ELOOP)
			return 1;
		if (pfd == -ENOENT && m == &v->mnt[0])
			out->outside = host_has_top(dir);
		return pfd;
	}
	int r = host_lstat(m, &pfd, &pin, &upper, dir, name, &out->st);
	if (r == 0 && S_ISLNK(out->st.st_mode) && follow_last(flags, out->trailing_slash)) {
		dir_drop(pfd, pin);
		return 1;
	}
	if (r < 0 && r != -ENOENT) {
		dir_drop(pfd, pin);
		return r;
	}
	if (r == -ENOENT && m == &v->mnt[0] && strcmp(dir, ".") == 0)
		out->outside = host_has_top(name);
	out->mnt = m;
	out->kind = VN_HOST;
	out->parent = pfd;
	out->parent_pin = pin;
	out->upper = upper;
	out->name = name;
	out->exists = r == 0;
	return 0;
}

static bool has_dot_component(const char *p)
{
	for (const char *s = p; *s; s++) {
		if (*s != '.' || (s != p && s[-1] != '/'))
			continue;
		if (s[1] == '/' || s[1] == '\0')
			return true;
		if (s[1] == '.' && (s[2] == '/' || s[2] == '\0'))
			return true;
	}
	return false;
}

/* Collapse repeated slashes; drop a trailing one (remembered by caller). */
static void squeeze(char *p)
{
	char *w = p;
	for (char *r = p; *r; r++)
		if (!(*r == '/' && w > p && w[-1] == '/'))
			*w++ = *r;
	*w = '\0';
	size_t n = strlen(p);
	while (n > 1 && p[n - 1] == '/')
		p[--n] = '\0';
}

/* ---- the slow walk: a cursor over the path ----
 *
 * The cursor holds where the walk is (`cur`, a canonical virtual path)
 * and what is left to walk (`rest`, in `todo`).  Each step takes the
 * component in hand and says what comes next: the next component, the
 * end (the node is in `out`), or a symlink to splice in front of the rest.
 * `..` is a string operation on `cur`, and every host lookup is below a
 * mount's root fd with no symlink followed (open_parent, host_lstat), so
 * no step ever lets the host resolve a name of the sandbox's. */

enum walk_step {
	STEP_NEXT, /* go on with the next component */
	STEP_DONE, /* out holds the node the walk ends on */
	STEP_LINK, /* link holds the target of a symlink to follow */
};

struct walk {
	struct vfs *v;
	struct task *t; /* gives meaning to /proc/self */
	int flags;      /* VW_* */
	bool scoped;    /* VW_BENEATH or VW_IN_ROOT: base is a floor */
	struct vfs_path *out;
	char todo[2 * PATH_MAX + 2]; /* the path to walk */
	char *rest;                  /* what is left of it (into todo) */
	char cur[PATH_MAX];          /* resolved so far; "" is the root */
	size_t floor;                /* ".." never goes above cur[0..floor) */
	const char *root;            /* VW_TASK_ROOT: the chroot's vpath, or NULL */
	struct vfs_mount *start_mnt; /* VW_NO_XDEV: the mount the walk stays in */
	int hops;                    /* symlinks followed so far */
	char comp[NAME_MAX + 1];     /* the component in hand */
	bool last;                   /* ... and nothing follows it */
	char next[PATH_MAX];         /* cur + "/" + comp */
	char link[PATH_MAX];         /* STEP_LINK: the target, as read */
};

/* Clear `out` and load `path` (from `base` when relative) into the cursor:
 * todo gets the absolute path, squeezed, as the fast path wants it.
 * 0, or -errno for a path that cannot be walked at all. */
static int walk_init(struct walk *w, struct vfs *v, struct task *t, const char *base,
		     const char *path, int flags, struct vfs_path *out)
{
	memset(out, 0, offsetof(struct vfs_path, vpath));
	out->parent = -1;
	out->parent_pin = 0;
	out->exists = false;
	out->outside = false;
	out->upper = false;
	out->vpath[0] = out->rel[0] = '\0';
	if (path[0] == '\0')
		return -ENOENT;
	size_t plen = strlen(path);
	out->trailing_slash = plen > 0 && path[plen - 1] == '/';
	w->v = v;
	w->t = t;
	w->flags = flags;
	w->scoped = flags & (VW_BENEATH | VW_IN_ROOT);
	w->out = out;
	int n = path[0] == '/' ? snprintf(w->todo, sizeof w->todo, "%s", path)
			       : snprintf(w->todo, sizeof w->todo, "%s/%s", base, path);
	if (n < 0 || (size_t)n >= PATH_MAX)
		return -ENAMETOOLONG;
	squeeze(w->todo);
	return 0;
}

/* Where the slow walk starts: the virtual root for an absolute path; else
 * the base itself, which is canonical (no symlinks), so ".." from it is
 * its parent even when it was removed.  A scoped walk starts at the base
 * whatever the path, and never goes above it.
 * Pre: walk_init succeeded with the same base and path. */
static int walk_begin(struct walk *w, const char *base, const char *path)
{
	w->cur[0] = '\0';
	w->floor = 0;
	w->hops = 0;
	if (w->scoped || path[0] != '/') {
		if (path[0] == '/' && (w->flags & VW_BENEATH))
			return -EXDEV;
		snprintf(w->cur, sizeof w->cur, "%s", strcmp(base, "/") == 0 ? "" : base);
		w->floor = w->scoped ? strlen(w->cur) : 0;
		snprintf(w->todo, sizeof w->todo, "%s", path);
	}
	w->start_mnt = path[0] == '/' && !w->scoped ? &w->v->mnt[0] : vfs_mount_of(w->v, base);
	w->rest = w->todo;
	if (w->root && !w->scoped) {
		/* chroot: absolute paths start at the root, and ".." from a cwd
		 * beneath it stops there (a cwd outside it climbs freely). */
		size_t rl = strlen(w->root);
		if (path[0] == '/')
			snprintf(w->cur, sizeof w->cur, "%s", w->root);
		if (strncmp(w->cur, w->root, rl) == 0 && (w->cur[rl] == '/' || !w->cur[rl]))
			w->floor = rl;
		w->start_mnt = vfs_mount_of(w->v, w->cur[0] ? w->cur : "/");
	}
	return 0;
}

/* Take the next component off `rest` into `comp`, and say whether it is
 * the last.  Pre: rest points into todo.  1 with a component, 0 at the end
 * of the path, -ENAMETOOLONG for a component past NAME_MAX. */
static int walk_component(struct walk *w)
{
	char *p = w->rest;
	while (*p == '/')
		p++;
	if (*p == '\0')
		return 0;
	size_t clen = strcspn(p, "/");
	char *rest = p + clen;
	while (*rest == '/')
		rest++;
	if (clen > NAME_MAX)
		return -ENAMETOOLONG;
	memcpy(w->comp, p, clen);
	w->comp[clen] = '\0';
	w->last = *rest == '\0';
	w->rest = rest;
	return 1;
}

/* "." stays; ".." drops the last component of `cur`: it never leaves the
 * virtual root, nor the floor of a scoped walk (VW_BENEATH: -EXDEV), and
 * under VW_NO_XDEV it must not leave the mount the walk started in.  No
 * host lookup: a host ".." could climb out of a mount.
 * Pre: comp is "." or "..".  A final one ends the walk at `cur`
 * (walk_end_dir), as the next walk_component finds nothing left. */
static int walk_dot(struct walk *w)
{
	if (w->comp[1] != '.')
		return STEP_NEXT;
	if (strlen(w->cur) <= w->floor)
		return (w->flags & VW_BENEATH) ? -EXDEV : STEP_NEXT;
	char *s = strrchr(w->cur, '/');
	if (s)
		*s = '\0';
	if ((w->flags & VW_NO_XDEV) && vfs_mount_of(w->v, w->cur[0] ? w->cur : "/") != w->start_mnt)
		return -EXDEV;
	return STEP_NEXT;
}

/* Is the component in hand followed when it is a symlink?  Every one but
 * the last is; the last as the flags and a trailing slash say. */
static bool walk_follows(const struct walk *w)
{
	return !w->last || follow_last(w->flags, w->out->trailing_slash);
}

/* The directory `cur` below mount `m` ("." for its root).
 * Pre: m holds cur. */
static const char *walk_dir(const struct walk *w, const struct vfs_mount *m)
{
	return rel_of(m, w->cur[0] ? w->cur : "/");
}

/* Crossing onto mount `m` at its mount point `next`: its root directory,
 * from the table (what the skeleton has under it plays no part).
 * Pre: m->vpath is next. */
static int walk_mount_root(struct walk *w, struct vfs_mount *m)
{
	snprintf(w->cur, sizeof w->cur, "%s", w->next);
	if (!w->last)
		return STEP_NEXT;
	snprintf(w->out->vpath, sizeof w->out->vpath, "%s", w->cur);
	fill_root(w->out, m);
	return STEP_DONE;
}

/* out names `vpath` of the synthetic /proc (mount m); the caller says
 * whether it exists and what it is. */
static void procfs_node(struct vfs_path *out, struct vfs_mount *m, const char *vpath)
{
	if (vpath != out->vpath)
		snprintf(out->vpath, sizeof out->vpath, "%s", vpath);
	out->mnt = m;
	out->kind = VN_PROC;
	snprintf(out->rel, sizeof out->rel, "%s", rel_of(m, out->vpath));
	out->name = out->rel;
}

/* /proc/<pid> at the top of /proc, which proc.c does not know: a pid
 * outside the sandbox, a look outside the view (audited). */
static bool procfs_foreign_pid(const char *dir, const char *comp)
{
	return strspn(comp, "0123456789") == strlen(comp) && strcmp(dir, ".") == 0;
}

/* A name of the synthetic /proc, which proc.c decides.  A followed
 * /proc/PID/fd/N at the end is the task's own fd (VN_MAGIC_FD), reopened
 * by vfs_open, never its link text walked; one in the middle of a path
 * walks on only from an absolute target.  Pre: m is /proc and holds
 * `next`, and next is not m's root. */
static int walk_proc(struct walk *w, struct vfs_mount *m)
{
	struct vfs_path *out = w->out;
	const char *dir = walk_dir(w, m);
	struct stat st;
	int mfd = -1;
	pid_t mpid = 0;
	int r = procfs_walk_step(w->v, w->t, dir, w->comp, &st, w->link, sizeof w->link, &mfd,
				 &mpid);
	if (r == -ENOENT && procfs_foreign_pid(dir, w->comp))
		out->outside = true;
	if (r == -ENOENT && w->last) {
		procfs_node(out, m, w->next);
		out->exists = false;
		return STEP_DONE;
	}
	if (r < 0)
		return r;
	bool follow = walk_follows(w);
	/* Below a /proc/PID directory every link is a magic one; at the top
	 * (self, thread-self, mounts, net) they are plain text. */
	if ((r == 1 || S_ISLNK(st.st_mode)) && follow && (w->flags & VW_NO_MAGICLINKS) &&
	    strcmp(dir, ".") != 0)
		return -ELOOP;
	if (r == 1 && follow) {
		if (w->last && !out->trailing_slash) {
			snprintf(out->vpath, sizeof out->vpath, "%s", w->next);
			out->mnt = m;
			out->kind = VN_MAGIC_FD;
			out->magic_fd = mfd;
			out->magic_pid = mpid;
			out->st = st;
			out->exists = true;
			return STEP_DONE;
		}
		if (w->link[0] != '/')
			return -ENOTDIR;
	}
	if (S_ISLNK(st.st_mode) && follow)
		return STEP_LINK;
	if (!w->last && !S_ISDIR(st.st_mode))
		return -ENOTDIR;
	snprintf(w->cur, sizeof w->cur, "%s", w->next);
	if (!w->last)
		return STEP_NEXT;
	procfs_node(out, m, w->cur);
	out->st = st;
	out->exists = true;
	return STEP_DONE;
}

/* The final component, a host node of mount `m`: `out` takes the parent
 * fd `pfd` (owned from here), and the node's stat when lookup `r` found
 * it (0; -ENOENT: missing).  Pre: w->last, next is below m's root. */
static int walk_last_host(struct walk *w, struct vfs_mount *m, int pfd, bool upper, int r,
			  const struct stat *st)
{
	struct vfs_path *out = w->out;
	snprintf(out->vpath, sizeof out->vpath, "%s", w->next);
	out->mnt = m;
	out->kind = VN_HOST;
	snprintf(out->rel, sizeof out->rel, "%s", rel_of(m, w->next));
	out->name = strrchr(out->rel, '/') ? strrchr(out->rel, '/') + 1 : out->rel;
	out->parent = pfd;
	out->upper = upper;
	out->exists = r == 0;
	if (r == 0)
		out->st = *st;
	return STEP_DONE;
}

/* A name in a host directory of mount `m` (the root's layer, a bind, a
 * tmpfs, an overlay): lstat'd below its parent's fd, which is opened
 * beneath the mount's root with no symlink followed, and a symlink to
 * follow is read through that same fd.  A name missing at the top of the
 * view that the host has at its root is a look outside.
 * Pre: m holds `next`, so it holds its parent `cur` too; next is not m's
 * root. */
static int walk_host(struct walk *w, struct vfs_mount *m)
{
	struct vfs_path *out = w->out;
	char dir[PATH_MAX];
	snprintf(dir, sizeof dir, "%s", walk_dir(w, m));
	bool upper;
	int pfd = open_parent(m, dir, &upper), pin = 0;
	if (pfd < 0)
		return pfd;
	struct stat st;
	int r = host_lstat(m, &pfd, &pin, &upper, dir, w->comp, &st);
	if (r == -ENOENT && m == &w->v->mnt[0] && w->cur[0] == '\0')
		out->outside = host_has_top(w->comp);
	if (r < 0 && !(r == -ENOENT && w->last)) {
		close(pfd);
		snprintf(out->vpath, sizeof out->vpath, "%s", w->next);
		return r;
	}
	if (r == 0 && S_ISLNK(st.st_mode) && walk_follows(w)) {
		ssize_t ln = readlinkat(pfd, w->comp, w->link, sizeof w->link - 1);
		close(pfd);
		if (ln < 0)
			return -errno;
		w->link[ln] = '\0';
		return STEP_LINK;
	}
	if (w->last)
		return walk_last_host(w, m, pfd, upper, r, &st);
	close(pfd);
	if (!S_ISDIR(st.st_mode))
		return -ENOTDIR;
	snprintf(w->cur, sizeof w->cur, "%s", w->next);
	return STEP_NEXT;
}

/* A name below `cur` (not "." or ".."): a hidden name is a look outside,
 * then the mount table says what holds it — a mount point, /proc, or a
 * host directory.  Pre: out holds no fd of an earlier step's (released
 * here). */
static int walk_name(struct walk *w)
{
	if ((size_t)snprintf(w->next, sizeof w->next, "%s/%s", w->cur, w->comp) >= sizeof w->next)
		return -ENAMETOOLONG;
	vfs_path_release(w->out);
	if (hidden_here(w->v, w->next)) {
		w->out->outside = true;
		snprintf(w->out->vpath, sizeof w->out->vpath, "%s", w->next);
		return -ENOENT;
	}
	struct vfs_mount *m = vfs_mount_of(w->v, w->next);
	if ((w->flags & VW_NO_XDEV) && m != w->start_mnt)
		return -EXDEV;
	if (m->vlen == strlen(w->next) && m->vlen > 1)
		return walk_mount_root(w, m);
	if (m->kind == MNT_PROC)
		return walk_proc(w, m);
	return walk_host(w, m);
}

/* Follow the symlink whose target is `link`: splice it in front of what
 * is left.  An absolute target starts again from the virtual root, or
 * from the base of a VW_IN_ROOT walk (VW_BENEATH refuses it); a relative
 * one from `cur`, the directory that holds the link.  -ELOOP past
 * MAX_HOPS links, or at the first one under VW_NO_SYMLINKS.
 * Pre: link holds a target read through the view (a host link's text, or
 * /proc's). */
static int walk_symlink(struct walk *w)
{
	if (++w->hops > MAX_HOPS || (w->flags & VW_NO_SYMLINKS))
		return -ELOOP;
	if (w->scoped && w->link[0] == '/' && (w->flags & VW_BENEATH))
		return -EXDEV;
	if (w->link[0] == '\0')
		return -ENOENT;
	char spliced[2 * PATH_MAX + 2];
	const char *rest = w->rest;
	int n = snprintf(spliced, sizeof spliced, "%s%s%s", w->link, *rest ? "/" : "", rest);
	if (n < 0 || (size_t)n >= PATH_MAX)
		return -ENAMETOOLONG;
	if (!*rest && w->link[strlen(w->link) - 1] == '/')
		w->out->trailing_slash = true; /* "f/" as a target wants a directory */
	memcpy(w->todo, spliced, (size_t)n + 1);
	w->rest = w->todo;
	if (w->link[0] == '/' && w->root && !w->scoped) {
		snprintf(w->cur, sizeof w->cur, "%s", w->root);
		w->floor = strlen(w->root);
	} else if (w->link[0] == '/') {
		w->cur[w->scoped ? w->floor : 0] = '\0';
	}
	return STEP_NEXT;
}

/* The walk ended on "." or ".." (or the path was "/"): the node is the
 * directory `cur` itself — a mount root from the table, a /proc
 * directory, or a host directory looked up from its parent.
 * Pre: the whole path was walked; out holds no fd. */
static int walk_end_dir(struct walk *w)
{
	struct vfs_path *out = w->out;
	snprintf(out->vpath, sizeof out->vpath, "%s", w->cur[0] ? w->cur : "/");
	struct vfs_mount *m = vfs_mount_of(w->v, out->vpath);
	const char *rel = rel_of(m, out->vpath);
	if (strcmp(rel, ".") == 0) {
		fill_root(out, m);
		return STEP_DONE;
	}
	if (m->kind == MNT_PROC) {
		procfs_node(out, m, out->vpath);
		out->exists = true;
		out->st.st_mode = S_IFDIR | 0555;
		return STEP_DONE;
	}
	char dir[PATH_MAX];
	snprintf(out->rel, sizeof out->rel, "%s", rel);
	const char *name = split_rel(out->rel, dir, sizeof dir);
	bool upper;
	int pfd = open_parent(m, dir, &upper);
	if (pfd < 0)
		return pfd;
	out->mnt = m;
	out->kind = VN_HOST;
	int pin = 0;
	out->exists = host_lstat(m, &pfd, &pin, &upper, dir, name, &out->st) == 0;
	out->parent = pfd;
	out->upper = upper;
	out->name = name;
	return STEP_DONE;
}

/* Every walk that found its node ends here: a trailing slash wants a
 * directory, unless the caller rules on it itself (VW_LAST_NAME). */
static int walk_finish(struct walk *w)
{
	struct vfs_path *out = w->out;
	if (out->trailing_slash && out->exists && !S_ISDIR(out->st.st_mode) &&
	    !(w->flags & VW_LAST_NAME)) {
		vfs_path_release(out);
		return -ENOTDIR;
	}
	return 0;
}

int vfs_walk(struct vfs *v, struct task *t, const char *base, const char *path, int flags,
	     struct vfs_path *out)
{
	struct walk w;
	int r = walk_init(&w, v, t, base, path, flags, out);
	if (r < 0)
		return r;
	w.root = (flags & VW_TASK_ROOT) && t && t->proc && t->proc->fs->root[0] ? t->proc->fs->root
										: NULL;
	if (!(flags & (VW_NO_SYMLINKS | VW_BENEATH | VW_IN_ROOT | VW_NO_XDEV)) && !w.root &&
	    !has_dot_component(w.todo)) {
		r = walk_fast(v, w.todo, flags, out);
		if (r <= 0)
			return r < 0 ? r : walk_finish(&w);
		out->outside = false;
	}
	if ((r = walk_begin(&w, base, path)) < 0)
		return r;
	while ((r = walk_component(&w)) > 0) {
		bool dot = strcmp(w.comp, ".") == 0 || strcmp(w.comp, "..") == 0;
		r = dot ? walk_dot(&w) : walk_name(&w);
		if (r == STEP_LINK)
			r = walk_symlink(&w);
		if (r < 0)
			return r;
		if (r == STEP_DONE)
			return walk_finish(&w);
	}
	if (r == 0)
		r = walk_end_dir(&w);
	return r < 0 ? r : walk_finish(&w);
}

int vfs_host_path(const struct vfs_path *p, char *buf, size_t len)
{
	const char *host = p->mnt->kind == MNT_OVERLAY && p->upper ? p->mnt->upper : p->mnt->host;
	int n = strcmp(p->rel, ".") == 0 ? snprintf(buf, len, "%s", host)
					 : snprintf(buf, len, "%s/%s", host, p->rel);
	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}
