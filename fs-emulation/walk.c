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
		if (m->vlen > best->vlen && strncmp(vpath, m->vpath, m->vlen) == 0 &&
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
	/* Not here, for what they may hold: ssh (the host's sshd
	 * configuration), apt (repository and proxy credentials beside
	 * auth.conf), profile.d (a proxy's password exported), environment.
	 * --etc NAME shows one where a program needs it. */
	NULL,
};

/* The length of the part of `vpath` that the view hides (/etc/NAME for a
 * NAME the allowlist lacks, /etc/ssl/private...), 0 when none is. */
/* The secrets: hidden by name, whether the host has them or not, so that
 * no answer (ENOENT here, EACCES or EEXIST for a name the host lacks)
 * tells which the host has. */
static size_t secret_prefix(const char *vpath)
{
	static const char *const secret[] = {
		"/etc/shadow", "/etc/shadow-", "/etc/gshadow", "/etc/gshadow-", "/etc/passwd-",
		"/etc/group-", "/etc/sudoers", "/etc/sudoers.d", "/etc/security", "/etc/ssl/private",
		"/etc/apt/auth.conf", "/etc/apt/auth.conf.d", NULL,
	};
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
		if (ml > 5 && strncmp(mv, "/etc/", 5) == 0 && ml <= n && strncmp(pre, mv, ml) == 0 &&
		    (pre[ml] == '\0' || pre[ml] == '/'))
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

void vfs_path_release(struct vfs_path *p)
{
	if (p->parent >= 0)
		close(p->parent);
	p->parent = -1;
	if (p->kind == VN_HELD && p->magic_fd >= 0)
		call_putfd(p->magic_fd); /* may be a copy of the sandbox's */
	if (p->kind == VN_HELD)
		p->magic_fd = -1;
}

/* The dentry cache: directory fds by (mount, path below it), so a lookup
 * in a directory seen before costs one fstatat instead of an openat2 of
 * the whole parent path.  Only for mounts whose tree changes through the
 * supervisor alone (tmpfs, where rmdir and rename invalidate exactly) or
 * not at all (read-only binds of host system directories). */
#define DCACHE_SLOTS 1024

struct dentry {
	const struct vfs_mount *mnt;
	char *rel;
	int fd;
	bool upper;  /* an overlay's upper-layer directory */
};

static struct dentry dcache[DCACHE_SLOTS];

static bool cacheable(const struct vfs_mount *m)
{
	return m->cached;
}

static struct dentry *dcache_slot(const struct vfs_mount *m, const char *rel)
{
	XXH64_hash_t h = XXH3_64bits_withSeed(rel, strlen(rel), (uint64_t)(uintptr_t)m);
	return &dcache[h % DCACHE_SLOTS];
}

static int dcache_get(const struct vfs_mount *m, const char *rel, bool *upper)
{
	struct dentry *d = dcache_slot(m, rel);
	if (!d->rel || d->mnt != m || strcmp(d->rel, rel) != 0)
		return -1;
	*upper = d->upper;
	return d->fd;
}

/* Hand `fd` to the cache.  True when the cache now owns it. */
static bool dcache_put(const struct vfs_mount *m, const char *rel, int fd, bool upper)
{
	char *copy = strdup(rel);
	if (!copy)
		return false;
	struct dentry *d = dcache_slot(m, rel);
	if (d->rel) {
		close(d->fd);
		free(d->rel);
	}
	*d = (struct dentry){ m, copy, fd, upper };
	return true;
}

void vfs_invalidate(struct vfs *v, const struct vfs_mount *m)
{
	(void)v;
	for (unsigned i = 0; i < DCACHE_SLOTS; i++)
		if (dcache[i].rel && dcache[i].mnt == m) {
			close(dcache[i].fd);
			free(dcache[i].rel);
			dcache[i].rel = NULL;
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
	return vfs_open_beneath(m->root_fd, dir, O_PATH | O_DIRECTORY);
}

static int open_dir(struct vfs_mount *m, const char *dir, bool *upper)
{
	int fd = cacheable(m) ? dcache_get(m, dir, upper) : -1;
	if (fd >= 0) {
		int d = fcntl(fd, F_DUPFD_CLOEXEC, 0);
		return d < 0 ? -errno : d;
	}
	fd = open_parent(m, dir, upper);
	if (fd >= 0 && cacheable(m)) {
		int copy = fcntl(fd, F_DUPFD_CLOEXEC, 0);
		if (copy >= 0 && !dcache_put(m, dir, copy, *upper))
			close(copy);
	}
	return fd;
}

void vfs_dcache_clear(void)
{
	for (unsigned i = 0; i < DCACHE_SLOTS; i++)
		if (dcache[i].rel) {
			close(dcache[i].fd);
			free(dcache[i].rel);
			dcache[i].rel = NULL;
		}
}

/* /dev entries that are placeholders for the host's device of that name. */
bool vfs_dev_name(const char *name)
{
	static const char *const devs[] = { "null", "zero", "full", "random", "urandom", "tty",
					    "ptmx", NULL };
	for (const char *const *d = devs; *d; d++)
		if (strcmp(name, *d) == 0)
			return true;
	return false;
}

/* Fill out->st for a host node at (*parent, name) and substitute device
 * nodes of the synthetic /dev.  In an overlay, a name of an upper
 * directory that stands for the lower entry moves *parent to the lower
 * directory `dir`. */
static int host_lstat(struct vfs_mount *m, int *parent, bool *upper, const char *dir,
		      const char *name, struct stat *st)
{
	if (m->kind == MNT_OVERLAY)
		return ov_lookup(NULL, m, parent, upper, dir, name, st);
	if (fstatat(*parent, name, st, AT_SYMLINK_NOFOLLOW) < 0)
		return -errno;
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
	int pfd = open_dir(m, dir, &upper);
	if (pfd < 0) {
		if (pfd == -ELOOP)
			return 1;
		if (pfd == -ENOENT && m == &v->mnt[0])
			out->outside = host_has_top(dir);
		return pfd;
	}
	int r = host_lstat(m, &pfd, &upper, dir, name, &out->st);
	if (r == 0 && S_ISLNK(out->st.st_mode) && follow_last(flags, out->trailing_slash)) {
		close(pfd);
		return 1;
	}
	if (r < 0 && r != -ENOENT) {
		close(pfd);
		return r;
	}
	if (r == -ENOENT && m == &v->mnt[0] && strcmp(dir, ".") == 0)
		out->outside = host_has_top(name);
	out->mnt = m;
	out->kind = VN_HOST;
	out->parent = pfd;
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

int vfs_walk(struct vfs *v, struct task *t, const char *base, const char *path,
	     int flags, struct vfs_path *out)
{
	memset(out, 0, offsetof(struct vfs_path, vpath));
	out->parent = -1;
	out->exists = false;
	out->outside = false;
	out->upper = false;
	out->vpath[0] = out->rel[0] = '\0';
	if (path[0] == '\0')
		return -ENOENT;
	size_t plen = strlen(path);
	out->trailing_slash = plen > 0 && path[plen - 1] == '/';

	char todo[2 * PATH_MAX + 2];
	int n = path[0] == '/' ? snprintf(todo, sizeof todo, "%s", path)
			       : snprintf(todo, sizeof todo, "%s/%s", base, path);
	if (n < 0 || (size_t)n >= PATH_MAX)
		return -ENAMETOOLONG;
	squeeze(todo);

	int scoped = flags & (VW_BENEATH | VW_IN_ROOT);
	if (!(flags & (VW_NO_SYMLINKS | VW_BENEATH | VW_IN_ROOT | VW_NO_XDEV)) &&
	    !has_dot_component(todo)) {
		int r = walk_fast(v, todo, flags, out);
		if (r <= 0) {
			if (r == 0 && out->trailing_slash && out->exists && !S_ISDIR(out->st.st_mode) &&
			    !(flags & VW_LAST_NAME)) {
				vfs_path_release(out);
				return -ENOTDIR;
			}
			return r;
		}
		out->outside = false;
	}

	/* The slow walk: one component at a time, symlinks re-walked. */
	char cur[PATH_MAX] = "";  /* resolved so far; "" is the root */
	char next[PATH_MAX];
	char link[PATH_MAX];
	int hops = 0;
	size_t floor = 0;         /* ".." never goes above cur[0..floor) */
	if (scoped || path[0] != '/') {
		/* Start from the base itself: it is canonical (no symlinks),
		 * so ".." from it is its parent even when it was removed. */
		if (path[0] == '/' && (flags & VW_BENEATH))
			return -EXDEV;
		snprintf(cur, sizeof cur, "%s", strcmp(base, "/") == 0 ? "" : base);
		floor = scoped ? strlen(cur) : 0;
		snprintf(todo, sizeof todo, "%s", path);
	}
	struct vfs_mount *start_mnt = path[0] == '/' && !scoped ? &v->mnt[0] : vfs_mount_of(v, base);
	char *p = todo;
	for (;;) {
		while (*p == '/')
			p++;
		if (*p == '\0')
			break;
		char *end = strchr(p, '/');
		size_t clen = end ? (size_t)(end - p) : strlen(p);
		char *rest = p + clen;
		while (*rest == '/')
			rest++;
		bool last = *rest == '\0';
		if (clen > NAME_MAX)
			return -ENAMETOOLONG;
		char comp[NAME_MAX + 1];
		memcpy(comp, p, clen);
		comp[clen] = '\0';
		p = rest;

		if (strcmp(comp, ".") == 0 || strcmp(comp, "..") == 0) {
			if (comp[1] == '.') { /* ".." never leaves the virtual root */
				if (strlen(cur) <= floor) {
					if (flags & VW_BENEATH)
						return -EXDEV;
				} else {
					char *s = strrchr(cur, '/');
					if (s)
						*s = '\0';
					if ((flags & VW_NO_XDEV) &&
					    vfs_mount_of(v, cur[0] ? cur : "/") != start_mnt)
						return -EXDEV;
				}
			}
			if (last)
				break;
			continue;
		}
		if ((size_t)snprintf(next, sizeof next, "%s/%s", cur, comp) >= sizeof next)
			return -ENAMETOOLONG;
		vfs_path_release(out);
		if (hidden_here(v, next)) {
			out->outside = true;
			snprintf(out->vpath, sizeof out->vpath, "%s", next);
			return -ENOENT;
		}
		struct vfs_mount *m = vfs_mount_of(v, next);
		if ((flags & VW_NO_XDEV) && m != start_mnt)
			return -EXDEV;
		bool follow = !last || follow_last(flags, out->trailing_slash);
		struct stat st;
		bool is_link = false;

		if (m->vlen == strlen(next) && m->vlen > 1) {
			/* A mount point: its root directory. */
			snprintf(cur, sizeof cur, "%s", next);
			if (last) {
				snprintf(out->vpath, sizeof out->vpath, "%s", cur);
				fill_root(out, m);
				goto done;
			}
			continue;
		}
		if (m->kind == MNT_PROC) {
			const char *dir = rel_of(m, cur[0] ? cur : "/");
			int mfd = -1;
			pid_t mpid = 0;
			int r = proc_walk_step(v, t, dir, comp, &st, link, sizeof link, &mfd, &mpid);
			if (r == -ENOENT && last) {
				if (strspn(comp, "0123456789") == strlen(comp) && strcmp(dir, ".") == 0)
					out->outside = true;
				snprintf(out->vpath, sizeof out->vpath, "%s", next);
				out->mnt = m;
				out->kind = VN_PROC;
				snprintf(out->rel, sizeof out->rel, "%s", rel_of(m, next));
				out->name = out->rel;
				out->exists = false;
				goto done;
			}
			if (r < 0) {
				/* /proc/<a host pid>: a look outside the sandbox */
				if (r == -ENOENT && strspn(comp, "0123456789") == strlen(comp) &&
				    strcmp(dir, ".") == 0)
					out->outside = true;
				return r;
			}
			if (r == 1 && follow) {
				/* /proc/PID/fd/N: reopen the task's own fd. */
				if (last && !out->trailing_slash) {
					snprintf(out->vpath, sizeof out->vpath, "%s", next);
					out->mnt = m;
					out->kind = VN_MAGIC_FD;
					out->magic_fd = mfd;
					out->magic_pid = mpid;
					out->st = st;
					out->exists = true;
					goto done;
				}
				if (link[0] != '/')
					return -ENOTDIR;
			}
			is_link = S_ISLNK(st.st_mode);
			if (!is_link || !follow) {
				if (!last && !S_ISDIR(st.st_mode))
					return -ENOTDIR;
				snprintf(cur, sizeof cur, "%s", next);
				if (last) {
					snprintf(out->vpath, sizeof out->vpath, "%s", cur);
					out->mnt = m;
					out->kind = VN_PROC;
					snprintf(out->rel, sizeof out->rel, "%s", rel_of(m, cur));
					out->name = out->rel;
					out->st = st;
					out->exists = true;
					goto done;
				}
				continue;
			}
		} else {
			char dir[PATH_MAX];
			/* m covers next, so it covers its parent cur too */
			snprintf(dir, sizeof dir, "%s", rel_of(m, cur[0] ? cur : "/"));
			bool upper;
			int pfd = open_parent(m, dir, &upper);
			if (pfd < 0)
				return pfd;
			int r = host_lstat(m, &pfd, &upper, dir, comp, &st);
			if (r == -ENOENT && m == &v->mnt[0] && cur[0] == '\0')
				out->outside = host_has_top(comp);
			if (r < 0 && !(r == -ENOENT && last)) {
				close(pfd);
				snprintf(out->vpath, sizeof out->vpath, "%s", next);
				return r;
			}
			is_link = r == 0 && S_ISLNK(st.st_mode);
			if (is_link && follow) {
				ssize_t ln = readlinkat(pfd, comp, link, sizeof link - 1);
				close(pfd);
				if (ln < 0)
					return -errno;
				link[ln] = '\0';
			} else {
				if (r == 0 && !last && !S_ISDIR(st.st_mode)) {
					close(pfd);
					return -ENOTDIR;
				}
				if (!last) {
					close(pfd);
					snprintf(cur, sizeof cur, "%s", next);
					continue;
				}
				snprintf(out->vpath, sizeof out->vpath, "%s", next);
				out->mnt = m;
				out->kind = VN_HOST;
				snprintf(out->rel, sizeof out->rel, "%s", rel_of(m, next));
				out->name = strrchr(out->rel, '/') ? strrchr(out->rel, '/') + 1 : out->rel;
				out->parent = pfd;
				out->upper = upper;
				out->exists = r == 0;
				if (r == 0)
					out->st = st;
				goto done;
			}
		}

		/* A symlink to follow: splice its target in front of the rest. */
		if (++hops > MAX_HOPS || (flags & VW_NO_SYMLINKS))
			return -ELOOP;
		if (scoped && link[0] == '/' && (flags & VW_BENEATH))
			return -EXDEV;
		if (link[0] == '\0')
			return -ENOENT;
		char spliced[2 * PATH_MAX + 2];
		int sn = snprintf(spliced, sizeof spliced, "%s%s%s", link, *p ? "/" : "", p);
		if (sn < 0 || (size_t)sn >= PATH_MAX)
			return -ENAMETOOLONG;
		if (!*p && link[strlen(link) - 1] == '/')
			out->trailing_slash = true; /* "f/" as a target wants a directory */
		memcpy(todo, spliced, (size_t)sn + 2);
		p = todo;
		if (link[0] == '/')
			cur[scoped ? floor : 0] = '\0';
	}
	/* The walk ended on "." or ".." (or was "/"): the directory `cur`. */
	snprintf(out->vpath, sizeof out->vpath, "%s", cur[0] ? cur : "/");
	{
		struct vfs_mount *m = vfs_mount_of(v, out->vpath);
		const char *rel = rel_of(m, out->vpath);
		if (strcmp(rel, ".") == 0) {
			fill_root(out, m);
		} else if (m->kind == MNT_PROC) {
			out->mnt = m;
			out->kind = VN_PROC;
			snprintf(out->rel, sizeof out->rel, "%s", rel);
			out->name = out->rel;
			out->exists = true;
			out->st.st_mode = S_IFDIR | 0555;
		} else {
			char dir[PATH_MAX];
			snprintf(out->rel, sizeof out->rel, "%s", rel);
			const char *name = split_rel(out->rel, dir, sizeof dir);
			bool upper;
			int pfd = open_parent(m, dir, &upper);
			if (pfd < 0)
				return pfd;
			out->mnt = m;
			out->kind = VN_HOST;
			out->exists = host_lstat(m, &pfd, &upper, dir, name, &out->st) == 0;
			out->parent = pfd;
			out->upper = upper;
			out->name = name;
		}
	}
done:
	if (out->trailing_slash && out->exists && !S_ISDIR(out->st.st_mode) &&
	    !(flags & VW_LAST_NAME)) {
		vfs_path_release(out);
		return -ENOTDIR;
	}
	return 0;
}

int vfs_host_path(const struct vfs_path *p, char *buf, size_t len)
{
	const char *host = p->mnt->kind == MNT_OVERLAY && p->upper ? p->mnt->upper : p->mnt->host;
	int n = strcmp(p->rel, ".") == 0 ? snprintf(buf, len, "%s", host)
					  : snprintf(buf, len, "%s/%s", host, p->rel);
	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}
