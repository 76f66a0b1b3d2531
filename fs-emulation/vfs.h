/* The virtual filesystem: the mount table, the path walk, the registry of
 * granted fds, and the synthetic /proc and /dev.
 *
 * Every path the sandbox names is walked here, component by component in
 * the virtual namespace: `..` stops at the virtual root, symlinks are read
 * and re-walked virtually (ELOOP after 40), mount points are crossed by the
 * table.  Host lookups happen only below a mount's root fd with openat2
 * RESOLVE_BENEATH|RESOLVE_NO_SYMLINKS|RESOLVE_NO_MAGICLINKS, so a symlink
 * swapped in by a racing thread yields ELOOP, never a host path. */
#ifndef MOAT_VFS_H
#define MOAT_VFS_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stddef.h>
#include <sys/stat.h>
#include <sys/types.h>

struct task;

enum mnt_kind {
	MNT_ROOT,    /* the skeleton holding mount points; read-only */
	MNT_BIND,    /* a host directory */
	MNT_TMPFS,   /* a private scratch directory, removed at exit */
	MNT_DEV,     /* synthetic /dev: a skeleton with allowed device names */
	MNT_PROC,    /* synthetic /proc: generated, sandbox pids only */
	MNT_OVERLAY, /* a writable layer over a read-only host directory */
};

struct vfs_mount {
	/* Its paths, allocated (vfs_mount_str): the table is large and
	 * mostly unused, and inline arrays put each mount over four pages
	 * of moat's memory, each a page fault at the start of every run. */
	const char *vpath; /* "/usr"; "/" for the root */
	size_t vlen;
	enum mnt_kind kind;
	bool ro;
	bool cached;      /* its directories may sit in the dentry cache */
	bool quota;       /* a tmpfs of its own, unmounted at teardown */
	bool made;        /* by the sandbox's mount(2): its umount2 may remove it */
	bool owns_dir;    /* a tmpfs it made: its directory goes with the umount */
	bool ro_locked;   /* read-only for good: a bind of a read-only source */
	int root_fd;      /* O_PATH directory fd of the host directory */
	const char *host; /* its host path (exec rewrite, never shown) */
	dev_t dev;
	ino_t ino;
	/* MNT_OVERLAY: root_fd and host are the lower (host) layer; these
	 * the writable upper layer (see overlay.c). */
	int upper_fd;
	const char *upper; /* "" until it has one */
	bool upper_real;   /* the upper layer's root is a real directory
			    * (something was written): kept by overlay.c */
	/* Files that stand in for the lower layer's of the same name at the
	 * mount's top (the synthetic /etc/passwd...): a directory of them. */
	int shadow_fd;
	const char *shadow; /* "" until it has one */
};

#define VFS_MAX_MOUNTS 64
#define VFS_MAX_PHANTOMS 16

struct vfs {
	struct vfs_mount mnt[VFS_MAX_MOUNTS];
	int nmnt;
	char scratch[PATH_MAX]; /* host scratch directory: the writable mounts */
	char skel[PATH_MAX];    /* the skeletons (/, /dev, /proc listings): in
				 * memory (/dev/shm) when it can be, else
				 * inside scratch */
	uid_t uid;              /* sandbox credentials, for synthetic files */
	gid_t gid;
	/* The overlays' upper layers live below one base directory (in
	 * scratch, or the --persist directory) together with the phantoms:
	 * the inodes whose hard links stand for entries of a lower layer. */
	int ov_base;  /* -1 until made: a run's own at its first write */
	bool ov_lazy; /* the base and each layer are made at its first write */
	dev_t ov_dev; /* the filesystem of the upper layers */
	bool ov_used; /* some upper layer holds something: only
		       * then can a granted file be a copy */
	char ov_base_path[PATH_MAX];
	struct {
		dev_t dev;
		ino_t ino;
		mode_t type;
	} phantom[VFS_MAX_PHANTOMS];
	int nphantom;
	/* The credentials the loop switches between: moat's own (all
	 * capabilities, fsuid 0 when root) for copy-up, and back to the
	 * sandbox's.  NULL: setfsuid only. */
	const struct creds *creds;
	/* What moat holds in files for the sandbox (held.c) is charged to its
	 * memory limit: mem_limit (0: none, then HELD_CAP_DEFAULT), less what
	 * the sandbox's processes use now (mem_used, with mem_ctx). */
	uint64_t mem_limit;
	const char *etc_allow[16]; /* --etc NAME: more of the host's /etc shown */
	int netc_allow;
	uint64_t (*mem_used)(void *ctx);
	void *mem_ctx;
	/* The host name and terminal the sandbox is shown (core/machine.h). */
	const struct machine *machine;
	/* The network as /etc describes it (set by cli from net-stub). */
	const char *etc_hosts_pins; /* "ADDR\tNAME\n" lines: names moat resolved, or NULL */
	bool etc_dns_stub;          /* a stub resolver answers at 127.0.0.53 */
	bool etc_no_egress;         /* no destination outside is allowed */
	bool proc_net; /* the sandbox has a network namespace of its own: /proc/net shows it */
	/* moat has a mount namespace of its own: a tmpfs the sandbox mounts
	 * with a size can be a real one there (vfs_mount_add) */
	bool private_mounts;
	/* the sandbox bound a directory (mount --bind): one host tree is seen
	 * through two mounts, so a rename or rmdir forgets every cached
	 * directory, not its mount's alone (vfs_invalidate) */
	bool aliased;
	bool disk_limited; /* --disk-limit: every writable layer in one quota */
};

/* Walk flags. */
#define VW_FOLLOW 0x01      /* follow a final symlink */
#define VW_NO_SYMLINKS 0x02 /* openat2 RESOLVE_NO_SYMLINKS: any symlink -> ELOOP */
#define VW_BENEATH 0x04     /* RESOLVE_BENEATH: leaving `base` -> EXDEV */
#define VW_IN_ROOT 0x08     /* RESOLVE_IN_ROOT: `base` acts as the root */
#define VW_NO_XDEV 0x10     /* RESOLVE_NO_XDEV: crossing a mount -> EXDEV */
/* The last component is a name the call itself acts on (O_CREAT, rename):
 * a trailing slash neither follows it nor demands a directory; the caller
 * applies its own rule (out->trailing_slash). */
#define VW_LAST_NAME 0x20
/* The path is the sandbox's: with a chroot (the task's fsctx root), an
 * absolute path or symlink starts at that root and ".." stops there. */
#define VW_TASK_ROOT 0x40
/* openat2 RESOLVE_NO_MAGICLINKS: a /proc/PID link (exe, cwd, root, fd/N,
 * ...) followed anywhere in the path -> ELOOP. */
#define VW_NO_MAGICLINKS 0x80

/* What a walk found.  `parent` is an O_PATH fd of the directory holding
 * `name` (owned: vfs_path_release closes it); for a mount root, `parent`
 * is -1 and `name` is "." below `mnt->root_fd`. */
enum vnode_kind {
	VN_HOST,
	VN_PROC,
	VN_MAGIC_FD,
	VN_HELD, /* a removed directory (cwd or dirfd) named by ".": known only
		  * by the fd `magic_fd`, which the path owns */
};

struct vfs_path {
	struct vfs_mount *mnt;
	enum vnode_kind kind;
	char vpath[PATH_MAX]; /* canonical virtual path */
	char rel[PATH_MAX];   /* relative to mnt root: "." or "a/b" */
	int parent;
	/* 0: `parent` is the path's own.  Else 1 + the dentry-cache slot that
	 * lends it (walk.c): valid until vfs_path_release, never closed by the
	 * path; vfs_path_take_parent gives the caller one of its own. */
	int parent_pin;
	const char *name; /* last component of rel */
	bool exists;
	struct stat st; /* lstat of the node when it exists */
	bool outside;   /* named something outside the view */
	bool upper;     /* MNT_OVERLAY: `parent` (or the root) is in the
			 * upper layer, and so is the node if it exists */
	bool trailing_slash;
	/* VN_MAGIC_FD: /proc/PID/fd/N, reopened from the task's fd.
	 * VN_HELD: magic_fd is the supervisor's own fd of the node. */
	pid_t magic_pid;
	int magic_fd;
};

/* Set up the default view plus `extra` mounts; see mount.c. 0 / -errno with
 * a message in `err`.  `persist`: a directory holding the overlays' upper
 * layers across runs, or NULL for private layers removed at exit. */
struct vfs_mount_req {
	const char *src; /* host path (bind) or NULL (tmpfs) */
	const char *dst; /* virtual absolute path */
	enum mnt_kind kind;
	bool ro;
	unsigned long long size; /* tmpfs: a byte quota of its own (0: none) */
};
int vfs_setup(struct vfs *v, const char *scratch, const char *persist, uid_t uid, gid_t gid,
	      const struct vfs_mount_req *req, int nreq, char *err, size_t errlen);
void vfs_teardown(struct vfs *v);
/* mount(2) of the sandbox (sys_mount.c): at virtual path `vpath`, a new
 * empty tmpfs (`host` NULL; a byte quota of its own when `size`, mode
 * `mode`) or host directory `host` as a mount of `kind`, read-only when
 * `ro`.  On top of what is there (a later mount at the same place wins
 * until it is unmounted).  Its index, or -errno (ENOSPC: the table is
 * full). */
int vfs_mount_add(struct vfs *v, const char *vpath, enum mnt_kind kind, bool ro, const char *host,
		  unsigned long long size, mode_t mode);
/* umount2 of mount `idx`, one the sandbox made: its slot goes, and a tmpfs
 * its contents.  The dentry cache is emptied (it names mounts). */
void vfs_mount_remove(struct vfs *v, int idx);

/* Walk `path` from virtual directory `base` (used when path is relative).
 * Returns 0 with *out filled (out->exists says whether the last component
 * is there), or -errno for a failure before the last component.  The task
 * gives meaning to /proc/self. */
int vfs_walk(struct vfs *v, struct task *t, const char *base, const char *path, int flags,
	     struct vfs_path *out);
void vfs_path_release(struct vfs_path *p);
/* p's parent fd for the caller to keep (a job, a socket's target): p's own,
 * or a copy of the cache's; p no longer holds one.  -errno on failure. */
int vfs_path_take_parent(struct vfs_path *p);

/* Forget every cached directory of mount `m` (after rmdir or rename
 * there): a cached fd must never stand for a name that moved. */
void vfs_invalidate(struct vfs *v, const struct vfs_mount *m);
/* Forget the whole cache (vfs_teardown does). */
void vfs_dcache_clear(void);

/* Is `vpath` a host name the view hides: a name of the host's /etc that
 * its allowlist (walk.c) and --etc do not show, or a secret inside one
 * that they do (/etc/ssl/private, ssh host keys)?  A user's mount there
 * is never hidden. */
bool vfs_is_hidden(const struct vfs *v, const char *vpath);
/* A directory holding hidden names (/etc, /etc/ssh...) is listed from a
 * copy without them: an fd of that copy for open fd `dirfd` of virtual
 * directory `vpath`, or `dirfd` itself when nothing in it is hidden.
 * Takes ownership of dirfd. */
int vfs_filter_listing(struct vfs *v, int dirfd, const char *vpath);

/* Does a mount sit below `vpath`?  Such a directory cannot be renamed or
 * removed: mounts are placed by virtual path. */
bool vfs_holds_mount(struct vfs *v, const char *vpath);

/* The mount holding virtual path `vpath` (longest prefix). */
struct vfs_mount *vfs_mount_of(struct vfs *v, const char *vpath);
/* The mount whose host directory holds host path `host` (longest; *len
 * gets the length of its host path), or NULL. */
struct vfs_mount *vfs_mount_of_host(struct vfs *v, const char *host, size_t *len);
/* The virtual path of host path `host`, or -ENOENT outside every mount. */
int vfs_vpath_of_host(struct vfs *v, const char *host, char *out, size_t len);
/* Before a walked node or its directory changes: in a read-only mount
 * -EROFS; in an overlay, copy up what the change needs so that `p` (its
 * parent fd, name, stat) then names the upper layer.  0 or -errno. */
enum vfs_change {
	VC_CREATE, /* a new name in p's directory */
	VC_CHANGE, /* the node's contents or attributes */
	VC_REMOVE, /* the name goes (unlink, rmdir, replaced by rename) */
	VC_RENAME, /* the node moves to another name */
};
int vfs_make_writable(struct vfs *v, struct vfs_path *p, enum vfs_change what);
/* The directory fd a walked mount root (p->parent < 0) is reached by. */
int vfs_root_fd(const struct vfs_path *p);

/* openat2 of `rel` below directory fd `root`, RESOLVE_BENEATH with no
 * symlink and no magic link followed: fd or -errno (walk.c). */
int vfs_open_beneath(int root, const char *rel, int flags);

/* The root inside's DAC override in the sandbox's own layers (dac.c):
 * after the kernel said EACCES, may the call be done again with it on the
 * node `fd` (an fd of the node, or of the directory a change is made in)
 * of mount `m` (`upper`: an overlay's upper layer)? */
bool vfs_dac_fd(const struct vfs_mount *m, bool upper, int fd);
/* The existing node `name` of directory `dir`, which the walk found as
 * `walked`, opened with `flags` under the override: fd, or -errno
 * (-EACCES where the override does not apply). */
int vfs_dac_reopen(const struct vfs_mount *m, bool upper, int dir, const char *name, int flags,
		   const struct stat *walked);
/* vfs_open_beneath(root, rel, O_PATH | O_DIRECTORY) one component at a
 * time, each looked up under the override where its directory allows:
 * for a tmpfs mount `m`.  fd or -errno. */
int vfs_dac_open_beneath(const struct vfs_mount *m, int root, const char *rel);
/* Right after a call on walked node `p` — a lookup of its name in its
 * directory, or a change of that directory (create, remove, rename) —
 * failed: true, with the override on, when it failed with EACCES and the
 * directory p->parent allows the override; vfs_dac_leave ends it. */
bool vfs_dac_enter(const struct vfs_path *p);
void vfs_dac_leave(void);
/* The same for a change of node `p` itself (its times, its extended
 * attributes) by name, after EACCES or EPERM: the node the walk found must
 * be the sandbox's too, and root's CAP_FOWNER joins the override (the
 * owner's own rights).  A rename racing the call could make it another
 * node of that directory of the sandbox's own layers. */
bool vfs_dac_enter_node(const struct vfs_path *p);
/* `call` on p's name or directory (setting r, < 0 with errno on failure),
 * done again under the override when `enter(p)` (vfs_dac_enter, or
 * vfs_dac_enter_node for the node itself) allows. */
#define VFS_DAC_AGAIN(enter, p, r, call)   \
	do {                               \
		(r) = (call);              \
		if ((r) < 0 && enter(p)) { \
			(r) = (call);      \
			vfs_dac_leave();   \
		}                          \
	} while (0)
#define VFS_DAC_RETRY(p, r, call) VFS_DAC_AGAIN(vfs_dac_enter, p, r, call)
#define VFS_DAC_NODE_RETRY(p, r, call) VFS_DAC_AGAIN(vfs_dac_enter_node, p, r, call)
/* faccessat of walked node `p` (AT_EACCESS) under the override, on an
 * O_PATH fd of the node the walk found: 0 or -errno (-EACCES where the
 * override does not apply). */
int vfs_dac_access(const struct vfs_path *p, int mode);
/* unlinkat of walked node `p` after the kernel's EPERM of a sticky
 * directory, with root's CAP_FOWNER too, for a node and directory of the
 * sandbox's (decided on the directory's fd and the walk's stat of the
 * node).  0, or -1 with errno (EPERM where the override does not apply). */
int vfs_dac_unlink_sticky(const struct vfs_path *p, bool dir);
/* renameat2 of walked `a` to `b` after the kernel's EACCES or EPERM, under
 * the override when both directories allow it (and, in a sticky one, both
 * nodes are the sandbox's).  0, or -1 with errno (the kernel's where the
 * override does not apply). */
int vfs_dac_rename(const struct vfs_path *a, const struct vfs_path *b, unsigned flags);

/* Set one of a mount's paths to a copy of `s` (the old one freed).
 * 0, or -ENOMEM with the slot unchanged. */
int vfs_mount_str(const char **slot, const char *s);
/* Overlay internals shared by the walk (overlay.c). */
int ov_setup(struct vfs *v, const char *base, bool persist, char *err, size_t errlen);
int ov_add(struct vfs *v, struct vfs_mount *m, const char *name, char *err, size_t errlen);
/* Files of host directory `dir` replace the lower layer's files of the
 * same names at the top of overlay `m` (until the sandbox changes them). */
int ov_shadow(struct vfs_mount *m, const char *dir);
/* Is `name` at the top of `m` one of its shadowing files? */
bool ov_shadowed(const struct vfs_mount *m, const char *name);
int ov_open_dir(struct vfs_mount *m, const char *rel, bool *upper);
/* Look `name` up in directory fd `pfd` of `dir` (never closed here).  When
 * the name is the lower layer's (a shadowing file, an upper placeholder),
 * the lookup moves to another directory: *moved is then its fd, the
 * caller's, whatever the result; else -1. */
int ov_lookup(struct vfs_mount *m, int pfd, int *moved, bool *upper, const char *dir,
	      const char *name, struct stat *st);
bool ov_root_upper(struct vfs_mount *m);
/* An upper-layer node keeps the identity of the lower entry it was copied
 * from, as overlayfs keeps st_ino: a program that remembered a directory's
 * (st_dev, st_ino) before a copy-up (fts in rm and mv) finds it again.
 * `p` walked to an existing node; `host` a host path of a granted fd. */
void vfs_origin(const struct vfs_path *p, struct stat *st);
void vfs_origin_of_host(struct vfs *v, const char *host, struct stat *st);

/* Host path of a walked node (for exec), or -ENAMETOOLONG. */
int vfs_host_path(const struct vfs_path *p, char *buf, size_t len);
/* Open the walked node with open(2) flags (never following a final
 * symlink; the walk already did).  fd or -errno.  It never waits (it runs
 * on the loop): without O_NONBLOCK in flags, an open that would wait — a
 * FIFO for its other end, a file under a lease — is -EWOULDBLOCK, for the
 * caller to do off the loop (sys_open's job) or refuse. */
int vfs_open(struct vfs *v, struct task *t, struct vfs_path *p, int flags, mode_t mode);

/* Files moat made and handed to the sandbox (held.c): synthetic /proc and
 * /etc files in memfds.  Each stays alive as long as any sandbox fd or
 * mapping holds it, so it is charged to the sandbox: held_admit before
 * making one of `len` bytes (-ENOMEM past the sandbox's memory limit,
 * -EMFILE past HELD_MAX alive at once), held_track once it is made (it is
 * watched until the kernel frees it; -ENOMEM when it cannot be watched,
 * and the caller closes it).  held_peak: the most held at once, bytes. */
#define HELD_MAX 4096
#define HELD_CAP_DEFAULT (1ULL << 30) /* without a memory limit */
int held_admit(struct vfs *v, size_t len);
int held_track(int fd);
uint64_t held_peak(void);
uint64_t held_now(void);

/* The registry: what each granted fd means, keyed by (st_dev, st_ino). */
void reg_put(dev_t dev, ino_t ino, const char *vpath);
/* Forget an inode (a listing copy moat removed): its number may come back. */
void reg_forget(dev_t dev, ino_t ino);
/* The virtual path registered for (dev, ino), or NULL. */
const char *reg_get(dev_t dev, ino_t ino);
/* O_PATH|O_NOFOLLOW of a symlink: the kernel cannot pass an O_PATH file
 * through ADDFD, so the sandbox gets an empty sealed memfd standing in
 * for the link; fstat and the *at(fd, "", AT_EMPTY_PATH) calls answer for
 * the link at its virtual path.  reg_get_link: that path, or NULL when
 * (dev, ino) is no stand-in. */
void reg_put_link(dev_t dev, ino_t ino, const char *vpath);
const char *reg_get_link(dev_t dev, ino_t ino);

/* Terminals of the synthetic /dev (dev.c): the peer of the sandbox's
 * master of pty N, the caller's controlling terminal, and the note that
 * supervisor fd `fd` (just opened on /dev/ptmx) made a pty.  fd/-errno. */
int dev_open_pts(struct vfs *v, int n, int flags);
/* Is `name` one of the host devices /dev shows (null, zero, tty...)? */
bool vfs_dev_name(const char *name);
int dev_open_tty(pid_t tid, int flags);
int dev_opened_ptmx(struct vfs *v, int fd);
/* May the sandbox have one more pty from the host's pool?  At most
 * DEV_PTY_MAX alive at once (docs/security.md, class 4). */
#define DEV_PTY_MAX 32
bool dev_pty_room(struct vfs *v);
/* Is supervisor fd `fd` a pty master (of /dev/ptmx)? */
bool dev_is_ptmx(int fd);

/* Synthetic /proc (proc.c). */
int procfs_walk_step(struct vfs *v, struct task *t, const char *dir, const char *name,
		     struct stat *st, char *link, size_t linklen, int *magic_fd, pid_t *magic_pid);
int procfs_open(struct vfs *v, struct task *t, struct vfs_path *p, int flags);
/* sysinfo(2) as the sandbox sees it: the sandbox's uptime and task count,
 * the host's memory and load (as its /proc shows them).  0 or -errno. */
struct sysinfo;
int procfs_sysinfo(struct sysinfo *si);
/* Text of /proc/mounts for the virtual mount table. */
int vfs_mounts_text(struct vfs *v, char *buf, size_t len);

/* Files the run created or changed: every regular file whose ctime is not
 * before `since` in a writable mount (/tmp, /workspace, /dev/shm, --tmpfs,
 * writable --bind) or an overlay's upper layer (placeholders left out), by
 * virtual path; fn gets an fd opened for reading (or -1).  At most `max`
 * files; what is left out is counted in *cut, never dropped silently:
 * files past `max` or whose path is longer than PATH_MAX, and directories
 * deeper than VFS_CHANGES_DEPTH levels (not walked). */
#include <time.h>
#define VFS_CHANGES_DEPTH 256
struct vfs_changes_cut {
	unsigned files;
	unsigned dirs;
};
typedef void (*vfs_change_fn)(void *arg, const char *vpath, const struct stat *st, int fd);
void vfs_changed_files(const struct vfs *v, struct timespec since, unsigned max, vfs_change_fn fn,
		       void *arg, struct vfs_changes_cut *cut);

#endif
