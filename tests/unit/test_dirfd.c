/* Dirfds and the cwd resolved through facts (fs-emulation/fs.c): "the
 * directory (dev, ino) through mount M is at host path H", checked against
 * the statx made anyway, so that most resolutions need no readlink of
 * /proc/TID/fd/N.
 *
 * This process plays the sandbox: its own fds are the dirfds, resolved
 * through its own /proc/self/fd (c.tid is our tid), and a "grant" is a dup
 * of moat's fd, as ADDFD installs the same file.  Each test gets a fresh
 * view: a host tree bound at /data (a --bind: the host may change it), a
 * tmpfs at /scratch and an overlay of the same tree at /ov (trees that
 * change through moat alone).  Facts must answer exactly what the readlink
 * would, whatever the sandbox does with its fd numbers, and never outlive
 * a move or removal moat makes.  A move behind moat's back (on the host)
 * in a tree moat owns is not seen while a fact holds: that is the trust
 * the dentry cache already places in those trees, and the tests below use
 * it to tell a fact's answer from the readlink's. */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/call.h"
#include "core/task.h"
#include "fs-emulation/fs.h"
#include "fs-emulation/vfs.h"

static struct vfs v;        /* large: static, never on the stack */
static char base[PATH_MAX]; /* mkdtemp: holds everything below */
static char tree[PATH_MAX]; /* the host tree of /data and /ov */
static char scr[PATH_MAX];  /* the host directory of /scratch */
static char run_dir[PATH_MAX];
static struct call c; /* the calls of the "sandbox": us */

static void at(char *buf, size_t len, const char *dir, const char *rel)
{
	int n = snprintf(buf, len, "%s/%s", dir, rel);
	ck_assert_msg(n > 0 && (size_t)n < len, "path too long: %s/%s", dir, rel);
}

static void mk(const char *dir, const char *rel)
{
	char p[PATH_MAX];
	at(p, sizeof p, dir, rel);
	ck_assert_msg(mkdir(p, 0755) == 0, "mkdir %s: %s", p, strerror(errno));
}

/* A move on the host, behind moat's back. */
static void host_mv(const char *dir, const char *from, const char *to)
{
	char a[PATH_MAX], b[PATH_MAX];
	at(a, sizeof a, dir, from);
	at(b, sizeof b, dir, to);
	ck_assert_msg(rename(a, b) == 0, "rename %s %s: %s", a, b, strerror(errno));
}

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)ftw;
	if (flag == FTW_DP || flag == FTW_D || flag == FTW_DNR)
		rmdir(path);
	else
		unlink(path);
	return 0;
}

static void setup(void)
{
	snprintf(base, sizeof base, "%s/XXXXXX", run_dir);
	ck_assert_msg(mkdtemp(base) != NULL, "mkdtemp: %s", strerror(errno));
	char p[PATH_MAX], scratch[PATH_MAX];
	at(p, sizeof p, base, "tree");
	ck_assert_int_eq(mkdir(p, 0755), 0);
	ck_assert_msg(realpath(p, tree) != NULL, "realpath %s", p);
	mk(tree, "a");
	mk(tree, "a/b");
	mk(base, "outside"); /* a host directory outside the view */
	at(scratch, sizeof scratch, base, "scratch");
	ck_assert_int_eq(mkdir(scratch, 0700), 0);
	const struct vfs_mount_req req[] = {
		{ tree, "/data", MNT_BIND, true, 0 },
		{ NULL, "/scratch", MNT_TMPFS, false, 0 },
		{ tree, "/ov", MNT_OVERLAY, false, 0 },
	};
	char err[512] = "";
	int r = vfs_setup(&v, scratch, NULL, getuid(), getgid(), req, 3, err, sizeof err);
	ck_assert_msg(r == 0, "vfs_setup: %d %s", r, err);
	snprintf(scr, sizeof scr, "%s", vfs_mount_of(&v, "/scratch")->host);
	mk(scr, "d");
	mk(scr, "d/e");
	mk(scr, "p");
	mk(scr, "p/q");

	struct fsctx *fs = fsctx_new("/");
	ck_assert_ptr_nonnull(fs);
	struct proc *pr = proc_new(getpid(), fs, true);
	free(fs);
	ck_assert_ptr_nonnull(pr);
	memset(&c, 0, sizeof c);
	c.tid = (pid_t)syscall(SYS_gettid);
	c.task = task_add(c.tid, pr);
	ck_assert_ptr_nonnull(c.task);
	c.vfs = &v;
	c.notify_fd = -1;
}

static void teardown(void)
{
	vfs_teardown(&v);
	nftw(base, rm_entry, 32, FTW_DEPTH | FTW_PHYS | FTW_MOUNT);
}

/* A new call `nr` of ours.  Handlers resolve dirfds inside fs_walk_str,
 * which notes whether the call may move a directory: a walk of "/" by a
 * call that does not starts each call here (the handler's own walks
 * follow). */
static void call(int nr)
{
	c.id++;
	c.nr = SYS_newfstatat;
	struct vfs_path p;
	ck_assert_int_eq(fs_walk_str(&c, -1, "/", -1, 0, &p), 0);
	vfs_path_release(&p);
	c.nr = nr;
}

/* openat(dirfd, path, O_DIRECTORY) as moat serves it: the walk, moat's
 * open, the grant (our fd: the same file) and its note.  Our fd. */
static int open_dir(int dirfd, const char *path)
{
	call(SYS_openat);
	c.arg[0] = (uint64_t)(int64_t)dirfd;
	struct vfs_path p;
	int r = fs_walk_str(&c, 0, path, 0, VW_FOLLOW, &p);
	ck_assert_msg(r == 0 && p.exists, "walk %s: %d", path, r);
	int mine = vfs_open(&v, c.task, &p, O_RDONLY | O_DIRECTORY, 0);
	vfs_path_release(&p);
	ck_assert_msg(mine >= 0, "open %s: %d", path, mine);
	int fd = fcntl(mine, F_DUPFD_CLOEXEC, 100);
	ck_assert_int_ge(fd, 0);
	fs_note_grant(&c, mine);
	close(mine);
	return fd;
}

/* What dirfd `fd` resolves to, in a new call: 0 or -errno, *out. */
static int base_of(int fd, char *out, size_t len)
{
	call(SYS_newfstatat);
	return fs_dirfd_base(&c, fd, out, len);
}

static void base_is(int fd, const char *want, const char *why)
{
	char got[PATH_MAX] = "";
	int r = base_of(fd, got, sizeof got);
	ck_assert_msg(r == 0 && strcmp(got, want) == 0,
		      "%s: fd %d resolves to %d \"%s\", want \"%s\"", why, fd, r, got, want);
}

/* A call that moves or removes directory `vpath`: its walk, as rename's
 * or rmdir's (then the host change, as moat would make it). */
static void moving_walk(int nr, const char *vpath)
{
	call(nr);
	struct vfs_path p;
	int r = fs_walk_str(&c, -1, vpath, 0, 0, &p);
	ck_assert_msg(r == 0 && p.exists, "walk %s: %d", vpath, r);
	vfs_path_release(&p);
}

/* A granted directory of a tree moat owns: the fact answers. */
START_TEST(test_grant_gives_fact)
{
	int top = open_dir(AT_FDCWD, "/scratch");
	int d = open_dir(top, "d");
	base_is(d, "/scratch/d", "granted");
	base_is(d, "/scratch/d", "again");
	host_mv(scr, "d", "d2");
	base_is(d, "/scratch/d", "the fact, not the readlink");
	/* A directory opened by path (not from a dirfd) gets no fact at its
	 * grant: its first use reads the link, checks it, and keeps it. */
	int e = open_dir(AT_FDCWD, "/scratch/d2/e");
	base_is(e, "/scratch/d2/e", "first use");
	host_mv(scr, "d2", "d3");
	base_is(e, "/scratch/d2/e", "kept at the first use");
	close(top), close(d), close(e);
}
END_TEST

/* A handler may grant another file than the one it walked (a filtered
 * listing's copy, for one): the note must not take the walk's path for
 * it.  Here the call walks `path` and grants our fd `other`. */
START_TEST(test_grant_of_another_dir)
{
	int top = open_dir(AT_FDCWD, "/scratch");
	char host[PATH_MAX];
	at(host, sizeof host, scr, "p");
	int other = open(host, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	ck_assert_int_ge(other, 0);
	call(SYS_openat);
	c.arg[0] = (uint64_t)(int64_t)top;
	struct vfs_path w;
	ck_assert_int_eq(fs_walk_str(&c, 0, "d", 0, VW_FOLLOW, &w), 0);
	vfs_path_release(&w);
	fs_note_grant(&c, other);
	host_mv(scr, "p", "p2");
	base_is(other, "/scratch/p2", "the granted directory, not the walked one");
	close(top), close(other);
}
END_TEST

/* A --bind's tree is the host's: never a fact, every move seen. */
START_TEST(test_bind_never_kept)
{
	int top = open_dir(AT_FDCWD, "/data");
	int a = open_dir(top, "a");
	base_is(a, "/data/a", "granted");
	host_mv(tree, "a", "a2");
	base_is(a, "/data/a2", "moved on the host");
	base_is(top, "/data", "the bind's root");
	close(top), close(a);
}
END_TEST

/* One host directory at two places in the view: /ov's lower layer is the
 * tree /data shows, and the kernel's name for it maps back to /data (the
 * readlink's answer, which a fact must not change).  No fact is kept for
 * a directory of /data, so /ov's are resolved by readlink too. */
START_TEST(test_two_places_not_kept)
{
	int top = open_dir(AT_FDCWD, "/ov");
	int a = open_dir(top, "a");
	char before[PATH_MAX];
	ck_assert_int_eq(base_of(a, before, sizeof before), 0);
	base_is(a, before, "again");
	host_mv(tree, "a", "a2");
	char after[PATH_MAX];
	ck_assert_int_eq(base_of(a, after, sizeof after), 0);
	ck_assert_msg(strcmp(before, after) != 0, "a fact was kept for %s", before);
	close(top), close(a);
}
END_TEST

/* The sandbox puts another directory on a number that had a fact. */
START_TEST(test_number_reused)
{
	int top = open_dir(AT_FDCWD, "/scratch");
	int d = open_dir(top, "d"), p = open_dir(top, "p");
	base_is(d, "/scratch/d", "d");
	ck_assert_int_eq(dup2(p, d), d);
	base_is(d, "/scratch/p", "dup2 of p onto d's number");
	close(d);
	int q = open_dir(p, "q");
	ck_assert_int_eq(dup2(q, d), d);
	base_is(d, "/scratch/p/q", "a number closed and taken again");
	/* A file where a directory was: ENOTDIR, as the kernel says. */
	char f[PATH_MAX];
	at(f, sizeof f, base, "file");
	int ff = open(f, O_CREAT | O_RDWR | O_CLOEXEC, 0600);
	ck_assert_int_ge(ff, 0);
	ck_assert_int_eq(dup2(ff, d), d);
	char got[PATH_MAX];
	ck_assert_int_eq(base_of(d, got, sizeof got), -ENOTDIR);
	close(top), close(d), close(p), close(q), close(ff);
}
END_TEST

/* A directory moat never granted (outside the view) on a number that had
 * a fact means nothing: refused, never the fact's place. */
START_TEST(test_foreign_dir_means_nothing)
{
	int top = open_dir(AT_FDCWD, "/scratch");
	int d = open_dir(top, "d");
	base_is(d, "/scratch/d", "d");
	char out[PATH_MAX];
	at(out, sizeof out, base, "outside");
	int foreign = open(out, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	ck_assert_int_ge(foreign, 0);
	ck_assert_int_eq(dup2(foreign, d), d);
	char got[PATH_MAX] = "";
	int r = base_of(d, got, sizeof got);
	ck_assert_msg(r == -EACCES, "a foreign directory resolves to %d \"%s\"", r, got);
	close(top), close(d), close(foreign);
}
END_TEST

/* moat moves a directory above the dirfd's: no fact outlives it, and
 * none is taken while the moving call runs (it sees the old place). */
START_TEST(test_parent_moved)
{
	int top = open_dir(AT_FDCWD, "/scratch");
	int p = open_dir(top, "p");
	int q = open_dir(p, "q");
	base_is(q, "/scratch/p/q", "q");
	moving_walk(SYS_renameat, "/scratch/p");
	/* renameat(top, "p", top, "r"): its second walk resolves the dirfd
	 * in the same call, before the move. */
	char got[PATH_MAX];
	ck_assert_int_eq(fs_dirfd_base(&c, q, got, sizeof got), 0);
	ck_assert_str_eq(got, "/scratch/p/q");
	host_mv(scr, "p", "r");
	mk(scr, "p");
	mk(scr, "p/q");
	base_is(q, "/scratch/r/q", "after the move");
	base_is(p, "/scratch/r", "the moved directory itself");
	close(top), close(p), close(q);
}
END_TEST

/* moat removes the directory: the dirfd is a removed one (ENOENT, and
 * where it was), even with a new directory of the same name. */
START_TEST(test_removed)
{
	int top = open_dir(AT_FDCWD, "/scratch");
	int e = open_dir(top, "d/e");
	base_is(e, "/scratch/d/e", "e");
	moving_walk(SYS_rmdir, "/scratch/d/e");
	char host[PATH_MAX];
	at(host, sizeof host, scr, "d/e");
	ck_assert_int_eq(rmdir(host), 0);
	mk(scr, "d/e");
	char got[PATH_MAX] = "";
	ck_assert_int_eq(base_of(e, got, sizeof got), -ENOENT);
	ck_assert_str_eq(got, "/scratch/d/e");
	close(top), close(e);
}
END_TEST

/* unlinkat with AT_REMOVEDIR may remove a directory: every fact goes
 * stale; without it, it removes none (EISDIR) and facts stand. */
START_TEST(test_unlinkat_removedir)
{
	int top = open_dir(AT_FDCWD, "/scratch");
	int d = open_dir(top, "d");
	base_is(d, "/scratch/d", "d");
	c.arg[2] = 0;
	moving_walk(SYS_unlinkat, "/scratch/p");
	host_mv(scr, "d", "d2");
	base_is(d, "/scratch/d", "unlinkat of a directory without AT_REMOVEDIR");
	c.arg[2] = AT_REMOVEDIR;
	moving_walk(SYS_unlinkat, "/scratch/p");
	c.arg[2] = 0;
	base_is(d, "/scratch/d2", "unlinkat(AT_REMOVEDIR)");
	close(top), close(d);
}
END_TEST
/* A file moved or removed leaves the facts of directories standing. */
START_TEST(test_file_moves_keep_facts)
{
	int top = open_dir(AT_FDCWD, "/scratch");
	int d = open_dir(top, "d");
	base_is(d, "/scratch/d", "d");
	char f[PATH_MAX];
	at(f, sizeof f, scr, "d/f");
	int ff = open(f, O_CREAT | O_WRONLY | O_CLOEXEC, 0600);
	ck_assert_int_ge(ff, 0);
	close(ff);
	call(SYS_unlinkat);
	struct vfs_path p;
	ck_assert_int_eq(fs_walk_str(&c, -1, "/scratch/d/f", 0, 0, &p), 0);
	vfs_path_release(&p);
	host_mv(scr, "d", "d2");
	base_is(d, "/scratch/d", "a file's unlink: the fact stands");
	close(top), close(d);
}
END_TEST

/* A child with our fd table copied: the fact is the directory's, so it
 * answers for the child's fd too. */
START_TEST(test_fork_child)
{
	int top = open_dir(AT_FDCWD, "/scratch");
	int d = open_dir(top, "d");
	int go[2];
	ck_assert_int_eq(pipe(go), 0);
	pid_t kid = fork();
	ck_assert_int_ge(kid, 0);
	if (kid == 0) {
		char b;
		close(go[1]);
		while (read(go[0], &b, 1) < 0)
			;
		_exit(0);
	}
	close(go[0]);
	char got[PATH_MAX] = "";
	struct stat st;
	ck_assert_int_eq(fs_task_fd_vpath(&v, kid, d, got, sizeof got, &st), 0);
	ck_assert_str_eq(got, "/scratch/d");
	host_mv(scr, "d", "d2");
	ck_assert_int_eq(fs_task_fd_vpath(&v, kid, d, got, sizeof got, &st), 0);
	ck_assert_str_eq(got, "/scratch/d");
	close(go[1]);
	waitpid(kid, NULL, 0);
	close(top), close(d);
}
END_TEST

/* The cwd: asked once, then known until moat moves a directory. */
START_TEST(test_cwd)
{
	char host[PATH_MAX];
	at(host, sizeof host, scr, "p/q");
	int fd = open(host, O_PATH | O_DIRECTORY | O_CLOEXEC);
	ck_assert_int_ge(fd, 0);
	call(SYS_chdir);
	fs_set_cwd(&c, "/scratch/p/q", fd);
	const char *cwd;
	ck_assert_int_eq(fs_cwd(&c, &cwd), 0);
	ck_assert_str_eq(cwd, "/scratch/p/q");
	host_mv(scr, "p", "r");
	ck_assert_int_eq(fs_cwd(&c, &cwd), 0);
	ck_assert_str_eq(cwd, "/scratch/p/q"); /* known: not asked again */
	moving_walk(SYS_renameat, "/scratch/r");
	call(SYS_getcwd);
	ck_assert_int_eq(fs_cwd(&c, &cwd), 0);
	ck_assert_str_eq(cwd, "/scratch/r/q");
	/* In a --bind, asked every time. */
	int b = open(tree, O_PATH | O_DIRECTORY | O_CLOEXEC);
	ck_assert_int_ge(b, 0);
	fs_set_cwd(&c, "/data", b);
	ck_assert_int_eq(fs_cwd(&c, &cwd), 0);
	ck_assert_str_eq(cwd, "/data");
	ck_assert_int_eq(fs_cwd(&c, &cwd), 0);
	ck_assert_str_eq(cwd, "/data");
}
END_TEST

/* The same directory through another kernel mount (a bind mount outside
 * the view): the same (dev, ino), another mount id, and a host path
 * outside every mount — it means nothing, whatever fact its number had. */
START_TEST(test_other_mount_means_nothing)
{
	if (unshare(CLONE_NEWNS) < 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0) {
		fprintf(stderr,
			"# test_other_mount_means_nothing: no mount namespace (%s): skipped\n",
			strerror(errno));
		return;
	}
	char d[PATH_MAX], alias[PATH_MAX];
	at(d, sizeof d, scr, "d");
	at(alias, sizeof alias, base, "outside");
	ck_assert_msg(mount(d, alias, NULL, MS_BIND, NULL) == 0, "bind %s: %s", d, strerror(errno));
	int top = open_dir(AT_FDCWD, "/scratch");
	int fd = open_dir(top, "d");
	base_is(fd, "/scratch/d", "d");
	int other = open(alias, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	ck_assert_int_ge(other, 0);
	struct stat a, b;
	ck_assert(fstat(fd, &a) == 0 && fstat(other, &b) == 0);
	ck_assert(a.st_dev == b.st_dev && a.st_ino == b.st_ino);
	ck_assert_int_eq(dup2(other, fd), fd);
	char got[PATH_MAX] = "";
	int r = base_of(fd, got, sizeof got);
	ck_assert_msg(r == -EACCES, "the same directory through another mount: %d \"%s\"", r, got);
	umount2(alias, MNT_DETACH);
	close(top), close(fd), close(other);
}
END_TEST

/* A sibling thread swaps the number between the statx and the readlink
 * of a resolution: the path read is another directory's, and must not be
 * kept as the first one's.  Each round starts with no fact (a moving
 * walk), races one resolution, then asks with the number held still. */
static atomic_int flip_stop;
static int flip_fd, flip_a, flip_b;

static void *flipper(void *arg)
{
	(void)arg;
	while (!atomic_load(&flip_stop)) {
		dup2(flip_a, flip_fd);
		dup2(flip_b, flip_fd);
	}
	return NULL;
}

START_TEST(test_swap_race)
{
	int top = open_dir(AT_FDCWD, "/scratch");
	flip_a = open_dir(top, "d");
	flip_b = open_dir(top, "p");
	flip_fd = fcntl(flip_a, F_DUPFD_CLOEXEC, 200);
	char got[PATH_MAX];
	for (int round = 0; round < 300; round++) {
		moving_walk(SYS_rmdir, "/scratch/d/e"); /* every fact stale */
		atomic_store(&flip_stop, 0);
		pthread_t t;
		ck_assert_int_eq(pthread_create(&t, NULL, flipper, NULL), 0);
		for (int i = 0; i < 4; i++)
			base_of(flip_fd, got, sizeof got);
		atomic_store(&flip_stop, 1);
		pthread_join(t, NULL);
		ck_assert_int_eq(dup2(flip_a, flip_fd), flip_fd);
		base_is(flip_fd, "/scratch/d", "after the race, d held still");
		ck_assert_int_eq(dup2(flip_b, flip_fd), flip_fd);
		base_is(flip_fd, "/scratch/p", "after the race, p held still");
	}
	close(top), close(flip_a), close(flip_b), close(flip_fd);
}
END_TEST

static Suite *dirfd_suite(void)
{
	Suite *s = suite_create("dirfd");
	TCase *tc = tcase_create("facts");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_grant_gives_fact);
	tcase_add_test(tc, test_grant_of_another_dir);
	tcase_add_test(tc, test_bind_never_kept);
	tcase_add_test(tc, test_two_places_not_kept);
	tcase_add_test(tc, test_number_reused);
	tcase_add_test(tc, test_foreign_dir_means_nothing);
	tcase_add_test(tc, test_parent_moved);
	tcase_add_test(tc, test_removed);
	tcase_add_test(tc, test_unlinkat_removedir);
	tcase_add_test(tc, test_file_moves_keep_facts);
	tcase_add_test(tc, test_fork_child);
	tcase_add_test(tc, test_cwd);
	tcase_add_test(tc, test_other_mount_means_nothing);
	tcase_add_test(tc, test_swap_race);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	snprintf(run_dir, sizeof run_dir, "/tmp/moat-unit-XXXXXX");
	if (!mkdtemp(run_dir)) {
		perror("mkdtemp /tmp/moat-unit-XXXXXX");
		return EXIT_FAILURE;
	}
	SRunner *sr = srunner_create(dirfd_suite());
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	nftw(run_dir, rm_entry, 32, FTW_DEPTH | FTW_PHYS | FTW_MOUNT);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
