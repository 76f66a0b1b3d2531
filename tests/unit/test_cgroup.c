/* Finding moat's own cgroup directory (interposer/cgroup.c) from
 * /proc/self/cgroup and /proc/self/mountinfo as the hosts moat meets write
 * them: a hybrid host (this VM), systemd's pure v2, a container with a
 * cgroup namespace, a bind of a subtree, and names that must not match. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "interposer/cgroup.h"

static char cgf[64], mif[64];

static void write_tmp(char *path, const char *text)
{
	snprintf(path, 64, "/tmp/moat-test-cg-XXXXXX");
	int fd = mkstemp(path);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
}

/* The directory for `ctrl` (NULL: v2) given the two files, or "" for -1. */
static const char *dir(const char *cgroup, const char *mountinfo, const char *ctrl)
{
	static char out[4096];
	write_tmp(cgf, cgroup);
	write_tmp(mif, mountinfo);
	if (cgroup_dir_in(cgf, mif, ctrl, out, sizeof out) < 0)
		out[0] = '\0';
	unlink(cgf);
	unlink(mif);
	return out;
}

static const char hybrid_cg[] = "9:name=systemd:/\n"
				"8:pids:/\n"
				"4:memory:/process_api/5aed\n"
				"2:cpuacct:/\n"
				"1:cpu:/\n"
				"0::/\n";
static const char hybrid_mi[] =
	"31 25 0:26 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755\n"
	"32 31 0:27 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu\n"
	"33 31 0:28 / /sys/fs/cgroup/cpuacct rw,relatime - cgroup cgroup rw,cpuacct\n"
	"35 31 0:30 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory\n"
	"39 31 0:34 / /sys/fs/cgroup/pids rw,relatime - cgroup cgroup rw,pids\n"
	"40 31 0:35 / /sys/fs/cgroup/systemd rw,relatime - cgroup cgroup rw,name=systemd\n"
	"41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw\n";

START_TEST(test_hybrid)
{
	ck_assert_str_eq(dir(hybrid_cg, hybrid_mi, NULL), "/sys/fs/cgroup/unified");
	ck_assert_str_eq(dir(hybrid_cg, hybrid_mi, "memory"),
			 "/sys/fs/cgroup/memory/process_api/5aed");
	ck_assert_str_eq(dir(hybrid_cg, hybrid_mi, "pids"), "/sys/fs/cgroup/pids");
	ck_assert_str_eq(dir(hybrid_cg, hybrid_mi, "cpuacct"), "/sys/fs/cgroup/cpuacct");
	/* "cpu" is not "cpuacct", nor "name=systemd" a controller */
	ck_assert_str_eq(dir(hybrid_cg, hybrid_mi, "cpu"), "/sys/fs/cgroup/cpu");
	ck_assert_str_eq(dir(hybrid_cg, hybrid_mi, "systemd"), "");
	ck_assert_str_eq(dir(hybrid_cg, hybrid_mi, "blkio"), "");
}
END_TEST

START_TEST(test_pure_v2)
{
	const char *cg = "0::/user.slice/user-1000.slice/user@1000.service/app.slice/run.scope\n";
	const char *mi =
		"30 24 0:26 / /sys/fs/cgroup rw,nosuid shared:4 - cgroup2 cgroup2 rw,nsdelegate\n";
	ck_assert_str_eq(dir(cg, mi, NULL), "/sys/fs/cgroup/user.slice/user-1000.slice/"
					    "user@1000.service/app.slice/run.scope");
	/* no v1 hierarchy holds memory */
	ck_assert_str_eq(dir(cg, mi, "memory"), "");
}
END_TEST

START_TEST(test_combined_controllers)
{
	const char *cg = "3:cpu,cpuacct:/job\n0::/\n";
	const char *mi =
		"32 31 0:27 / /sys/fs/cgroup/cpu,cpuacct rw - cgroup cgroup rw,cpu,cpuacct\n";
	ck_assert_str_eq(dir(cg, mi, "cpuacct"), "/sys/fs/cgroup/cpu,cpuacct/job");
	ck_assert_str_eq(dir(cg, mi, "cpu"), "/sys/fs/cgroup/cpu,cpuacct/job");
	ck_assert_str_eq(dir(cg, mi, "acct"), "");
}
END_TEST

START_TEST(test_subtree_mounts)
{
	/* a container's view: the mount shows a subtree of the hierarchy */
	const char *mi = "50 40 0:26 /docker/abc /sys/fs/cgroup ro - cgroup2 cgroup2 rw\n";
	ck_assert_str_eq(dir("0::/docker/abc\n", mi, NULL), "/sys/fs/cgroup");
	ck_assert_str_eq(dir("0::/docker/abc/sub\n", mi, NULL), "/sys/fs/cgroup/sub");
	/* outside what the mount shows, or a sibling that shares a prefix */
	ck_assert_str_eq(dir("0::/docker/other\n", mi, NULL), "");
	ck_assert_str_eq(dir("0::/docker/abcd\n", mi, NULL), "");
	/* a cgroup namespace: the process is at its root */
	const char *ns = "50 40 0:26 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n";
	ck_assert_str_eq(dir("0::/\n", ns, NULL), "/sys/fs/cgroup");
}
END_TEST

START_TEST(test_refused_names)
{
	/* an escaped mount point (a space: \040) is not taken apart */
	const char *mi = "50 40 0:26 / /mnt/cg\\040x rw - cgroup2 cgroup2 rw\n";
	ck_assert_str_eq(dir("0::/\n", mi, NULL), "");
	/* a cgroup outside our cgroup namespace (the kernel writes "/.."),
	 * and a path that is not absolute */
	const char *mi2 = "50 40 0:26 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n";
	ck_assert_str_eq(dir("0::/../..\n", mi2, NULL), "");
	ck_assert_str_eq(dir("0::/a/../../b\n", mi2, NULL), "");
	ck_assert_str_eq(dir("0::x\n", mi2, NULL), "");
	ck_assert_str_eq(dir("", mi2, NULL), "");
}
END_TEST

int main(void)
{
	Suite *s = suite_create("cgroup");
	TCase *tc = tcase_create("own_dir");
	tcase_add_test(tc, test_hybrid);
	tcase_add_test(tc, test_pure_v2);
	tcase_add_test(tc, test_combined_controllers);
	tcase_add_test(tc, test_subtree_mounts);
	tcase_add_test(tc, test_refused_names);
	suite_add_tcase(s, tc);
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
