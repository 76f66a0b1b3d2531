/* The virtual path walk, the mount table and the registry.
 *
 * Each test gets a fresh view: a fake host tree (files, relative and
 * absolute symlinks, loops, escapes, a 41-link chain, a 0700 directory)
 * bound at /data (ro) and /rw (rw), a tmpfs at /scratch, and the default
 * view around them.  The walk must resolve every name in the *virtual*
 * namespace: each escape test names a host file that a host-side
 * resolution would reach, so a walk that leaks to the host fails here. */
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fs-emulation/fs.h"
#include "fs-emulation/exec.h"
#include "fs-emulation/vfs.h"

#define CHAIN 41 /* links l0 -> l1 -> ... -> l40 -> end: l0 needs 41 hops */

static struct vfs v;           /* large: static, never on the stack */
static struct vfs v2;          /* for the vfs_setup failures */
static char base[PATH_MAX];    /* mkdtemp: holds everything below */
static char tree[PATH_MAX];    /* the fake host tree (canonical) */
static char scratch[PATH_MAX]; /* vfs_setup's scratch directory */

/* ---- building the host side ---- */

static void at(char *buf, size_t len, const char *dir, const char *rel)
{
	int n = snprintf(buf, len, "%s/%s", dir, rel);
	ck_assert_msg(n > 0 && (size_t)n < len, "path too long: %s/%s", dir, rel);
}

static void mk_dir(const char *rel, mode_t mode)
{
	char p[PATH_MAX];
	at(p, sizeof p, tree, rel);
	ck_assert_msg(mkdir(p, mode) == 0, "mkdir %s: %s", p, strerror(errno));
	ck_assert_msg(chmod(p, mode) == 0, "chmod %s: %s", p, strerror(errno));
}

static void mk_file_in(const char *dir, const char *rel, const char *text)
{
	char p[PATH_MAX];
	at(p, sizeof p, dir, rel);
	int fd = open(p, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0644);
	ck_assert_msg(fd >= 0, "create %s: %s", p, strerror(errno));
	ck_assert_int_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
}

static void mk_link(const char *target, const char *rel)
{
	char p[PATH_MAX];
	at(p, sizeof p, tree, rel);
	ck_assert_msg(symlink(target, p) == 0, "symlink %s: %s", p, strerror(errno));
}

/* (dev, ino) of a host path; lstat when !follow.  Fails the test if absent. */
static struct stat host_st(const char *path, bool follow)
{
	struct stat st;
	int r = follow ? stat(path, &st) : lstat(path, &st);
	ck_assert_msg(r == 0, "host %s: %s", path, strerror(errno));
	return st;
}

static struct stat tree_st(const char *rel, bool follow)
{
	char p[PATH_MAX];
	at(p, sizeof p, tree, rel);
	return host_st(p, follow);
}

/* The view's /etc/passwd: the synthetic one, shadowing the host's. */
static struct stat view_passwd(void)
{
	char p[PATH_MAX * 2];
	snprintf(p, sizeof p, "%s/passwd", vfs_mount_of(&v, "/etc")->shadow);
	return host_st(p, false);
}

static bool same_node(const struct stat *a, const struct stat *b)
{
	return a->st_dev == b->st_dev && a->st_ino == b->st_ino;
}

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)ftw;
	if (flag == FTW_DP || flag == FTW_D || flag == FTW_DNR)
		chmod(path, 0700), rmdir(path);
	else
		unlink(path);
	return 0;
}

static void rm_rf(const char *path)
{
	nftw(path, rm_entry, 32, FTW_DEPTH | FTW_PHYS | FTW_MOUNT);
}

/* Each test's directory lives in one directory per run, which main()
 * removes: a failed assertion ends a forked test before its teardown. */
static char run_dir[PATH_MAX];

static void setup(void)
{
	snprintf(base, sizeof base, "%s/XXXXXX", run_dir);
	ck_assert_msg(mkdtemp(base) != NULL, "mkdtemp: %s", strerror(errno));

	char p[PATH_MAX];
	at(p, sizeof p, base, "tree");
	ck_assert_int_eq(mkdir(p, 0755), 0);
	ck_assert_msg(realpath(p, tree) != NULL, "realpath %s", p);
	at(scratch, sizeof scratch, base, "scratch");
	ck_assert_int_eq(mkdir(scratch, 0700), 0);

	/* Decoys on the host: what a host-side resolution would find. */
	mk_file_in(base, "victim", "host victim\n");
	at(p, sizeof p, base, "usr");
	ck_assert_int_eq(mkdir(p, 0755), 0);

	mk_file_in(tree, "f", "top\n");
	mk_dir("sub", 0755);
	mk_file_in(tree, "sub/f", "sub\n");
	mk_file_in(tree, "sub/g", "g\n");
	mk_dir("sub/deep", 0755);
	mk_link("../f", "sub/rel");
	mk_link("..", "sub/dotdot");
	mk_link("../../../../x", "sub/esc");
	mk_link("../../victim", "sub/escv");
	mk_link("../../../../../../../../../../etc/passwd", "sub/escp");
	mk_link("/f", "sub/abs_in_root");
	char hostesc[PATH_MAX];
	snprintf(hostesc, sizeof hostesc, "../../../../../../..%s/victim", base);
	mk_link(hostesc, "sub/hostesc");
	mk_link(base, "sub/hostabs");
	mk_link("f", "lnk");
	mk_link("sub", "lnkdir");
	mk_link("f/", "tslash");
	mk_link("nothere", "dang");
	mk_link("/", "rootlink");
	mk_link("/etc/passwd", "abs_passwd");
	mk_link("/etc/gshadow", "abs_shadow");
	mk_link("../etc/gshadow", "rel_shadow");
	mk_link("../usr", "up");
	mk_dir("etc", 0755);
	mk_file_in(tree, "etc/passwd", "decoy:x:0:0::/:/bin/sh\n");
	mk_link("loop", "loop");
	mk_link("pong", "ping");
	mk_link("ping", "pong");
	mk_dir("private", 0700);
	mk_file_in(tree, "private/secret", "s\n");
	mk_dir("chain", 0755);
	mk_dir("chain/end", 0755);
	mk_file_in(tree, "chain/end/leaf", "leaf\n");
	for (int i = 0; i < CHAIN; i++) {
		char name[32], target[32];
		snprintf(name, sizeof name, "chain/l%d", i);
		if (i + 1 < CHAIN)
			snprintf(target, sizeof target, "l%d", i + 1);
		else
			snprintf(target, sizeof target, "end");
		mk_link(target, name);
	}

	const struct vfs_mount_req req[] = {
		{ tree, "/data", MNT_BIND, true, 0 },
		{ tree, "/rw", MNT_BIND, false, 0 },
		{ NULL, "/scratch", MNT_TMPFS, false, 0 },
		{ tree, "/ov", MNT_OVERLAY, false, 0 },
	};
	char err[512] = "";
	int r = vfs_setup(&v, scratch, NULL, getuid(), getgid(), req, 4, err, sizeof err);
	ck_assert_msg(r == 0, "vfs_setup: %d %s", r, err);
}

static void teardown(void)
{
	vfs_teardown(&v);
	struct stat st;
	ck_assert_msg(lstat(scratch, &st) < 0 && errno == ENOENT, "vfs_teardown left %s", scratch);
	char p[PATH_MAX];
	at(p, sizeof p, tree, "sub/f");
	ck_assert_msg(lstat(p, &st) == 0, "vfs_teardown removed %s, a bind source", p);
	rm_rf(base);
	base[0] = '\0';
}

/* ---- walking ---- */

static int walk(const char *from, const char *path, int flags, struct vfs_path *p)
{
	memset(p, 0, sizeof *p);
	return vfs_walk(&v, NULL, from, path, flags, p);
}

/* Expect 0 and an existing node at `want`, inside the view; *p stays
 * filled for more checks and the caller releases it. */
static void walk_ok(const char *from, const char *path, int flags, const char *want,
		    struct vfs_path *p)
{
	int r = walk(from, path, flags, p);
	ck_assert_msg(r == 0, "walk(%s, \"%s\", %#x) = %d (%s), want \"%s\"", from, path, flags, r,
		      strerror(-r), want);
	ck_assert_msg(strcmp(p->vpath, want) == 0,
		      "walk(%s, \"%s\", %#x) reached \"%s\", want \"%s\"", from, path, flags,
		      p->vpath, want);
	ck_assert_msg(p->exists, "walk(%s, \"%s\"): \"%s\" should exist", from, path, p->vpath);
	ck_assert_msg(!p->outside, "walk(%s, \"%s\"): \"%s\" marked outside", from, path, p->vpath);
}

/* Expect 0 with the last component missing at `want`. */
static void walk_missing(const char *from, const char *path, int flags, const char *want,
			 struct vfs_path *p)
{
	int r = walk(from, path, flags, p);
	ck_assert_msg(r == 0, "walk(%s, \"%s\", %#x) = %d (%s), want missing \"%s\"", from, path,
		      flags, r, strerror(-r), want);
	ck_assert_msg(strcmp(p->vpath, want) == 0,
		      "walk(%s, \"%s\", %#x) reached \"%s\", want \"%s\"", from, path, flags,
		      p->vpath, want);
	ck_assert_msg(!p->exists, "walk(%s, \"%s\"): \"%s\" should not exist", from, path,
		      p->vpath);
}

/* Expect exactly the error `want`, and `outside` as given. */
static void walk_err(const char *from, const char *path, int flags, int want, bool outside)
{
	struct vfs_path p;
	int r = walk(from, path, flags, &p);
	if (r == 0)
		vfs_path_release(&p);
	ck_assert_msg(r == want, "walk(%s, \"%s\", %#x) = %d (%s) at \"%s\", want %d (%s)", from,
		      path, flags, r, strerror(-r), p.vpath, want, strerror(-want));
	ck_assert_msg(p.outside == outside, "walk(%s, \"%s\", %#x): outside = %d, want %d", from,
		      path, flags, p.outside, outside);
}

/* Something outside the view: refused or absent, and flagged. */
static void walk_outside(const char *from, const char *path, int flags)
{
	struct vfs_path p;
	int r = walk(from, path, flags, &p);
	bool exists = r == 0 && p.exists;
	if (r == 0)
		vfs_path_release(&p);
	ck_assert_msg(r == -ENOENT || (r == 0 && !exists),
		      "walk(%s, \"%s\") = %d (%s), exists %d: should be invisible", from, path, r,
		      strerror(-r), exists);
	ck_assert_msg(p.outside, "walk(%s, \"%s\") = %d: outside not set", from, path, r);
}

/* The O_PATH parent fd names the host directory `rel` of the tree. */
static void parent_is(const struct vfs_path *p, const char *rel)
{
	struct stat got, want = tree_st(rel, false);
	ck_assert_msg(p->parent >= 0, "\"%s\": no parent fd", p->vpath);
	ck_assert_int_eq(fstat(p->parent, &got), 0);
	ck_assert_msg(same_node(&got, &want), "\"%s\": parent fd is not %s", p->vpath, rel);
}

START_TEST(test_absolute)
{
	struct vfs_path p;
	walk_ok("/", "/data/sub/f", 0, "/data/sub/f", &p);
	ck_assert(S_ISREG(p.st.st_mode));
	ck_assert_str_eq(p.rel, "sub/f");
	ck_assert_str_eq(p.name, "f");
	ck_assert_ptr_eq(p.mnt, vfs_mount_of(&v, "/data"));
	ck_assert_str_eq(p.mnt->vpath, "/data");
	struct stat want = tree_st("sub/f", false);
	ck_assert(same_node(&p.st, &want));
	parent_is(&p, "sub");
	vfs_path_release(&p);
	ck_assert_int_eq(p.parent, -1);

	walk_ok("/", "/data/sub", 0, "/data/sub", &p);
	ck_assert(S_ISDIR(p.st.st_mode));
	ck_assert_str_eq(p.name, "sub");
	parent_is(&p, ".");
	vfs_path_release(&p);

	walk_ok("/data/sub", "/rw/f", 0, "/rw/f", &p); /* absolute ignores the base */
	ck_assert(!p.mnt->ro);
	vfs_path_release(&p);

	walk_err("/", "", 0, -ENOENT, false);
}
END_TEST

START_TEST(test_relative)
{
	struct vfs_path p;
	walk_ok("/data/sub", "f", 0, "/data/sub/f", &p);
	struct stat want = tree_st("sub/f", false);
	ck_assert(same_node(&p.st, &want));
	vfs_path_release(&p);
	walk_ok("/data/sub", "./f", 0, "/data/sub/f", &p);
	ck_assert(same_node(&p.st, &want));
	vfs_path_release(&p);
	walk_ok("/data/sub", "../f", 0, "/data/f", &p);
	want = tree_st("f", false);
	ck_assert(same_node(&p.st, &want));
	vfs_path_release(&p);
	walk_ok("/data/sub", "../sub/./g", 0, "/data/sub/g", &p);
	vfs_path_release(&p);
	walk_ok("/data/sub", ".", 0, "/data/sub", &p);
	ck_assert(S_ISDIR(p.st.st_mode));
	vfs_path_release(&p);
	walk_ok("/data/sub", "..", 0, "/data", &p);
	ck_assert_str_eq(p.name, ".");
	ck_assert_int_eq(p.parent, -1);
	vfs_path_release(&p);
	walk_ok("/data", "..", 0, "/", &p);
	ck_assert(p.mnt == &v.mnt[0]); /* the root's layer */
	vfs_path_release(&p);
	walk_ok("/", "data/sub/f", 0, "/data/sub/f", &p);
	vfs_path_release(&p);
	walk_ok("/data/sub", "deep/../../sub/f", 0, "/data/sub/f", &p);
	vfs_path_release(&p);
}
END_TEST

START_TEST(test_squeeze)
{
	struct vfs_path p;
	walk_ok("/", "//data///sub//f", 0, "/data/sub/f", &p);
	vfs_path_release(&p);
	walk_ok("/", "/./data/./sub/./f", 0, "/data/sub/f", &p);
	vfs_path_release(&p);
	walk_ok("/data", "sub//f", 0, "/data/sub/f", &p);
	vfs_path_release(&p);
	walk_ok("/data", ".//./sub/.//f", 0, "/data/sub/f", &p);
	vfs_path_release(&p);
	walk_ok("/", "//", 0, "/", &p);
	ck_assert(p.mnt == &v.mnt[0]); /* the root's layer */
	vfs_path_release(&p);
}
END_TEST

START_TEST(test_trailing_slash)
{
	struct vfs_path p;
	walk_err("/", "/data/f/", 0, -ENOTDIR, false);
	walk_err("/data/sub", "f/", 0, -ENOTDIR, false);
	walk_err("/", "/data/f/.", 0, -ENOTDIR, false);
	walk_err("/", "/data/f/..", 0, -ENOTDIR, false);
	walk_err("/", "/data/f//", VW_FOLLOW, -ENOTDIR, false);
	walk_err("/", "/data/lnk/", 0, -ENOTDIR, false); /* the slash follows: to a file */
	walk_err("/", "/data/tslash", VW_FOLLOW, -ENOTDIR, false); /* target "f/" */
	walk_ok("/", "/data/sub/", 0, "/data/sub", &p);
	ck_assert(S_ISDIR(p.st.st_mode));
	vfs_path_release(&p);
	walk_ok("/", "/data/sub//", 0, "/data/sub", &p);
	vfs_path_release(&p);
	walk_ok("/", "/data/lnkdir/", 0, "/data/sub", &p); /* followed without VW_FOLLOW */
	ck_assert(S_ISDIR(p.st.st_mode));
	vfs_path_release(&p);
	walk_ok("/", "/data/", 0, "/data", &p);
	ck_assert_int_eq(p.parent, -1);
	vfs_path_release(&p);
}
END_TEST

START_TEST(test_dotdot_stops_at_root)
{
	struct vfs_path p;
	walk_ok("/", "/../../..", 0, "/", &p);
	ck_assert(p.mnt == &v.mnt[0]); /* the root's layer */
	ck_assert_str_eq(p.name, ".");
	ck_assert_int_eq(p.parent, -1);
	ck_assert(S_ISDIR(p.st.st_mode));
	vfs_path_release(&p);

	walk_ok("/", "/data/../../usr", 0, "/usr", &p);
	ck_assert_str_eq(p.mnt->vpath, "/usr");
	struct stat want = host_st("/usr", true);
	ck_assert(same_node(&p.st, &want));
	vfs_path_release(&p);

	walk_ok("/data/sub", "../../../../etc/passwd", 0, "/etc/passwd", &p);
	want = view_passwd();
	ck_assert(same_node(&p.st, &want));
	vfs_path_release(&p);

	walk_ok("/", "/../data/../../data/sub/../../..", 0, "/", &p);
	vfs_path_release(&p);
}
END_TEST

START_TEST(test_symlink_relative)
{
	struct vfs_path p;
	walk_ok("/", "/data/sub/rel", VW_FOLLOW, "/data/f", &p); /* ../f */
	struct stat want = tree_st("f", false);
	ck_assert(S_ISREG(p.st.st_mode));
	ck_assert(same_node(&p.st, &want));
	parent_is(&p, ".");
	vfs_path_release(&p);

	/* "../usr" from the mount root: the virtual /usr, not <base>/usr. */
	walk_ok("/", "/data/up", VW_FOLLOW, "/usr", &p);
	want = host_st("/usr", true);
	ck_assert(same_node(&p.st, &want));
	ck_assert_str_eq(p.mnt->vpath, "/usr");
	vfs_path_release(&p);

	walk_ok("/", "/data/lnkdir/f", 0, "/data/sub/f", &p); /* an intermediate link */
	want = tree_st("sub/f", false);
	ck_assert(same_node(&p.st, &want));
	vfs_path_release(&p);

	walk_ok("/", "/data/sub/dotdot/f", 0, "/data/f", &p);
	vfs_path_release(&p);
	walk_ok("/", "/data/sub/dotdot", VW_FOLLOW, "/data", &p);
	ck_assert_int_eq(p.parent, -1);
	vfs_path_release(&p);
	walk_ok("/", "/data/lnkdir/..", 0, "/data", &p); /* ".." of the target */
	vfs_path_release(&p);
	walk_ok("/", "/data/rootlink", VW_FOLLOW, "/", &p);
	ck_assert(p.mnt == &v.mnt[0]); /* the root's layer */
	vfs_path_release(&p);
}
END_TEST

START_TEST(test_symlink_absolute_is_virtual)
{
	struct vfs_path p;
	walk_ok("/", "/data/abs_passwd", VW_FOLLOW, "/etc/passwd", &p);
	ck_assert_str_eq(p.mnt->vpath, "/etc");
	ck_assert_int_eq(p.mnt->kind, MNT_OVERLAY);
	ck_assert(!p.upper); /* nothing written: the host's file itself */
	struct stat host = view_passwd();
	struct stat decoy = tree_st("etc/passwd", false);
	ck_assert_msg(same_node(&p.st, &host), "not the view's /etc/passwd");
	ck_assert_msg(!same_node(&p.st, &decoy), "resolved inside the bind source");
	vfs_path_release(&p);

	/* Through the writable bind as well, and as an intermediate. */
	walk_ok("/", "/rw/abs_passwd", VW_FOLLOW, "/etc/passwd", &p);
	ck_assert(same_node(&p.st, &host));
	vfs_path_release(&p);
}
END_TEST

START_TEST(test_symlink_escape_stays_inside)
{
	struct vfs_path p;
	/* ../../../../x from /data/sub: clamped at "/", lands on "/x" — a
	 * free name of the view (the host has no /x), not a look outside. */
	walk_missing("/", "/data/sub/esc", VW_FOLLOW, "/x", &p);
	ck_assert(!p.outside);
	vfs_path_release(&p);
	/* ../../victim: <base>/victim on the host, "/victim" virtually. */
	walk_missing("/", "/data/sub/escv", VW_FOLLOW, "/victim", &p);
	ck_assert(!p.outside);
	vfs_path_release(&p);
	/* A name the host has at its root and the view hides is outside. */
	walk_missing("/", "/root", 0, "/root", &p);
	ck_assert(p.outside);
	vfs_path_release(&p);
	walk_ok("/", "/data/sub/escp", VW_FOLLOW, "/etc/passwd", &p);
	vfs_path_release(&p);
	/* The host path of <base>/victim, spelled relative and absolute: the
	 * sandbox's /tmp is private and empty. */
	walk_err("/", "/data/sub/hostesc", VW_FOLLOW, -ENOENT, false);
	walk_err("/", "/data/sub/hostabs/victim", 0, -ENOENT, false);
	/* Links to the hidden secrets stay hidden. */
	walk_err("/", "/data/abs_shadow", VW_FOLLOW, -ENOENT, true);
	walk_err("/", "/data/rel_shadow", VW_FOLLOW, -ENOENT, true);
}
END_TEST

START_TEST(test_symlink_chain)
{
	struct vfs_path p;
	walk_ok("/", "/data/chain/l1", VW_FOLLOW, "/data/chain/end", &p); /* 40 hops */
	ck_assert(S_ISDIR(p.st.st_mode));
	vfs_path_release(&p);
	walk_ok("/", "/data/chain/l1/leaf", 0, "/data/chain/end/leaf", &p);
	vfs_path_release(&p);
	walk_ok("/", "/data/chain/l1/", 0, "/data/chain/end", &p);
	vfs_path_release(&p);
	walk_err("/", "/data/chain/l0", VW_FOLLOW, -ELOOP, false); /* 41 hops */
	walk_err("/", "/data/chain/l0/leaf", 0, -ELOOP, false);
	walk_err("/", "/data/chain/l0/", 0, -ELOOP, false);
	walk_ok("/", "/data/chain/l0", 0, "/data/chain/l0", &p);
	ck_assert(S_ISLNK(p.st.st_mode));
	vfs_path_release(&p);
}
END_TEST

START_TEST(test_symlink_loops)
{
	struct vfs_path p;
	walk_err("/", "/data/loop", VW_FOLLOW, -ELOOP, false);
	walk_err("/", "/data/loop/x", 0, -ELOOP, false);
	walk_err("/", "/data/loop/", 0, -ELOOP, false);
	walk_err("/", "/data/ping", VW_FOLLOW, -ELOOP, false);
	walk_err("/data", "pong/x", 0, -ELOOP, false);
	walk_ok("/", "/data/loop", 0, "/data/loop", &p);
	ck_assert(S_ISLNK(p.st.st_mode));
	vfs_path_release(&p);
}
END_TEST

START_TEST(test_follow_or_not)
{
	struct vfs_path p;
	walk_ok("/", "/data/lnk", 0, "/data/lnk", &p);
	ck_assert(S_ISLNK(p.st.st_mode));
	struct stat want = tree_st("lnk", false);
	ck_assert(same_node(&p.st, &want));
	ck_assert_str_eq(p.name, "lnk");
	char buf[64];
	ssize_t n = readlinkat(p.parent, p.name, buf, sizeof buf - 1);
	ck_assert_int_eq(n, 1);
	vfs_path_release(&p);

	walk_ok("/", "/data/lnk", VW_FOLLOW, "/data/f", &p);
	ck_assert(S_ISREG(p.st.st_mode));
	want = tree_st("f", false);
	ck_assert(same_node(&p.st, &want));
	vfs_path_release(&p);

	walk_ok("/", "/data/lnkdir", 0, "/data/lnkdir", &p);
	ck_assert(S_ISLNK(p.st.st_mode));
	vfs_path_release(&p);
	walk_ok("/", "/data/lnkdir", VW_FOLLOW, "/data/sub", &p);
	ck_assert(S_ISDIR(p.st.st_mode));
	vfs_path_release(&p);

	/* A dangling link: itself without follow, its missing target with. */
	walk_ok("/", "/data/dang", 0, "/data/dang", &p);
	ck_assert(S_ISLNK(p.st.st_mode));
	vfs_path_release(&p);
	walk_missing("/", "/data/dang", VW_FOLLOW, "/data/nothere", &p);
	ck_assert(!p.outside);
	ck_assert_str_eq(p.name, "nothere");
	parent_is(&p, ".");
	vfs_path_release(&p);
}
END_TEST

START_TEST(test_mount_roots)
{
	struct vfs_path p;
	static const char *const ways[] = { "/data", "/data/", "/data/.", "/data/sub/..",
					    "/usr/../data" };
	struct stat want = tree_st(".", false);
	for (size_t i = 0; i < sizeof ways / sizeof ways[0]; i++) {
		walk_ok("/", ways[i], 0, "/data", &p);
		ck_assert_msg(strcmp(p.name, ".") == 0, "%s: name \"%s\"", ways[i], p.name);
		ck_assert_str_eq(p.rel, ".");
		ck_assert_msg(p.parent == -1, "%s: parent %d", ways[i], p.parent);
		ck_assert_int_eq(p.mnt->kind, MNT_BIND);
		ck_assert(p.mnt->ro);
		ck_assert(S_ISDIR(p.st.st_mode));
		ck_assert(same_node(&p.st, &want));
		vfs_path_release(&p);
	}
	walk_ok("/", "/rw", 0, "/rw", &p);
	ck_assert_int_eq(p.mnt->kind, MNT_BIND);
	ck_assert(!p.mnt->ro);
	vfs_path_release(&p);

	static const char *const tmpfs[] = { "/tmp", "/workspace", "/scratch", "/dev/shm" };
	for (size_t i = 0; i < sizeof tmpfs / sizeof tmpfs[0]; i++) {
		walk_ok("/", tmpfs[i], 0, tmpfs[i], &p);
		ck_assert_msg(p.mnt->kind == MNT_TMPFS, "%s: kind %d", tmpfs[i], p.mnt->kind);
		ck_assert(!p.mnt->ro);
		ck_assert_int_eq(p.parent, -1);
		ck_assert(S_ISDIR(p.st.st_mode));
		vfs_path_release(&p);
	}

	/* The system directories: the host's, under a private layer. */
	walk_ok("/", "/usr", 0, "/usr", &p);
	ck_assert_int_eq(p.mnt->kind, MNT_OVERLAY);
	ck_assert(!p.mnt->ro && !p.upper);
	want = host_st("/usr", true);
	ck_assert(same_node(&p.st, &want));
	vfs_path_release(&p);

	walk_ok("/", "/etc", 0, "/etc", &p);
	ck_assert_int_eq(p.mnt->kind, MNT_OVERLAY);
	vfs_path_release(&p);

	walk_ok("/", "/", 0, "/", &p);
	ck_assert(p.mnt == &v.mnt[0]);              /* the root's layer */
	ck_assert_int_eq(p.mnt->kind, MNT_OVERLAY); /* writable: its own layer */
	ck_assert_int_eq(p.parent, -1);
	vfs_path_release(&p);

	/* /dev: placeholders stat as the host's devices. */
	walk_ok("/", "/dev/null", 0, "/dev/null", &p);
	ck_assert_int_eq(p.mnt->kind, MNT_DEV);
	ck_assert(S_ISCHR(p.st.st_mode));
	want = host_st("/dev/null", true);
	ck_assert(p.st.st_rdev == want.st_rdev);
	vfs_path_release(&p);
}
END_TEST

START_TEST(test_top_dirs_mirror_host)
{
	static const char *const tops[] = { "/bin", "/sbin", "/lib", "/lib64" };
	for (size_t i = 0; i < sizeof tops / sizeof tops[0]; i++) {
		struct stat hl;
		if (lstat(tops[i], &hl) < 0)
			continue;
		struct stat hs = host_st(tops[i], true);
		struct vfs_path p;
		walk_ok("/", tops[i], 0, tops[i], &p);
		if (S_ISLNK(hl.st_mode)) {
			ck_assert_msg(S_ISLNK(p.st.st_mode), "%s: a link on the host", tops[i]);
			ck_assert(p.mnt == &v.mnt[0]); /* the root's layer */
			char want[PATH_MAX], got[PATH_MAX];
			ssize_t wn = readlink(tops[i], want, sizeof want - 1);
			ssize_t gn = readlinkat(p.parent, p.name, got, sizeof got - 1);
			ck_assert(wn > 0 && gn == wn);
			ck_assert(memcmp(want, got, (size_t)wn) == 0);
		} else {
			ck_assert(S_ISDIR(p.st.st_mode));
			ck_assert_int_eq(p.mnt->kind, MNT_OVERLAY);
		}
		vfs_path_release(&p);

		/* Followed, it is the same directory as the host's. */
		ck_assert_int_eq(walk("/", tops[i], VW_FOLLOW, &p), 0);
		ck_assert(p.exists && S_ISDIR(p.st.st_mode));
		ck_assert_msg(same_node(&p.st, &hs), "%s -> %s: not the host's", tops[i], p.vpath);
		ck_assert(!p.upper);
		vfs_path_release(&p);
	}
	struct stat hsh;
	if (stat("/bin/sh", &hsh) == 0) {
		struct vfs_path p;
		ck_assert_int_eq(walk("/", "/bin/sh", VW_FOLLOW, &p), 0);
		ck_assert(p.exists && same_node(&p.st, &hsh));
		vfs_path_release(&p);
	}
}
END_TEST

START_TEST(test_outside_view)
{
	walk_outside("/", "/root", 0);
	walk_outside("/", "/root/", 0);
	walk_outside("/", "/root/.ssh/id_rsa", 0);
	walk_outside("/", "/home/x", 0);
	walk_outside("/", "/var/log", 0);
	walk_outside("/", "/sys/kernel", 0);
	walk_outside("/", "/run", VW_FOLLOW);
	walk_outside("/", "/data/../root", 0);
	walk_outside("/data", "../home/x", 0);
	walk_outside("/", "/home/x", VW_NO_SYMLINKS);

	/* Missing inside a mount is just missing, not outside. */
	struct vfs_path p;
	walk_missing("/", "/data/nothere", 0, "/data/nothere", &p);
	ck_assert(!p.outside);
	vfs_path_release(&p);
	walk_err("/", "/data/nodir/x", 0, -ENOENT, false);
	walk_missing("/", "/tmp/x", 0, "/tmp/x", &p);
	ck_assert(!p.outside);
	vfs_path_release(&p);
}
END_TEST

START_TEST(test_etc_secrets_hidden)
{
	struct vfs_path p;
	walk_ok("/", "/etc/passwd", 0, "/etc/passwd", &p);
	ck_assert(S_ISREG(p.st.st_mode));
	vfs_path_release(&p);

	static const char *const hidden[] = {
		"/etc/gshadow",       "/etc/gshadow/",
		"/etc/gshadow-",      "/etc/sudoers",
		"/etc/sudoers.d/x",   "/etc/./gshadow",
		"/etc//gshadow",      "/usr/../etc/gshadow",
		"//etc/gshadow",      "/etc/ssh/ssh_host_ed25519_key",
		"/etc/ssl/private/x", "/data/../etc/gshadow",
	};
	for (size_t i = 0; i < sizeof hidden / sizeof hidden[0]; i++) {
		walk_err("/", hidden[i], 0, -ENOENT, true);
		walk_err("/", hidden[i], VW_FOLLOW, -ENOENT, true);
	}
	walk_err("/etc", "gshadow", 0, -ENOENT, true);

	/* The public halves of the ssh host keys name the host: hidden too
	 * (the default /etc is an allowlist, docs/filesystem.md). */
	walk_err("/", "/etc/ssh/ssh_host_ed25519_key.pub", 0, -ENOENT, true);
	/* Host backups of the account files, and the host's identity. */
	walk_err("/", "/etc/passwd-", 0, -ENOENT, true);
	walk_err("/", "/etc/group-", 0, -ENOENT, true);
	walk_err("/", "etc/gshadow", 0, -ENOENT, true);
	walk_err("/etc", "/gshadow", VW_IN_ROOT, -ENOENT, true);
	walk_err("/etc", "gshadow", VW_BENEATH, -ENOENT, true);
}
END_TEST

START_TEST(test_missing_final)
{
	struct vfs_path p;
	walk_missing("/", "/rw/sub/new", 0, "/rw/sub/new", &p);
	ck_assert(!p.outside);
	ck_assert_str_eq(p.rel, "sub/new");
	ck_assert_str_eq(p.name, "new");
	parent_is(&p, "sub");
	/* The parent fd is good for creating the name. */
	ck_assert_int_eq(mkdirat(p.parent, p.name, 0755), 0);
	vfs_path_release(&p);
	walk_ok("/", "/rw/sub/new", 0, "/rw/sub/new", &p);
	ck_assert(S_ISDIR(p.st.st_mode));
	vfs_path_release(&p);

	walk_missing("/data/sub", "./new2", 0, "/data/sub/new2", &p); /* the slow walk */
	parent_is(&p, "sub");
	vfs_path_release(&p);
	walk_missing("/", "/data/new3/", 0, "/data/new3", &p);
	parent_is(&p, ".");
	vfs_path_release(&p);

	walk_err("/", "/data/nodir/x", 0, -ENOENT, false);
	walk_err("/", "/data/./nodir/x", 0, -ENOENT, false);
	walk_err("/data/sub", "nodir/x", 0, -ENOENT, false);
	walk_err("/", "/data/f/x", 0, -ENOTDIR, false);
	walk_err("/", "/data/./f/x", 0, -ENOTDIR, false);
	walk_err("/", "/data/dang/x", 0, -ENOENT, false);
}
END_TEST

START_TEST(test_private_dir)
{
	struct vfs_path p;
	walk_ok("/", "/data/private", 0, "/data/private", &p);
	ck_assert(S_ISDIR(p.st.st_mode));
	ck_assert_int_eq(p.st.st_mode & 07777, 0700);
	vfs_path_release(&p);
	walk_ok("/", "/data/private/secret", 0, "/data/private/secret", &p);
	ck_assert(S_ISREG(p.st.st_mode));
	parent_is(&p, "private");
	vfs_path_release(&p);
}
END_TEST

START_TEST(test_beneath)
{
	struct vfs_path p;
	walk_err("/data/sub", "../x", VW_BENEATH, -EXDEV, false);
	walk_err("/data/sub", "..", VW_BENEATH, -EXDEV, false);
	walk_err("/data/sub", "/etc/passwd", VW_BENEATH, -EXDEV, false);
	walk_err("/data/sub", "/data/sub/f", VW_BENEATH, -EXDEV, false);
	walk_err("/data/sub", "rel", VW_BENEATH | VW_FOLLOW, -EXDEV, false);         /* ../f */
	walk_err("/data/sub", "abs_in_root", VW_BENEATH | VW_FOLLOW, -EXDEV, false); /* /f */
	walk_err("/data/sub", "deep/../../f", VW_BENEATH, -EXDEV, false);
	walk_ok("/data/sub", "f", VW_BENEATH, "/data/sub/f", &p);
	vfs_path_release(&p);
	walk_ok("/data/sub", "deep/../f", VW_BENEATH, "/data/sub/f", &p);
	vfs_path_release(&p);
	walk_ok("/data/sub", ".", VW_BENEATH, "/data/sub", &p);
	vfs_path_release(&p);
	/* Not following a final link that points out is fine. */
	walk_ok("/data/sub", "rel", VW_BENEATH, "/data/sub/rel", &p);
	ck_assert(S_ISLNK(p.st.st_mode));
	vfs_path_release(&p);
}
END_TEST

START_TEST(test_in_root)
{
	struct vfs_path p;
	struct stat want = tree_st("sub/f", false);
	static const char *const ways[] = {
		"/f", "f", "../f", "../../../f", "/../f", "deep/../../f"
	};
	for (size_t i = 0; i < sizeof ways / sizeof ways[0]; i++) {
		walk_ok("/data/sub", ways[i], VW_IN_ROOT, "/data/sub/f", &p);
		ck_assert_msg(same_node(&p.st, &want), "%s: not sub/f", ways[i]);
		vfs_path_release(&p);
	}
	walk_ok("/data/sub", "abs_in_root", VW_IN_ROOT | VW_FOLLOW, "/data/sub/f", &p); /* /f */
	ck_assert(same_node(&p.st, &want));
	vfs_path_release(&p);
	walk_ok("/data/sub", "rel", VW_IN_ROOT | VW_FOLLOW, "/data/sub/f", &p); /* ../f */
	ck_assert(same_node(&p.st, &want));
	vfs_path_release(&p);
	walk_ok("/data/sub", "/", VW_IN_ROOT, "/data/sub", &p);
	vfs_path_release(&p);
	/* The escapes land inside the new root too. */
	walk_missing("/data/sub", "escv", VW_IN_ROOT | VW_FOLLOW, "/data/sub/victim", &p);
	vfs_path_release(&p);
	walk_err("/data/sub", "escp", VW_IN_ROOT | VW_FOLLOW, -ENOENT, false); /* no etc/ in sub */
}
END_TEST

START_TEST(test_no_symlinks)
{
	struct vfs_path p;
	walk_err("/", "/data/lnkdir/f", VW_NO_SYMLINKS, -ELOOP, false);
	walk_err("/", "/data/lnk", VW_NO_SYMLINKS | VW_FOLLOW, -ELOOP, false);
	walk_err("/", "/data/lnkdir/", VW_NO_SYMLINKS, -ELOOP, false);
	walk_err("/data", "sub/rel", VW_NO_SYMLINKS | VW_FOLLOW, -ELOOP, false);
	struct stat hl;
	if (lstat("/bin", &hl) == 0 && S_ISLNK(hl.st_mode))
		walk_err("/", "/bin/sh", VW_NO_SYMLINKS, -ELOOP, false);
	/* Like openat2: a final link not followed is returned itself. */
	walk_ok("/", "/data/lnk", VW_NO_SYMLINKS, "/data/lnk", &p);
	ck_assert(S_ISLNK(p.st.st_mode));
	vfs_path_release(&p);
	walk_ok("/", "/data/sub/f", VW_NO_SYMLINKS, "/data/sub/f", &p);
	vfs_path_release(&p);
}
END_TEST

/* RESOLVE_NO_XDEV as openat2 has it: any mount crossing, including "..",
 * an absolute path (which starts at "/", the root mount) and a symlink. */
START_TEST(test_no_xdev)
{
	struct vfs_path p;
	walk_ok("/data", "sub/f", VW_NO_XDEV, "/data/sub/f", &p);
	vfs_path_release(&p);
	walk_ok("/data", "lnkdir/f", VW_NO_XDEV, "/data/sub/f", &p);
	vfs_path_release(&p);
	walk_ok("/data/sub", "../f", VW_NO_XDEV, "/data/f", &p);
	vfs_path_release(&p);
	walk_err("/data", "../usr", VW_NO_XDEV, -EXDEV, false);
	walk_err("/data", "abs_passwd", VW_NO_XDEV | VW_FOLLOW, -EXDEV, false);
	walk_err("/", "/data/f", VW_NO_XDEV, -EXDEV, false);
	walk_err("/", "data", VW_NO_XDEV, -EXDEV, false);
}
END_TEST

/* Two crossings the walk lets through (openat2 gives EXDEV for both:
 * `..` out of a mount root, and an absolute path whose first step is the
 * root mount even when it comes back to the base's mount). */
START_TEST(test_no_xdev_dotdot_and_absolute)
{
	walk_err("/data", "..", VW_NO_XDEV, -EXDEV, false);
	walk_err("/data/sub", "../..", VW_NO_XDEV, -EXDEV, false);
	walk_err("/data", "/data/sub/f", VW_NO_XDEV, -EXDEV, false);
}
END_TEST

START_TEST(test_mount_of)
{
	ck_assert_str_eq(vfs_mount_of(&v, "/")->vpath, "/");
	ck_assert_str_eq(vfs_mount_of(&v, "/data")->vpath, "/data");
	ck_assert_str_eq(vfs_mount_of(&v, "/data/x/y")->vpath, "/data");
	ck_assert_str_eq(vfs_mount_of(&v, "/datax")->vpath, "/");
	ck_assert_str_eq(vfs_mount_of(&v, "/datax/y")->vpath, "/");
	ck_assert_str_eq(vfs_mount_of(&v, "/dat")->vpath, "/");
	ck_assert_str_eq(vfs_mount_of(&v, "/usrx")->vpath, "/");
	ck_assert_str_eq(vfs_mount_of(&v, "/usr/bin")->vpath, "/usr");
	ck_assert_str_eq(vfs_mount_of(&v, "/dev/null")->vpath, "/dev");
	ck_assert_str_eq(vfs_mount_of(&v, "/dev/shm")->vpath, "/dev/shm");
	ck_assert_str_eq(vfs_mount_of(&v, "/dev/shm/a")->vpath, "/dev/shm");
	ck_assert_str_eq(vfs_mount_of(&v, "/dev/shmx")->vpath, "/dev");
	ck_assert_str_eq(vfs_mount_of(&v, "/rw")->vpath, "/rw");
	ck_assert_str_eq(vfs_mount_of(&v, "/scratch/a")->vpath, "/scratch");
	ck_assert_int_eq(vfs_mount_of(&v, "/scratch")->kind, MNT_TMPFS);
	ck_assert(vfs_mount_of(&v, "/") == &v.mnt[0]);
	ck_assert_int_eq(v.mnt[0].kind, MNT_OVERLAY);
}
END_TEST

START_TEST(test_host_path)
{
	struct vfs_path p;
	char got[PATH_MAX], want[PATH_MAX];

	walk_missing("/", "/tmp/newfile", 0, "/tmp/newfile", &p);
	ck_assert_int_eq(vfs_host_path(&p, got, sizeof got), 0);
	snprintf(want, sizeof want, "%s/tmp/newfile", scratch);
	ck_assert_str_eq(got, want);
	ck_assert_int_eq(vfs_host_path(&p, got, 8), -ENAMETOOLONG);
	vfs_path_release(&p);

	walk_missing("/", "/scratch/x", 0, "/scratch/x", &p);
	ck_assert_int_eq(vfs_host_path(&p, got, sizeof got), 0);
	ck_assert_msg(strncmp(got, scratch, strlen(scratch)) == 0 && got[strlen(scratch)] == '/',
		      "%s is not under the scratch dir %s", got, scratch);
	ck_assert_str_eq(got + strlen(got) - 2, "/x");
	vfs_path_release(&p);

	walk_ok("/", "/workspace", 0, "/workspace", &p);
	ck_assert_int_eq(vfs_host_path(&p, got, sizeof got), 0);
	snprintf(want, sizeof want, "%s/workspace", scratch);
	ck_assert_str_eq(got, want);
	vfs_path_release(&p);

	walk_ok("/", "/data/sub/f", 0, "/data/sub/f", &p);
	ck_assert_int_eq(vfs_host_path(&p, got, sizeof got), 0);
	snprintf(want, sizeof want, "%s/sub/f", tree);
	ck_assert_str_eq(got, want);
	vfs_path_release(&p);

	walk_ok("/", "/data", 0, "/data", &p);
	ck_assert_int_eq(vfs_host_path(&p, got, sizeof got), 0);
	ck_assert_str_eq(got, tree);
	vfs_path_release(&p);
}
END_TEST

START_TEST(test_teardown_removes_scratch)
{
	/* The fixture's teardown checks this on every test; here it is the
	 * subject, with files in the tmpfs mounts. */
	char p[PATH_MAX];
	at(p, sizeof p, scratch, "tmp");
	mk_file_in(p, "a", "a\n");
	at(p, sizeof p, scratch, "workspace");
	mk_file_in(p, "b", "b\n");
	vfs_teardown(&v);
	struct stat st;
	ck_assert_msg(lstat(scratch, &st) < 0 && errno == ENOENT, "%s still there", scratch);
	char q[PATH_MAX];
	at(q, sizeof q, tree, "f");
	ck_assert_msg(lstat(q, &st) == 0, "teardown removed the bind source's %s", q);
	at(q, sizeof q, base, "victim");
	ck_assert(lstat(q, &st) == 0);
	ck_assert_int_eq(v.nmnt, 0);
	/* The fixture's teardown runs vfs_teardown again: it must be harmless. */
}
END_TEST

START_TEST(test_setup_errors)
{
	char s2[PATH_MAX], err[512], file[PATH_MAX];
	at(s2, sizeof s2, base, "scratch2");
	ck_assert_int_eq(mkdir(s2, 0700), 0);
	const struct vfs_mount_req missing[] = {
		{ "/nonexistent/moat-unit-src", "/x", MNT_BIND, true, 0 },
	};
	memset(err, 0, sizeof err);
	int r = vfs_setup(&v2, s2, NULL, getuid(), getgid(), missing, 1, err, sizeof err);
	ck_assert_int_eq(r, -ENOENT);
	ck_assert_msg(strstr(err, "/nonexistent/moat-unit-src") != NULL, "err: \"%s\"", err);
	vfs_teardown(&v2);
	struct stat st;
	ck_assert_msg(lstat(s2, &st) < 0 && errno == ENOENT, "%s still there", s2);

	/* A file is not a directory to bind. */
	ck_assert_int_eq(mkdir(s2, 0700), 0);
	at(file, sizeof file, tree, "f");
	const struct vfs_mount_req notdir[] = { { file, "/x", MNT_BIND, true, 0 } };
	memset(err, 0, sizeof err);
	r = vfs_setup(&v2, s2, NULL, getuid(), getgid(), notdir, 1, err, sizeof err);
	ck_assert_int_eq(r, -ENOTDIR);
	ck_assert_msg(strstr(err, file) != NULL, "err: \"%s\"", err);
	vfs_teardown(&v2);
	ck_assert(lstat(s2, &st) < 0 && errno == ENOENT);

	/* More mounts than the table holds. */
	ck_assert_int_eq(mkdir(s2, 0700), 0);
	static struct vfs_mount_req many[VFS_MAX_MOUNTS];
	static char dst[VFS_MAX_MOUNTS][16];
	for (int i = 0; i < VFS_MAX_MOUNTS; i++) {
		snprintf(dst[i], sizeof dst[i], "/m%d", i);
		many[i] = (struct vfs_mount_req){ NULL, dst[i], MNT_TMPFS, false, 0 };
	}
	memset(err, 0, sizeof err);
	r = vfs_setup(&v2, s2, NULL, getuid(), getgid(), many, VFS_MAX_MOUNTS, err, sizeof err);
	ck_assert_int_eq(r, -ENOSPC);
	ck_assert_msg(strstr(err, "too many mounts") != NULL, "err: \"%s\"", err);
	vfs_teardown(&v2);
	ck_assert(lstat(s2, &st) < 0 && errno == ENOENT);
}
END_TEST

/* ---- the dentry cache must never change an answer ---- */

/* A walk's `parent` stays the directory it named until the walk is
 * released, however many other directories are walked meanwhile (rename
 * and link hold two walks at once).  8192 directories evict any cache of
 * 1024 entries, hashed (all but surely) or LRU.  On the tmpfs /tmp, which
 * is cached and writable: a parent fd reused for another directory would
 * rename or unlink there. */
START_TEST(test_parent_survives_other_walks)
{
	enum { NDIRS = 8192 };
	char tmp_host[PATH_MAX], host[PATH_MAX], path[PATH_MAX];
	at(tmp_host, sizeof tmp_host, scratch, "tmp");
	at(host, sizeof host, tmp_host, "many");
	ck_assert_int_eq(mkdir(host, 0755), 0);
	for (int i = 0; i < NDIRS; i++) {
		snprintf(path, sizeof path, "%s/d%d", host, i);
		ck_assert_int_eq(mkdir(path, 0755), 0);
	}
	at(host, sizeof host, tmp_host, "sub");
	ck_assert_int_eq(mkdir(host, 0755), 0);
	mk_file_in(host, "f", "f\n");
	struct stat got, want = host_st(host, false);

	struct vfs_path p1, p2;
	walk_ok("/", "/tmp/sub/f", 0, "/tmp/sub/f", &p1);
	ck_assert(fstat(p1.parent, &got) == 0 && same_node(&got, &want));
	for (int i = 0; i < NDIRS; i++) {
		snprintf(path, sizeof path, "/tmp/many/d%d/x", i);
		int r = walk("/", path, 0, &p2);
		ck_assert_msg(r == 0 && !p2.exists, "%s: %d", path, r);
		vfs_path_release(&p2);
	}
	int fr = fstat(p1.parent, &got);
	ck_assert_msg(fr == 0, "/tmp/sub/f: parent fd %d closed by later walks (%s)", p1.parent,
		      strerror(errno));
	ck_assert_msg(same_node(&got, &want),
		      "/tmp/sub/f: parent fd %d now names another node (ino %lu, want sub/ %lu)",
		      p1.parent, (unsigned long)got.st_ino, (unsigned long)want.st_ino);
	vfs_path_release(&p1);
	/* And the cache still answers for sub/ afterwards. */
	walk_ok("/", "/tmp/sub/f", 0, "/tmp/sub/f", &p1);
	ck_assert(fstat(p1.parent, &got) == 0 && same_node(&got, &want));
	vfs_path_release(&p1);
}
END_TEST

/* A directory moved on the host, under a bind, is gone from the view: a
 * remembered fd of it would show whatever the host moved it next to. */
START_TEST(test_host_rename_under_bind)
{
	struct vfs_path p;
	char from[PATH_MAX], to[PATH_MAX];
	at(from, sizeof from, tree, "sub");
	at(to, sizeof to, base, "moved");

	static const char *const mounts[] = { "/rw", "/data" };
	for (size_t k = 0; k < sizeof mounts / sizeof mounts[0]; k++) {
		char path[PATH_MAX];
		snprintf(path, sizeof path, "%s/sub/f", mounts[k]);
		walk_ok("/", path, 0, path, &p);
		vfs_path_release(&p);
		/* Out of the bound tree, and a new sub/ without f. */
		ck_assert_int_eq(rename(from, to), 0);
		ck_assert_int_eq(mkdir(from, 0755), 0);
		int r = walk("/", path, 0, &p);
		bool exists = r == 0 && p.exists;
		if (r == 0)
			vfs_path_release(&p);
		ck_assert_msg(r == 0 && !exists,
			      "%s after the host moved sub/ out of the bind: %d, exists %d "
			      "(a stale directory fd: the file is now outside the bound tree)",
			      path, r, exists);
		ck_assert_int_eq(rmdir(from), 0);
		ck_assert_int_eq(rename(to, from), 0);
	}
}
END_TEST

/* vfs_teardown forgets everything of the view: a new view in the same
 * struct (same mount slots) sees its own trees. */
START_TEST(test_teardown_forgets_walks)
{
	struct vfs_path p;
	walk_ok("/", "/data/sub/f", 0, "/data/sub/f", &p);
	vfs_path_release(&p);
	walk_ok("/", "/tmp", 0, "/tmp", &p);
	vfs_path_release(&p);
	vfs_teardown(&v);

	char tree2[PATH_MAX], p2[PATH_MAX], err[512] = "";
	at(tree2, sizeof tree2, base, "tree2");
	ck_assert_int_eq(mkdir(tree2, 0755), 0);
	at(p2, sizeof p2, tree2, "sub");
	ck_assert_int_eq(mkdir(p2, 0755), 0);
	mk_file_in(p2, "only2", "2\n");
	ck_assert_int_eq(mkdir(scratch, 0700), 0);
	const struct vfs_mount_req req[] = {
		{ tree2, "/data", MNT_BIND, true, 0 },
		{ tree, "/rw", MNT_BIND, false, 0 },
		{ NULL, "/scratch", MNT_TMPFS, false, 0 },
	};
	int r = vfs_setup(&v, scratch, NULL, getuid(), getgid(), req, 3, err, sizeof err);
	ck_assert_msg(r == 0, "vfs_setup: %s", err);

	walk_ok("/", "/data/sub/only2", 0, "/data/sub/only2", &p);
	vfs_path_release(&p);
	r = walk("/", "/data/sub/f", 0, &p);
	bool exists = r == 0 && p.exists;
	if (r == 0)
		vfs_path_release(&p);
	ck_assert_msg(r == 0 && !exists,
		      "/data/sub/f found in the new view: the old view's tree (%d, exists %d)", r,
		      exists);
}
END_TEST

/* ---- the registry ---- */


/* ---- the overlay: /ov is `tree` under a private layer ---- */

static char *read_all(int dirfd, const char *name, char *buf, size_t len)
{
	int fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC);
	ck_assert_msg(fd >= 0, "open %s: %s", name, strerror(errno));
	ssize_t n = read(fd, buf, len - 1);
	close(fd);
	ck_assert(n >= 0);
	buf[n] = '\0';
	return buf;
}

/* The names of virtual directory `vpath` as getdents64 on its granted fd
 * lists them, sorted, with a type letter each: "d:sub f:f l:lnk". */
static void listing(const char *vpath, char *out, size_t len)
{
	struct vfs_path p;
	walk_ok("/", vpath, VW_FOLLOW, vpath, &p);
	int fd = vfs_open(&v, NULL, &p, O_RDONLY | O_DIRECTORY, 0);
	ck_assert_msg(fd >= 0, "open %s: %s", vpath, strerror(-fd));
	vfs_path_release(&p);
	DIR *d = fdopendir(fd);
	ck_assert(d != NULL);
	char names[256][NAME_MAX + 3];
	int n = 0;
	struct dirent *de;
	while ((de = readdir(d)) && n < 256) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		char t = de->d_type == DT_DIR   ? 'd'
			 : de->d_type == DT_LNK ? 'l'
			 : de->d_type == DT_REG ? 'f'
						: '?';
		snprintf(names[n++], sizeof names[0], "%c:%s", t, de->d_name);
	}
	closedir(d);
	qsort(names, (size_t)n, sizeof names[0], (int (*)(const void *, const void *))strcmp);
	out[0] = '\0';
	for (int i = 0; i < n; i++) {
		strncat(out, names[i], len - strlen(out) - 1);
		if (i + 1 < n)
			strncat(out, " ", len - strlen(out) - 1);
	}
}

START_TEST(test_overlay_reads_lower)
{
	struct vfs_path p;
	walk_ok("/", "/ov/sub/f", 0, "/ov/sub/f", &p);
	ck_assert_int_eq(p.mnt->kind, MNT_OVERLAY);
	ck_assert(!p.upper);
	struct stat want = tree_st("sub/f", false);
	ck_assert(same_node(&p.st, &want));
	vfs_path_release(&p);
	/* Symlinks of the lower layer resolve in the view, as in a bind. */
	walk_ok("/", "/ov/sub/rel", VW_FOLLOW, "/ov/f", &p);
	vfs_path_release(&p);
}
END_TEST

START_TEST(test_overlay_copy_up_leaves_host)
{
	struct vfs_path p;
	walk_ok("/", "/ov/sub/f", 0, "/ov/sub/f", &p);
	struct stat lower = p.st;
	ck_assert_int_eq(vfs_make_writable(&v, &p, VC_CHANGE), 0);
	ck_assert(p.upper);
	int fd = vfs_open(&v, NULL, &p, O_WRONLY | O_TRUNC, 0);
	ck_assert_msg(fd >= 0, "open for writing: %s", strerror(-fd));
	ck_assert_int_eq(write(fd, "new\n", 4), 4);
	close(fd);
	vfs_path_release(&p);

	char buf[64];
	int tfd = open(tree, O_PATH | O_DIRECTORY | O_CLOEXEC);
	ck_assert_str_eq(read_all(tfd, "sub/f", buf, sizeof buf), "sub\n"); /* host unchanged */
	close(tfd);
	walk_ok("/", "/ov/sub/f", 0, "/ov/sub/f", &p);
	ck_assert(p.upper);
	ck_assert_str_eq(read_all(p.parent, p.name, buf, sizeof buf), "new\n");
	/* A file copy has its own identity (a file may be renamed or linked
	 * afterwards: its path would then name another file)... */
	struct stat st = p.st;
	ck_assert(!same_node(&st, &lower));
	vfs_origin(&p, &st);
	ck_assert(!same_node(&st, &lower));
	vfs_path_release(&p);

	/* The directory was copied up whole: every lower name, right types. */
	char list[1024];
	listing("/ov/sub", list, sizeof list);
	ck_assert_str_eq(list, "d:deep f:f f:g l:abs_in_root l:dotdot l:esc l:escp l:escv "
			       "l:hostabs l:hostesc l:rel");
	/* ...and the parent keeps its lower identity too. */
	walk_ok("/", "/ov/sub", 0, "/ov/sub", &p);
	ck_assert(p.upper);
	st = p.st;
	vfs_origin(&p, &st);
	struct stat tsub = tree_st("sub", false);
	ck_assert(same_node(&st, &tsub));
	vfs_path_release(&p);
}
END_TEST

START_TEST(test_overlay_unlink_is_absence)
{
	struct vfs_path p;
	walk_ok("/", "/ov/sub/g", 0, "/ov/sub/g", &p);
	ck_assert_int_eq(vfs_make_writable(&v, &p, VC_REMOVE), 0);
	ck_assert_int_eq(unlinkat(p.parent, p.name, 0), 0);
	vfs_path_release(&p);
	walk_missing("/", "/ov/sub/g", 0, "/ov/sub/g", &p);
	vfs_path_release(&p);
	(void)tree_st("sub/g", false); /* still on the host */
	char list[1024];
	listing("/ov/sub", list, sizeof list);
	ck_assert_ptr_null(strstr(list, "f:g"));
	ck_assert_ptr_nonnull(strstr(list, "f:f"));
}
END_TEST

START_TEST(test_overlay_create_deep)
{
	struct vfs_path p;
	/* Creating in a lower directory copies up the path to it. */
	walk_missing("/", "/ov/chain/end/new", 0, "/ov/chain/end/new", &p);
	ck_assert(!p.upper);
	ck_assert_int_eq(vfs_make_writable(&v, &p, VC_CREATE), 0);
	ck_assert(p.upper);
	int fd = openat(p.parent, p.name, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0644);
	ck_assert(fd >= 0);
	close(fd);
	vfs_path_release(&p);
	walk_ok("/", "/ov/chain/end/new", 0, "/ov/chain/end/new", &p);
	ck_assert(p.upper);
	vfs_path_release(&p);
	/* A sibling still in the lower layer is still the host's file. */
	walk_ok("/", "/ov/chain/end/leaf", 0, "/ov/chain/end/leaf", &p);
	ck_assert(!p.upper);
	struct stat want = tree_st("chain/end/leaf", false);
	ck_assert(same_node(&p.st, &want));
	vfs_path_release(&p);
	/* The chain of links in the copied-up directory still resolves. */
	walk_ok("/", "/ov/chain/l1/leaf", VW_FOLLOW, "/ov/chain/end/leaf", &p);
	vfs_path_release(&p);
	char path[PATH_MAX];
	at(path, sizeof path, tree, "chain/end/new");
	struct stat st;
	ck_assert_msg(lstat(path, &st) < 0, "the host's tree got the new file");
}
END_TEST

START_TEST(test_overlay_dirs)
{
	struct vfs_path p;
	/* A directory of the lower layer does not move (EXDEV, as overlayfs
	 * without redirect_dir); one made in the layer does. */
	walk_ok("/", "/ov/chain", 0, "/ov/chain", &p);
	ck_assert_int_eq(vfs_make_writable(&v, &p, VC_RENAME), -EXDEV);
	vfs_path_release(&p);
	/* rmdir: a non-empty lower directory stays; an empty one goes, and
	 * made again it is empty. */
	walk_ok("/", "/ov/sub", 0, "/ov/sub", &p);
	ck_assert_int_eq(vfs_make_writable(&v, &p, VC_REMOVE), -ENOTEMPTY);
	vfs_path_release(&p);
	walk_ok("/", "/ov/sub/deep", 0, "/ov/sub/deep", &p);
	ck_assert_int_eq(vfs_make_writable(&v, &p, VC_REMOVE), 0);
	ck_assert_int_eq(unlinkat(p.parent, p.name, AT_REMOVEDIR), 0);
	vfs_path_release(&p);
	walk_missing("/", "/ov/sub/deep", 0, "/ov/sub/deep", &p);
	ck_assert_int_eq(vfs_make_writable(&v, &p, VC_CREATE), 0);
	ck_assert_int_eq(mkdirat(p.parent, p.name, 0755), 0);
	vfs_path_release(&p);
	char list[256];
	listing("/ov/sub/deep", list, sizeof list);
	ck_assert_str_eq(list, "");
	(void)tree_st("sub/deep", false);
}
END_TEST

START_TEST(test_overlay_persist)
{
	char layer[PATH_MAX], err[512] = "";
	at(layer, sizeof layer, base, "layer");
	const struct vfs_mount_req req[] = { { tree, "/ov", MNT_OVERLAY, false, 0 } };
	for (int run = 0; run < 2; run++) {
		char s2[PATH_MAX];
		snprintf(s2, sizeof s2, "%s/s%d", base, run);
		ck_assert_int_eq(mkdir(s2, 0700), 0);
		int r = vfs_setup(&v2, s2, layer, getuid(), getgid(), req, 1, err, sizeof err);
		ck_assert_msg(r == 0, "vfs_setup: %s", err);
		struct vfs_path p;
		if (run == 0) {
			ck_assert_int_eq(vfs_walk(&v2, NULL, "/", "/ov/f", 0, &p), 0);
			ck_assert_int_eq(vfs_make_writable(&v2, &p, VC_REMOVE), 0);
			ck_assert_int_eq(unlinkat(p.parent, p.name, 0), 0);
			vfs_path_release(&p);
		} else {
			ck_assert_int_eq(vfs_walk(&v2, NULL, "/", "/ov/f", 0, &p), 0);
			ck_assert_msg(!p.exists, "the deletion did not persist");
			vfs_path_release(&p);
			ck_assert_int_eq(vfs_walk(&v2, NULL, "/", "/ov/lnk", 0, &p), 0);
			ck_assert(p.exists && S_ISLNK(p.st.st_mode));
			vfs_path_release(&p);
		}
		vfs_teardown(&v2);
	}
	(void)tree_st("f", false);
	/* A directory of the user's is never adopted as a layer. */
	char mine[PATH_MAX];
	at(mine, sizeof mine, base, "mine");
	ck_assert_int_eq(mkdir(mine, 0755), 0);
	mk_file_in(mine, "keep", "x");
	char s3[PATH_MAX];
	snprintf(s3, sizeof s3, "%s/s3", base);
	ck_assert_int_eq(mkdir(s3, 0700), 0);
	ck_assert_int_eq(vfs_setup(&v2, s3, mine, getuid(), getgid(), req, 1, err, sizeof err),
			 -ENOTEMPTY);
	vfs_teardown(&v2);
}
END_TEST

START_TEST(test_registry_round_trip)
{
	char path[32] = "/data/sub/f";
	ck_assert_ptr_null(reg_get(77, 1001));
	reg_put(77, 1001, path);
	path[1] = 'X'; /* the registry keeps its own copy */
	ck_assert_str_eq(reg_get(77, 1001), "/data/sub/f");
	ck_assert_ptr_null(reg_get(77, 1002));
	ck_assert_ptr_null(reg_get(78, 1001));
	ck_assert_ptr_null(reg_get(1001, 77));

	reg_put(77, 1001, "/rw/sub/f"); /* a rename: the newer meaning wins */
	ck_assert_str_eq(reg_get(77, 1001), "/rw/sub/f");
	reg_put(77, 1001, "/rw/sub/f");
	ck_assert_str_eq(reg_get(77, 1001), "/rw/sub/f");

	reg_put(0, 0, "/zero");
	ck_assert_str_eq(reg_get(0, 0), "/zero");
	ck_assert_str_eq(reg_get(77, 1001), "/rw/sub/f");
}
END_TEST

/* Memfds (synthetic files, symlink stand-ins) go to a bounded cache: a
 * flood of them keeps the supervisor's memory bounded, and the newest
 * meaning of each is found. */
START_TEST(test_registry_memfd_cache)
{
	int fd = memfd_create("unit", MFD_CLOEXEC);
	ck_assert(fd >= 0);
	struct stat st;
	ck_assert_int_eq(fstat(fd, &st), 0);
	reg_put_link(st.st_dev, st.st_ino, "/x/link");
	ck_assert_str_eq(reg_get_link(st.st_dev, st.st_ino), "/x/link");
	ck_assert_str_eq(reg_get(st.st_dev, st.st_ino), "/x/link");
	reg_put(st.st_dev, st.st_ino, "/proc/1/status"); /* not a link any more */
	ck_assert_ptr_null(reg_get_link(st.st_dev, st.st_ino));
	ck_assert_str_eq(reg_get(st.st_dev, st.st_ino), "/proc/1/status");
	/* 200000 other memfd inodes: the cache keeps at most its slots. */
	char buf[32];
	unsigned found = 0;
	for (unsigned i = 0; i < 200000; i++) {
		snprintf(buf, sizeof buf, "/f/%u", i);
		reg_put_link(st.st_dev, (ino_t)(st.st_ino + 1 + i), buf);
	}
	for (unsigned i = 0; i < 200000; i++)
		found += reg_get_link(st.st_dev, (ino_t)(st.st_ino + 1 + i)) != NULL;
	ck_assert_uint_le(found, 4096);
	ck_assert_uint_gt(found, 1000);
	close(fd);
}
END_TEST

START_TEST(test_registry_growth)
{
	enum { N = 20000 };
	char buf[64];
	for (int i = 0; i < N; i++) {
		snprintf(buf, sizeof buf, "/g/%d", i);
		reg_put((dev_t)(1000 + i % 7), (ino_t)(i * 3 + 5), buf);
	}
	for (int i = 0; i < N; i++) {
		snprintf(buf, sizeof buf, "/g/%d", i);
		const char *got = reg_get((dev_t)(1000 + i % 7), (ino_t)(i * 3 + 5));
		ck_assert_msg(got && strcmp(got, buf) == 0, "entry %d: %s", i,
			      got ? got : "(null)");
		ck_assert_ptr_null(reg_get((dev_t)(1000 + i % 7), (ino_t)(i * 3 + 6)));
		ck_assert_ptr_null(reg_get((dev_t)(1007 + i % 7), (ino_t)(i * 3 + 5)));
	}
	for (int i = 0; i < N; i += 2) {
		snprintf(buf, sizeof buf, "/h/%d", i);
		reg_put((dev_t)(1000 + i % 7), (ino_t)(i * 3 + 5), buf);
	}
	for (int i = 0; i < N; i++) {
		snprintf(buf, sizeof buf, i % 2 ? "/g/%d" : "/h/%d", i);
		const char *got = reg_get((dev_t)(1000 + i % 7), (ino_t)(i * 3 + 5));
		ck_assert_msg(got && strcmp(got, buf) == 0, "entry %d: %s", i,
			      got ? got : "(null)");
	}
}
END_TEST

/* ---- the walk's steps (walk.c), each through a path that needs it ---- */

/* walk_component: a component past NAME_MAX is refused, NAME_MAX is a name. */
START_TEST(test_step_component)
{
	char name[NAME_MAX + 2], path[NAME_MAX + 16], want[NAME_MAX + 16];
	memset(name, 'n', NAME_MAX + 1);
	name[NAME_MAX + 1] = '\0';
	snprintf(path, sizeof path, "/data/./%s", name);
	walk_err("/", path, 0, -ENAMETOOLONG, false);
	snprintf(path, sizeof path, "/data/./%s/x", name);
	walk_err("/", path, 0, -ENAMETOOLONG, false);
	name[NAME_MAX] = '\0';
	snprintf(path, sizeof path, "/data/./%s", name);
	snprintf(want, sizeof want, "/data/%s", name);
	struct vfs_path p;
	walk_missing("/", path, 0, want, &p);
	vfs_path_release(&p);
}
END_TEST

/* walk_mount_root: a mount point crossed in the slow walk is the mount's
 * root, from the table, and the next name is looked up below it. */
START_TEST(test_step_mount_root)
{
	struct vfs_path p;
	walk_ok("/", "/dev/./shm", 0, "/dev/shm", &p);
	ck_assert_int_eq(p.mnt->kind, MNT_TMPFS);
	ck_assert_str_eq(p.mnt->vpath, "/dev/shm");
	ck_assert_int_eq(p.parent, -1);
	ck_assert_str_eq(p.name, ".");
	vfs_path_release(&p);
	walk_missing("/", "/dev/./shm/new", 0, "/dev/shm/new", &p);
	ck_assert_str_eq(p.mnt->vpath, "/dev/shm");
	ck_assert_str_eq(p.rel, "new");
	ck_assert(p.parent >= 0);
	vfs_path_release(&p);
	walk_missing("/", "/usr/../dev/shm/new", 0, "/dev/shm/new", &p);
	ck_assert_str_eq(p.mnt->vpath, "/dev/shm");
	vfs_path_release(&p);
}
END_TEST

/* walk_proc and walk_end_dir in /proc: proc.c's names, a pid outside the
 * sandbox as a look outside, a file in the middle of a path. */
START_TEST(test_step_proc)
{
	struct vfs_path p;
	walk_ok("/", "/proc/meminfo", 0, "/proc/meminfo", &p);
	ck_assert_int_eq(p.kind, VN_PROC);
	ck_assert_str_eq(p.rel, "meminfo");
	ck_assert(S_ISREG(p.st.st_mode));
	vfs_path_release(&p);
	walk_ok("/", "/proc/sys/kernel/..", 0, "/proc/sys", &p);
	ck_assert_int_eq(p.kind, VN_PROC);
	ck_assert_str_eq(p.rel, "sys");
	ck_assert(S_ISDIR(p.st.st_mode));
	vfs_path_release(&p);
	walk_ok("/", "/proc/.", 0, "/proc", &p);
	ck_assert_int_eq(p.kind, VN_PROC);
	ck_assert_int_eq(p.parent, -1);
	vfs_path_release(&p);
	walk_missing("/", "/proc/nothere", 0, "/proc/nothere", &p);
	ck_assert_int_eq(p.kind, VN_PROC);
	ck_assert(!p.outside);
	vfs_path_release(&p);
	/* No task of the sandbox has pid 999999 (the unit test has none). */
	walk_missing("/", "/proc/999999", 0, "/proc/999999", &p);
	ck_assert(p.outside);
	vfs_path_release(&p);
	walk_err("/", "/proc/999999/status", 0, -ENOENT, true);
	walk_err("/", "/proc/meminfo/x", 0, -ENOTDIR, false);
}
END_TEST

/* walk_symlink: a splice longer than PATH_MAX is refused; a target that
 * ends in "." ends the walk in a directory (walk_end_dir, host side). */
START_TEST(test_step_symlink_splice)
{
	char target[3100];
	int n = snprintf(target, sizeof target, "sub");
	while (n < 3000)
		n += snprintf(target + n, sizeof target - (size_t)n, "/.");
	mk_link(target, "longlink");
	struct vfs_path p;
	walk_ok("/", "/data/longlink", VW_FOLLOW, "/data/sub", &p);
	ck_assert(S_ISDIR(p.st.st_mode));
	ck_assert_str_eq(p.name, "sub");
	parent_is(&p, ".");
	vfs_path_release(&p);
	walk_ok("/", "/data/longlink/f", 0, "/data/sub/f", &p);
	vfs_path_release(&p);
	char path[1400];
	n = snprintf(path, sizeof path, "/data/longlink");
	while (n < 1300)
		n += snprintf(path + n, sizeof path - (size_t)n, "/b");
	walk_err("/", path, 0, -ENAMETOOLONG, false);
}
END_TEST

/* walk_finish: under VW_LAST_NAME a trailing slash neither follows the
 * last component nor demands a directory (the caller rules on it). */
START_TEST(test_step_last_name)
{
	struct vfs_path p;
	walk_ok("/", "/data/f/", VW_LAST_NAME, "/data/f", &p);
	ck_assert(p.trailing_slash && S_ISREG(p.st.st_mode));
	vfs_path_release(&p);
	walk_ok("/", "/data/./f/", VW_LAST_NAME, "/data/f", &p); /* the slow walk */
	ck_assert(p.trailing_slash && S_ISREG(p.st.st_mode));
	vfs_path_release(&p);
	walk_ok("/", "/data/lnk/", VW_LAST_NAME | VW_FOLLOW, "/data/lnk", &p);
	ck_assert(S_ISLNK(p.st.st_mode));
	vfs_path_release(&p);
	walk_ok("/", "/data/lnk", VW_LAST_NAME | VW_FOLLOW, "/data/f", &p);
	ck_assert(S_ISREG(p.st.st_mode));
	vfs_path_release(&p);
}
END_TEST

/* fs_new_name (fs_walk_new_name's rules, fs.c): EEXIST, a denial
 * outside the view, ENOENT for "name/" but mkdir's, EROFS, and the
 * overlay's copy-up done now or left to the caller (FS_NEW_LATER). */
static void new_name_fails(const char *path, int how, enum verdict_kind kind, int err)
{
	struct vfs_path p;
	struct verdict vd;
	ck_assert_int_eq(walk("/", path, 0, &p), 0);
	ck_assert_msg(fs_new_name(&v, &p, how, &vd) == -1, "%s: a new name", path);
	ck_assert_msg(vd.kind == kind && vd.value == err, "%s: verdict %d %lld, want %d %d", path,
		      vd.kind, (long long)vd.value, kind, err);
	ck_assert_int_eq(p.parent, -1); /* released */
}

START_TEST(test_new_name)
{
	new_name_fails("/rw/f", 0, V_ERROR, EEXIST);
	new_name_fails("/rw/sub/", FS_NEW_SLASH, V_ERROR, EEXIST);
	new_name_fails("/root", 0, V_DENY, ENOENT);
	new_name_fails("/rw/newdir/", 0, V_ERROR, ENOENT);
	new_name_fails("/data/new", 0, V_ERROR, EROFS);
	new_name_fails("/proc/new", 0, V_ERROR, EROFS);

	struct vfs_path p;
	struct verdict vd;
	walk_missing("/", "/rw/newdir/", 0, "/rw/newdir", &p);
	ck_assert_int_eq(fs_new_name(&v, &p, FS_NEW_SLASH, &vd), 0);
	ck_assert_int_eq(mkdirat(p.parent, p.name, 0755), 0);
	vfs_path_release(&p);
	tree_st("newdir", false);

	walk_missing("/", "/ov/sub/new", 0, "/ov/sub/new", &p);
	ck_assert(!p.upper);
	ck_assert_int_eq(fs_new_name(&v, &p, FS_NEW_LATER, &vd), 0);
	ck_assert(!p.upper); /* nothing copied up yet */
	ck_assert_int_eq(fs_new_name(&v, &p, 0, &vd), 0);
	ck_assert(p.upper);
	ck_assert_int_eq(mkdirat(p.parent, p.name, 0755), 0);
	vfs_path_release(&p);
	walk_ok("/", "/ov/sub/new", 0, "/ov/sub/new", &p);
	ck_assert(p.upper);
	vfs_path_release(&p);
	char host[PATH_MAX];
	at(host, sizeof host, tree, "sub/new");
	struct stat st;
	ck_assert_msg(lstat(host, &st) < 0 && errno == ENOENT, "the overlay wrote to the host");
}
END_TEST

/* ---- exec resolution (fs-emulation/exec.c) ---- */

static struct exec_plan plan; /* large: static, never on the stack */

static int resolve(const char *from, const char *path, bool nofollow)
{
	return vfs_exec_resolve(&v, NULL, from, path, nofollow, &plan);
}

/* The plan's prefix is exactly `want` (n strings). */
static void prefix_is(const char *path, const char *const *want, int n)
{
	ck_assert_msg(plan.nprefix == n, "%s: %d prefix strings, want %d", path, plan.nprefix, n);
	for (int i = 0; i < n; i++)
		ck_assert_msg(strcmp(plan.prefix[i], want[i]) == 0,
			      "%s: prefix[%d] \"%s\", want \"%s\"", path, i, plan.prefix[i],
			      want[i]);
}

/* Refused with `err`, and with `rule` (NULL: an ordinary error) naming
 * `denied` as the path the refusal rests on. */
static void exec_err(const char *from, const char *path, bool nofollow, int err, const char *rule,
		     const char *denied)
{
	int r = resolve(from, path, nofollow);
	ck_assert_msg(r == err, "exec %s = %d (%s), want %d (%s)", path, r, strerror(-r), err,
		      strerror(-err));
	if (!rule) {
		ck_assert_msg(plan.deny_rule == NULL, "exec %s: rule %s", path, plan.deny_rule);
		return;
	}
	ck_assert_msg(plan.deny_rule && strcmp(plan.deny_rule, rule) == 0,
		      "exec %s: rule %s, want %s", path, plan.deny_rule ? plan.deny_rule : "(none)",
		      rule);
	ck_assert_str_eq(plan.denied_path, denied);
}

START_TEST(test_exec_elf)
{
	ck_assert_int_eq(resolve("/", "/usr/bin/true", false), 0);
	ck_assert_str_eq(plan.vpath, "/usr/bin/true");
	struct stat want = host_st("/usr/bin/true", true), got = host_st(plan.host, true);
	ck_assert(same_node(&got, &want));
	ck_assert(plan.dev == want.st_dev && plan.ino == want.st_ino);
	ck_assert_int_eq(plan.nprefix, 0);
	struct stat ld = host_st("/lib64/ld-linux-x86-64.so.2", true);
	ck_assert(plan.has_interp);
	ck_assert(plan.interp_dev == ld.st_dev && plan.interp_ino == ld.st_ino);
	ck_assert_ptr_null(plan.deny_rule);
	ck_assert(!plan.outside);

	/* Not ELF, not a script: the kernel's to refuse (ENOEXEC). */
	ck_assert_int_eq(resolve("/data", "lnk", false), 0);
	ck_assert_str_eq(plan.vpath, "/data/f");
	want = tree_st("f", true);
	ck_assert(plan.dev == want.st_dev && plan.ino == want.st_ino);
	ck_assert(!plan.has_interp);
	ck_assert_int_eq(plan.nprefix, 0);
}
END_TEST

START_TEST(test_exec_scripts)
{
	mk_file_in(tree, "s1", "#!/usr/bin/env  -S a b \t\nrest\n");
	mk_file_in(tree, "s2", "#!/data/s1 x\n");
	mk_file_in(tree, "s3", "#!\t/usr/bin/env\n");
	ck_assert_int_eq(resolve("/", "/data/s1", false), 0);
	static const char *const p1[] = { "/usr/bin/env", "-S a b", "/data/s1" };
	prefix_is("s1", p1, 3);
	ck_assert_str_eq(plan.vpath, "/usr/bin/env");
	ck_assert(plan.has_interp);

	/* A chain, named relatively: the outer interpreter first, each
	 * script as it was named. */
	ck_assert_int_eq(resolve("/data", "s2", false), 0);
	static const char *const p2[] = { "/usr/bin/env", "-S a b", "/data/s1", "x", "s2" };
	prefix_is("s2", p2, 5);
	ck_assert_str_eq(plan.vpath, "/usr/bin/env");

	ck_assert_int_eq(resolve("/", "/rw/s3", false), 0);
	static const char *const p3[] = { "/usr/bin/env", "/rw/s3" };
	prefix_is("s3", p3, 2);
}
END_TEST

START_TEST(test_exec_refused)
{
	mk_file_in(tree, "empty", "#!  \n");
	mk_file_in(tree, "sloop", "#!/data/sloop\n");
	mk_file_in(tree, "b1", "#!/data/b2 a\n");
	mk_file_in(tree, "b2", "#!/data/b3 a\n");
	mk_file_in(tree, "b3", "#!/data/b4 a\n");
	mk_file_in(tree, "b4", "#!/usr/bin/env a\n");
	mk_file_in(tree, "far", "#!/root/interp\n");
	exec_err("/", "/data/empty", false, -ENOEXEC, NULL, NULL);
	exec_err("/", "/data/sloop", false, -ELOOP, NULL, NULL);
	exec_err("/", "/data/b1", false, -E2BIG, NULL, NULL);
	exec_err("/", "/data/far", false, -ENOENT, "fs.outside-view", "/root/interp");
	exec_err("/", "/root/x", false, -ENOENT, "fs.outside-view", "/root/x");
	ck_assert(plan.outside);
	exec_err("/", "/data/sub", false, -EACCES, NULL, NULL);
	exec_err("/", "/data/nothere", false, -ENOENT, NULL, NULL);
	exec_err("/", "/data/lnk", true, -ELOOP, NULL, NULL);
	exec_err("/", "/data/dang", false, -ENOENT, NULL, NULL);
}
END_TEST

static Suite *vfs_suite(void)
{
	Suite *s = suite_create("fs-emulation");
	TCase *walk_tc = tcase_create("walk");
	tcase_add_checked_fixture(walk_tc, setup, teardown);
	tcase_add_test(walk_tc, test_absolute);
	tcase_add_test(walk_tc, test_relative);
	tcase_add_test(walk_tc, test_squeeze);
	tcase_add_test(walk_tc, test_trailing_slash);
	tcase_add_test(walk_tc, test_dotdot_stops_at_root);
	tcase_add_test(walk_tc, test_symlink_relative);
	tcase_add_test(walk_tc, test_symlink_absolute_is_virtual);
	tcase_add_test(walk_tc, test_symlink_escape_stays_inside);
	tcase_add_test(walk_tc, test_symlink_chain);
	tcase_add_test(walk_tc, test_symlink_loops);
	tcase_add_test(walk_tc, test_follow_or_not);
	tcase_add_test(walk_tc, test_outside_view);
	tcase_add_test(walk_tc, test_etc_secrets_hidden);
	tcase_add_test(walk_tc, test_missing_final);
	tcase_add_test(walk_tc, test_private_dir);
	tcase_add_test(walk_tc, test_beneath);
	tcase_add_test(walk_tc, test_in_root);
	tcase_add_test(walk_tc, test_no_symlinks);
	tcase_add_test(walk_tc, test_no_xdev);
	tcase_add_test(walk_tc, test_no_xdev_dotdot_and_absolute);
	suite_add_tcase(s, walk_tc);

	TCase *step_tc = tcase_create("steps");
	tcase_add_checked_fixture(step_tc, setup, teardown);
	tcase_add_test(step_tc, test_step_component);
	tcase_add_test(step_tc, test_step_mount_root);
	tcase_add_test(step_tc, test_step_proc);
	tcase_add_test(step_tc, test_step_symlink_splice);
	tcase_add_test(step_tc, test_step_last_name);
	tcase_add_test(step_tc, test_new_name);
	suite_add_tcase(s, step_tc);

	TCase *mnt_tc = tcase_create("mount");
	tcase_add_checked_fixture(mnt_tc, setup, teardown);
	tcase_add_test(mnt_tc, test_mount_roots);
	tcase_add_test(mnt_tc, test_top_dirs_mirror_host);
	tcase_add_test(mnt_tc, test_mount_of);
	tcase_add_test(mnt_tc, test_host_path);
	tcase_add_test(mnt_tc, test_overlay_reads_lower);
	tcase_add_test(mnt_tc, test_overlay_copy_up_leaves_host);
	tcase_add_test(mnt_tc, test_overlay_unlink_is_absence);
	tcase_add_test(mnt_tc, test_overlay_create_deep);
	tcase_add_test(mnt_tc, test_overlay_dirs);
	tcase_add_test(mnt_tc, test_overlay_persist);
	tcase_add_test(mnt_tc, test_teardown_removes_scratch);
	tcase_add_test(mnt_tc, test_setup_errors);
	suite_add_tcase(s, mnt_tc);

	TCase *cache_tc = tcase_create("cache");
	tcase_add_checked_fixture(cache_tc, setup, teardown);
	tcase_set_timeout(cache_tc, 60); /* 8k directories made and walked */
	tcase_add_test(cache_tc, test_parent_survives_other_walks);
	tcase_add_test(cache_tc, test_host_rename_under_bind);
	tcase_add_test(cache_tc, test_teardown_forgets_walks);
	suite_add_tcase(s, cache_tc);

	TCase *exec_tc = tcase_create("exec");
	tcase_add_checked_fixture(exec_tc, setup, teardown);
	tcase_add_test(exec_tc, test_exec_elf);
	tcase_add_test(exec_tc, test_exec_scripts);
	tcase_add_test(exec_tc, test_exec_refused);
	suite_add_tcase(s, exec_tc);

	TCase *reg_tc = tcase_create("registry");
	tcase_add_test(reg_tc, test_registry_round_trip);
	tcase_add_test(reg_tc, test_registry_growth);
	tcase_add_test(reg_tc, test_registry_memfd_cache);
	suite_add_tcase(s, reg_tc);
	return s;
}

int main(void)
{
	snprintf(run_dir, sizeof run_dir, "/tmp/moat-unit-XXXXXX");
	if (!mkdtemp(run_dir)) {
		perror("mkdtemp /tmp/moat-unit-XXXXXX");
		return EXIT_FAILURE;
	}
	SRunner *sr = srunner_create(vfs_suite());

	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	rm_rf(run_dir);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
