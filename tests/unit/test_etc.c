/* The synthetic /etc files: parsed back with the C library's own readers
 * (fgetpwent, fgetgrent), so a format slip fails here, not in a program
 * that looks itself up inside the sandbox. */
#include <check.h>
#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/machine.h"
#include "fs-emulation/etc.h"
#include "fs-emulation/vfs.h"

static struct vfs v; /* large: static; only uid, gid and the machine are used */
static struct machine m;
static char buf[8192];

static const char *gen(const char *name)
{
	int n = etc_generate(&v, name, buf, sizeof buf);
	ck_assert_msg(n > 0, "etc_generate(%s): %d", name, n);
	ck_assert_uint_eq(strlen(buf), (size_t)n);
	return buf;
}

static void view(uid_t uid, gid_t gid, const char *hostname)
{
	v.uid = uid;
	v.gid = gid;
	machine_init(&m, hostname);
	v.machine = &m;
}

/* The passwd entries of the generated file, in order; returns the count. */
static int passwd_entries(struct passwd *out, char names[][32], char homes[][64], char shells[][64],
			  int max)
{
	const char *text = gen("passwd");
	FILE *f = fmemopen((void *)text, strlen(text), "r");
	ck_assert_ptr_nonnull(f);
	int n = 0;
	struct passwd *pw;
	while ((pw = fgetpwent(f))) {
		ck_assert_int_lt(n, max);
		out[n] = *pw;
		snprintf(names[n], 32, "%s", pw->pw_name);
		snprintf(homes[n], 64, "%s", pw->pw_dir);
		snprintf(shells[n], 64, "%s", pw->pw_shell);
		n++;
	}
	fclose(f);
	return n;
}

START_TEST(test_passwd_default_uid)
{
	struct passwd pw[32];
	char names[32][32], homes[32][64], shells[32][64];
	view(65534, 65534, "");
	int n = passwd_entries(pw, names, homes, shells, 32);
	ck_assert_int_eq(n, 19); /* root, sandbox, 16 of Debian's, nobody */
	ck_assert_str_eq(names[0], "root");
	ck_assert_int_eq(pw[0].pw_uid, 0);
	ck_assert_str_eq(homes[0], "/root");
	/* The sandbox user comes before nobody: getpwuid(65534) names it. */
	ck_assert_str_eq(names[1], "sandbox");
	ck_assert_int_eq(pw[1].pw_uid, 65534);
	ck_assert_int_eq(pw[1].pw_gid, 65534);
	ck_assert_str_eq(homes[1], "/workspace");
	ck_assert_str_eq(shells[1], "/bin/sh");
	/* Debian's system accounts, by their fixed ids: _apt is 42 */
	ck_assert_str_eq(names[2], "daemon");
	ck_assert_int_eq(pw[2].pw_uid, 1);
	ck_assert_str_eq(names[17], "_apt");
	ck_assert_int_eq(pw[17].pw_uid, 42);
	ck_assert_str_eq(names[18], "nobody");
	ck_assert_int_eq(pw[18].pw_uid, 65534);
}
END_TEST

START_TEST(test_passwd_other_ids)
{
	struct passwd pw[32];
	char names[32][32], homes[32][64], shells[32][64];
	view(1000, 1001, "");
	int n = passwd_entries(pw, names, homes, shells, 32);
	ck_assert_int_eq(n, 19);
	ck_assert_str_eq(names[1], "sandbox");
	ck_assert_int_eq(pw[1].pw_uid, 1000);
	ck_assert_int_eq(pw[1].pw_gid, 1001);
	/* Nothing of the host's accounts: no user id but the sandbox's own
	 * among a distribution's users' (1000 to 59999). */
	for (int i = 0; i < n; i++)
		ck_assert(i == 1 || pw[i].pw_uid < 1000 || pw[i].pw_uid >= 60000);
}
END_TEST

START_TEST(test_passwd_root_sandbox)
{
	struct passwd pw[32];
	char names[32][32], homes[32][64], shells[32][64];
	view(0, 0, "");
	int n = passwd_entries(pw, names, homes, shells, 32);
	ck_assert_int_eq(n, 18);
	ck_assert_str_eq(names[0], "root");
	ck_assert_str_eq(homes[0], "/workspace");
	ck_assert_str_eq(names[1], "daemon");
	ck_assert_str_eq(names[17], "nobody");
	ck_assert_ptr_null(strstr(gen("passwd"), "sandbox"));
}
END_TEST

START_TEST(test_group)
{
	view(1000, 1001, "");
	const char *text = gen("group");
	FILE *f = fmemopen((void *)text, strlen(text), "r");
	ck_assert_ptr_nonnull(f);
	struct group *gr;
	char names[48][32];
	gid_t gids[48];
	int n = 0;
	while ((gr = fgetgrent(f)) && n < 48) {
		snprintf(names[n], 32, "%s", gr->gr_name);
		gids[n++] = gr->gr_gid;
	}
	fclose(f);
	ck_assert_int_eq(n, 39); /* root, sandbox, 36 of Debian's, nogroup */
	ck_assert_str_eq(names[0], "root");
	ck_assert_int_eq(gids[0], 0);
	ck_assert_str_eq(names[1], "sandbox");
	ck_assert_int_eq(gids[1], 1001);
	ck_assert_str_eq(names[2], "daemon");
	ck_assert_int_eq(gids[2], 1);
	ck_assert_str_eq(names[38], "nogroup");
	ck_assert_int_eq(gids[38], 65534);

	view(0, 0, "");
	const char *root = gen("group");
	ck_assert_ptr_null(strstr(root, "sandbox"));
	ck_assert(strncmp(root, "root:x:0:\ndaemon:x:1:\n", 22) == 0);
}
END_TEST

START_TEST(test_hostname_and_hosts)
{
	view(65534, 65534, "");
	ck_assert_str_eq(gen("hostname"), "moat\n");
	ck_assert_ptr_nonnull(strstr(gen("hosts"), "\n127.0.1.1\tmoat\n"));
	view(65534, 65534, "build-7.example");
	ck_assert_str_eq(machine_hostname(v.machine), "build-7.example");
	ck_assert_str_eq(gen("hostname"), "build-7.example\n");
	const char *h = gen("hosts");
	ck_assert_msg(strncmp(h, "127.0.0.1\tlocalhost\n", 20) == 0, "%s", h);
	ck_assert_ptr_nonnull(strstr(h, "\n127.0.1.1\tbuild-7.example\n"));
	ck_assert_ptr_nonnull(strstr(h, "\n::1\tlocalhost"));
	ck_assert_str_eq(machine_hostname(NULL), "moat");
}
END_TEST

START_TEST(test_no_nameserver)
{
	view(65534, 65534, "");
	const char *r = gen("resolv.conf");
	ck_assert_ptr_null(strstr(r, "nameserver"));
	ck_assert_ptr_nonnull(strstr(r, "moat denies it"));
	/* Every line is a comment or an option the resolver knows. */
	for (const char *l = r; *l; l = strchr(l, '\n') + 1)
		ck_assert_msg(l[0] == '#' || strncmp(l, "options ", 8) == 0, "line: %s", l);
}
END_TEST

START_TEST(test_nsswitch_files_only)
{
	view(65534, 65534, "");
	char *copy = strdup(gen("nsswitch.conf"));
	int dbs = 0;
	for (char *save, *l = strtok_r(copy, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		if (l[0] == '#')
			continue;
		char db[32], src[32], extra[32];
		ck_assert_int_eq(sscanf(l, "%31[^:]: %31s %31s", db, src, extra), 2);
		ck_assert_str_eq(src, "files");
		dbs++;
	}
	free(copy);
	ck_assert_int_ge(dbs, 4);
	ck_assert_ptr_nonnull(strstr(gen("nsswitch.conf"), "\nhosts:          files\n"));
}
END_TEST

/* machine-id: the sandbox's own, 32 hex digits and a newline as systemd
 * writes it, and never the same twice (nothing links two runs). */
START_TEST(test_machine_id)
{
	char a[64], b[64];
	int n = etc_generate(&v, "machine-id", a, sizeof a);
	ck_assert_int_eq(n, 33);
	ck_assert_int_eq(a[32], '\n');
	ck_assert_uint_eq(strspn(a, "0123456789abcdef"), 32);
	ck_assert_int_eq(etc_generate(&v, "machine-id", b, sizeof b), 33);
	ck_assert_str_ne(a, b);
}
END_TEST

/* shadow: passwd's accounts, each locked, and no hash at all. */
START_TEST(test_shadow_locked)
{
	view(65534, 65534, "");
	char pw[8192];
	snprintf(pw, sizeof pw, "%s", gen("passwd"));
	const char *sh = gen("shadow");
	int accounts = 0;
	for (char *save, *l = strtok_r(pw, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		char entry[128];
		snprintf(entry, sizeof entry, "%.*s:*:", (int)strcspn(l, ":"), l);
		ck_assert_msg(strstr(sh, entry) != NULL, "no locked entry %s", entry);
		accounts++;
	}
	int lines = 0;
	for (const char *s = sh; *s; s++)
		lines += *s == '\n';
	ck_assert_int_eq(lines, accounts);
	ck_assert_ptr_null(strchr(sh, '$')); /* no crypt(3) hash */
}
END_TEST

START_TEST(test_names_and_errors)
{
	view(65534, 65534, "");
	int k = 0;
	v.etc_no_egress = true; /* pip.conf is empty otherwise */
	for (; etc_files[k]; k++)
		ck_assert_int_gt(etc_generate(&v, etc_files[k], buf, sizeof buf), 0);
	ck_assert_int_eq(k, 9);
	v.etc_no_egress = false;
	ck_assert_int_eq(etc_generate(&v, "pip.conf", buf, sizeof buf), 0);
	ck_assert_int_eq(etc_generate(&v, "gshadow", buf, sizeof buf), -ENOENT);
	ck_assert_int_eq(etc_generate(&v, "", buf, sizeof buf), -ENOENT);
	ck_assert_int_eq(etc_generate(&v, "passwd", buf, 10), -ENOSPC);
	ck_assert_int_eq(etc_generate(&v, "passwd", buf, 0), -ENOSPC);
	/* The count plus its NUL fits; one byte less does not. */
	int n = etc_generate(&v, "hostname", buf, sizeof buf);
	ck_assert_int_eq(etc_generate(&v, "hostname", buf, (size_t)n + 1), n);
	ck_assert_int_eq(buf[n], '\0');
	ck_assert_int_eq(etc_generate(&v, "hostname", buf, (size_t)n), -ENOSPC);
}
END_TEST

static Suite *etc_suite(void)
{
	Suite *s = suite_create("etc");
	TCase *tc = tcase_create("generate");
	tcase_add_test(tc, test_passwd_default_uid);
	tcase_add_test(tc, test_passwd_other_ids);
	tcase_add_test(tc, test_passwd_root_sandbox);
	tcase_add_test(tc, test_group);
	tcase_add_test(tc, test_hostname_and_hosts);
	tcase_add_test(tc, test_no_nameserver);
	tcase_add_test(tc, test_nsswitch_files_only);
	tcase_add_test(tc, test_names_and_errors);
	tcase_add_test(tc, test_shadow_locked);
	tcase_add_test(tc, test_machine_id);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(etc_suite());

	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
