/* The run's directories held for a moat that ends without its teardown
 * (fs-emulation/scratch.c): scratch_abandon removes each held tree
 * whole, follows no link out of it, leaves what was forgotten, and
 * removes a directory once however many callers come. */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fs-emulation/scratch.h"

static char base[PATH_MAX]; /* each test's own directory, outside any held tree */

static void setup(void)
{
	const char *t = getenv("TMPDIR");
	snprintf(base, sizeof base, "%s/scratch-test-XXXXXX", t && *t ? t : "/tmp");
	ck_assert_ptr_nonnull(mkdtemp(base));
}

static void teardown(void)
{
	char cmd[PATH_MAX + 32];
	snprintf(cmd, sizeof cmd, "chmod -R u+rwx '%s'; rm -rf '%s'", base, base);
	ck_assert_int_eq(system(cmd), 0);
}

static void path_of(char *out, const char *rel)
{
	snprintf(out, PATH_MAX, "%s/%s", base, rel);
}

static void mk_dir(const char *rel, mode_t mode)
{
	char p[PATH_MAX];
	path_of(p, rel);
	ck_assert_int_eq(mkdir(p, 0700), 0);
	ck_assert_int_eq(chmod(p, mode), 0);
}

static void mk_file(const char *rel, const char *text)
{
	char p[PATH_MAX];
	path_of(p, rel);
	FILE *f = fopen(p, "w");
	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	fclose(f);
}

static bool there(const char *rel)
{
	char p[PATH_MAX];
	struct stat st;
	path_of(p, rel);
	return lstat(p, &st) == 0;
}

/* A scratch as a run leaves it: nested directories, files, a FIFO, links
 * out of the tree (to a file and to a directory), directories the sandbox
 * made unreadable or search-only. */
static void make_tree(const char *top)
{
	char r[PATH_MAX], p[PATH_MAX], q[PATH_MAX];
#define R(sub) (snprintf(r, sizeof r, "%s/%s", top, sub), r)
	mk_dir(top, 0710);
	mk_dir(R("tmp"), 01777);
	mk_dir(R("tmp/a"), 0755);
	mk_dir(R("tmp/a/b"), 0755);
	mk_dir(R("tmp/a/b/c"), 0755);
	mk_file(R("tmp/a/b/c/f"), "deep\n");
	mk_file(R("tmp/f"), "top\n");
	mk_dir(R("tmp/locked"), 0700);
	mk_file(R("tmp/locked/f"), "locked\n");
	path_of(p, R("tmp/locked"));
	ck_assert_int_eq(chmod(p, 0), 0);
	mk_dir(R("empty"), 0111);
	path_of(p, R("tmp/fifo"));
	ck_assert_int_eq(mkfifo(p, 0600), 0);
	path_of(q, "outside");
	path_of(p, R("tmp/to-dir"));
	ck_assert_int_eq(symlink(q, p), 0);
	path_of(q, "outside/keep");
	path_of(p, R("tmp/to-file"));
	ck_assert_int_eq(symlink(q, p), 0);
#undef R
}

START_TEST(test_abandon_removes_held_tree)
{
	char p[PATH_MAX];
	mk_dir("outside", 0755);
	mk_file("outside/keep", "host\n");
	make_tree("scratch");
	make_tree("skel");
	path_of(p, "scratch");
	ck_assert_int_eq(scratch_hold(p), 0);
	path_of(p, "skel");
	ck_assert_int_eq(scratch_hold(p), 0);
	scratch_abandon();
	ck_assert(!there("scratch"));
	ck_assert(!there("skel"));
	/* no link was followed out of the tree */
	ck_assert(there("outside/keep"));
}
END_TEST

START_TEST(test_forgotten_tree_stays)
{
	char p[PATH_MAX];
	mk_dir("outside", 0755);
	make_tree("scratch");
	path_of(p, "scratch");
	ck_assert_int_eq(scratch_hold(p), 0);
	scratch_forget(p);
	scratch_abandon();
	ck_assert(there("scratch/tmp/a/b/c/f"));
}
END_TEST

/* The watchdog and a signal may both abandon: the first takes the
 * directory, the second finds nothing held (a directory of the same
 * name made since is not touched). */
START_TEST(test_abandon_once)
{
	char p[PATH_MAX];
	mk_dir("outside", 0755);
	make_tree("scratch");
	path_of(p, "scratch");
	ck_assert_int_eq(scratch_hold(p), 0);
	scratch_abandon();
	ck_assert(!there("scratch"));
	mk_dir("scratch", 0700);
	scratch_abandon();
	ck_assert(there("scratch"));
}
END_TEST

/* Past SCRATCH_DEPTH the walk stops: what is deeper stays, and so do
 * the directories above it; nothing fails. */
START_TEST(test_depth_bounded)
{
	char rel[PATH_MAX] = "deep", p[PATH_MAX];
	mk_dir(rel, 0755);
	for (int i = 0; i < SCRATCH_DEPTH + 4; i++) {
		strcat(rel, "/d");
		mk_dir(rel, 0755);
	}
	strcat(rel, "/f");
	mk_file(rel, "x\n");
	mk_file("deep/shallow", "y\n");
	path_of(p, "deep");
	ck_assert_int_eq(scratch_hold(p), 0);
	scratch_abandon();
	ck_assert(!there("deep/shallow"));
	ck_assert(there(rel));
}
END_TEST

START_TEST(test_hold_limits)
{
	char p[PATH_MAX + 8];
	memset(p, 'a', sizeof p - 1);
	p[0] = '/';
	p[sizeof p - 1] = '\0';
	ck_assert_int_eq(scratch_hold(p), -ENAMETOOLONG);
	for (int i = 0; i < SCRATCH_MAX; i++) {
		snprintf(p, sizeof p, "%s/held%d", base, i);
		ck_assert_int_eq(scratch_hold(p), 0);
	}
	ck_assert_int_eq(scratch_hold("/nonexistent"), -ENOSPC);
	snprintf(p, sizeof p, "%s/held0", base);
	scratch_forget(p);
	ck_assert_int_eq(scratch_hold(p), 0);
	scratch_abandon(); /* none of them exists: nothing to do */
}
END_TEST

static Suite *scratch_suite(void)
{
	Suite *s = suite_create("scratch");
	TCase *tc = tcase_create("abandon");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_abandon_removes_held_tree);
	tcase_add_test(tc, test_forgotten_tree_stays);
	tcase_add_test(tc, test_abandon_once);
	tcase_add_test(tc, test_depth_bounded);
	tcase_add_test(tc, test_hold_limits);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(scratch_suite());
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
