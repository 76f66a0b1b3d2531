/* moat run's option table (cli/options.h): every entry complete and
 * findable, setters that refuse with a line and leave the plan as it
 * was, argv parsed into the plan, and --help drawn from the table. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/options.h"

static struct run_config rc; /* large: static */
static char err[4096];

static const struct moat_option *opt(const char *name)
{
	const struct moat_option *o = option_find(name);
	ck_assert_msg(o != NULL, "%s is not in the table", name);
	return o;
}

/* Apply one option with up to two arguments; its return. */
static int apply(const char *name, const char *a, const char *b)
{
	char *args[2] = { (char *)a, (char *)b };
	err[0] = '\0';
	return option_apply(&rc, opt(name), args, err, sizeof err);
}

START_TEST(test_entries_complete)
{
	int n = 0;
	for (const struct moat_option *o = moat_options; o->name; o++, n++) {
		ck_assert_msg(!strncmp(o->name, "--", 2), "%s: not a long option", o->name);
		ck_assert_msg(o->help && *o->help, "%s: no help text", o->name);
		ck_assert_msg(o->help[strlen(o->help) - 1] != '\n', "%s: help ends in a newline",
			      o->name);
		ck_assert_msg(o->set != NULL, "%s: no setter", o->name);
		ck_assert_msg(o->nargs <= 2, "%s: %u arguments", o->name, o->nargs);
		for (unsigned k = 0; k < 2; k++)
			ck_assert_msg((k < o->nargs) == (o->metavar[k] != NULL),
				      "%s: metavar %u does not match nargs", o->name, k);
		/* A joined entry shares the line of the one before it. */
		ck_assert_msg(!(o->flags & OPT_JOINED) ||
				      (o != moat_options && !(o[-1].flags & OPT_JOINED)),
			      "%s: joined to nothing", o->name);
	}
	ck_assert_int_ge(n, 29);
}
END_TEST

START_TEST(test_names_unique_and_found)
{
	for (const struct moat_option *o = moat_options; o->name; o++) {
		for (const struct moat_option *p = o + 1; p->name; p++)
			ck_assert_msg(strcmp(o->name, p->name) != 0, "%s twice", o->name);
		ck_assert_ptr_eq(option_find(o->name), o);
	}
	ck_assert_ptr_null(option_find("--nope"));
	ck_assert_ptr_null(option_find("--"));
	ck_assert_ptr_null(option_find("bind"));
	ck_assert_ptr_null(option_find("--help")); /* a command's, not a run's */
}
END_TEST

START_TEST(test_setter_refuses_then_accepts)
{
	run_config_init(&rc);
	struct limits before = rc.lim;
	ck_assert_int_eq(apply("--memory-limit", "0", NULL), -1);
	ck_assert_str_eq(
		err, "--memory-limit: expected a positive number of bytes (K, M, G suffixes) (0)");
	ck_assert_int_eq(apply("--memory-limit", "12Q", NULL), -1);
	ck_assert_int_eq(memcmp(&rc.lim, &before, sizeof before), 0); /* untouched */

	ck_assert_int_eq(apply("--memory-limit", "1.5G", NULL), 0);
	ck_assert_uint_eq(rc.lim.mem_bytes, 3ULL << 29);
	ck_assert(!rc.lim.mem_default);
	ck_assert_int_eq(apply("--memory-limit", "none", NULL), 0);
	ck_assert_uint_eq(rc.lim.mem_bytes, 0);

	ck_assert_int_eq(apply("--time-limit", "0", NULL), -1);
	ck_assert_str_eq(err, "--time-limit: expected a number of seconds (0.5, 10) (0)");
	ck_assert_int_eq(apply("--kill-grace", "0", NULL), 0); /* zero is a grace */
	ck_assert(rc.lim.grace_s == 0);
	ck_assert_int_eq(apply("--pids-limit", "1000001", NULL), -1);
	ck_assert_str_eq(err, "--pids-limit: expected a positive count (1000001)");
	ck_assert_int_eq(apply("--pids-limit", "none", NULL), 0);
	ck_assert_uint_eq(rc.lim.pids, 0);

	ck_assert_int_eq(apply("--uid", "abc", NULL), -1);
	ck_assert_str_eq(err, "abc: not a numeric id (--uid)");
	ck_assert_int_eq(apply("--hostname", "a\nb", NULL), -1);
	ck_assert_ptr_null(strchr(err, '\n')); /* one line, the name not echoed */
	ck_assert_int_eq(apply("--cgroup", "maybe", NULL), -1);
	ck_assert_int_eq(apply("--cgroup", "off", NULL), 0);
	ck_assert_int_eq(rc.cg_use, CG_OFF);
	ck_assert_int_eq(apply("--audit-rate", "5", NULL), 0);
	ck_assert(rc.audit_caps.rate == 5 && rc.audit_caps.burst == 50);
	ck_assert_int_eq(apply("--json", NULL, NULL), 0);
	ck_assert(rc.json);
}
END_TEST

START_TEST(test_mounts_and_env)
{
	run_config_init(&rc);
	ck_assert_int_eq(apply("--bind", "/nonexistent-moat-src", "/x"), -1);
	ck_assert_str_eq(
		err,
		"/nonexistent-moat-src: source does not exist (give an existing host directory)");
	ck_assert_int_eq(apply("--bind", "/", "x"), -1);
	ck_assert_str_eq(err, "x: the destination must be an absolute path (--bind)");
	ck_assert_int_eq(apply("--ro-bind", "/", "/proc/1"), -1);
	ck_assert_int_eq(apply("--tmpfs", "/t:0", NULL), -1);
	ck_assert_int_eq(rc.nmount, 0);
	ck_assert(!rc.quota);

	ck_assert_int_eq(apply("--ro-bind", "/", "/host"), 0);
	ck_assert_int_eq(apply("--tmpfs", "/t:1M", NULL), 0);
	ck_assert_int_eq(rc.nmount, 2);
	ck_assert(rc.mount[0].kind == MNT_BIND && rc.mount[0].ro);
	ck_assert_str_eq(rc.mount[1].dst, "/t");
	ck_assert_uint_eq(rc.mount[1].size, 1 << 20);
	ck_assert(rc.quota);
	for (int k = 2; k < RUN_MAX_MOUNTS; k++)
		ck_assert_int_eq(apply("--tmpfs", "/u", NULL), 0);
	ck_assert_int_eq(apply("--tmpfs", "/u", NULL), -1);
	ck_assert_str_eq(err, "too many mounts");

	ck_assert_int_eq(rc.nenv, 4); /* PATH HOME LANG TERM */
	ck_assert_int_eq(apply("--setenv", "A=B", "c"), -1);
	ck_assert_int_eq(apply("--setenv", "PATH", "/x"), 0);
	ck_assert_int_eq(apply("--setenv", "FOO", "bar"), 0);
	ck_assert_int_eq(rc.nenv, 5);
	ck_assert_str_eq(rc.env[0], "PATH=/x");
	ck_assert_str_eq(rc.env[4], "FOO=bar");
	ck_assert_ptr_null(rc.env[5]);
}
END_TEST

/* The environment's text lies packed: the four defaults in one page (one
 * page fault at moat's start, not four); a value replaced keeps the others
 * where they are; the buffer's end is an error that names it. */
START_TEST(test_env_packed)
{
	run_config_init(&rc);
	ck_assert(rc.env[3] - rc.env[0] < 512);
	static char v[RUN_ENV_LEN + 1];
	memset(v, 'x', sizeof v - 1);
	ck_assert_int_eq(apply("--setenv", "V", v), -1);
	ck_assert_str_eq(err, "--setenv V: value too long");
	v[RUN_ENV_LEN - 3] = '\0'; /* V= ... NUL: exactly RUN_ENV_LEN */
	ck_assert_int_eq(apply("--setenv", "V", v), 0);
	ck_assert_int_eq(rc.nenv, 5);
	ck_assert_uint_eq(strlen(rc.env[4]), RUN_ENV_LEN - 1);
	int ok = 1, n = 0;
	while ((ok = apply("--setenv", "V", v)) == 0 && n < 2 * RUN_MAX_ENV)
		n++;
	ck_assert_int_eq(ok, -1);
	ck_assert_int_lt(n, RUN_MAX_ENV);
	ck_assert(strstr(err, "the environment is over") != NULL);
	ck_assert_int_eq(rc.nenv, 5);
	ck_assert_str_eq(rc.env[1], "HOME=/workspace");
	ck_assert_uint_eq(strlen(rc.env[4]), RUN_ENV_LEN - 1);
}
END_TEST

START_TEST(test_apply_missing_argument)
{
	run_config_init(&rc);
	ck_assert_int_eq(apply("--setenv", "X", NULL), -1);
	ck_assert_str_eq(err, "--setenv needs two arguments");
	ck_assert_int_eq(apply("--chdir", NULL, NULL), -1);
	ck_assert_str_eq(err, "--chdir needs an argument");
}
END_TEST

START_TEST(test_parse_argv)
{
	char *bad[] = { "--bind", "/", NULL };
	run_config_init(&rc);
	ck_assert_int_eq(options_parse_argv(&rc, 2, bad, err, sizeof err), -1);
	ck_assert_str_eq(err, "--bind needs two arguments");

	char *unknown[] = { "--json", "--help", "--", "true", NULL };
	run_config_init(&rc);
	ck_assert_int_eq(options_parse_argv(&rc, 4, unknown, err, sizeof err), -1);
	ck_assert_str_eq(err, "unknown option --help (see moat run --help)");

	char *nocmd[] = { "--json", NULL };
	run_config_init(&rc);
	ck_assert_int_eq(options_parse_argv(&rc, 1, nocmd, err, sizeof err), -1);
	ck_assert_str_eq(err, "no command given (usage: moat run [OPTIONS] -- CMD [ARGS...])");

	char *good[] = { "--chdir", "/tmp", "--setenv", "A", "b", "--", "--ls", "-l", NULL };
	run_config_init(&rc);
	ck_assert_int_eq(options_parse_argv(&rc, 8, good, err, sizeof err), 0);
	ck_assert_ptr_eq(rc.argv, good + 6);
	ck_assert_str_eq(rc.chdir, "/tmp");

	char *bare[] = { "--json", "ls", "--json", NULL }; /* the command's own words */
	run_config_init(&rc);
	ck_assert_int_eq(options_parse_argv(&rc, 3, bare, err, sizeof err), 0);
	ck_assert_ptr_eq(rc.argv, bare + 1);
}
END_TEST

START_TEST(test_usage_from_table)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	ck_assert_ptr_nonnull(f);
	options_usage(f);
	fclose(f);
	ck_assert(!strncmp(text, "usage: moat run [OPTIONS] -- CMD [ARGS...]\n\n", 44));
	for (const struct moat_option *o = moat_options; o->name; o++) {
		char line[64];
		snprintf(line, sizeof line, "%s%s ", o->flags & OPT_JOINED ? ", " : "\n  ",
			 o->name);
		ck_assert_msg(strstr(text, line), "%s not in --help", o->name);
	}
	ck_assert_ptr_nonnull(strstr(text,
				     "\n  --uid N, --gid N    the sandbox's ids (default 65534 "
				     "when run as root)\n"));
	ck_assert_ptr_nonnull(strstr(text, "\n  --file-size-limit SIZE, --open-files-limit N   per "
					   "process (rlimits)\n"));
	ck_assert_ptr_nonnull(strstr(text,
				     "\n  --memory-limit SIZE memory of all processes together"
				     " (ML; K, M, G; default\n                      half"));
	ck_assert(len > 20 && !strcmp(text + len - 20, "  --version, --help\n"));
	free(text);
}
END_TEST

static Suite *options_suite(void)
{
	Suite *s = suite_create("options");
	TCase *tc = tcase_create("table");
	tcase_add_test(tc, test_entries_complete);
	tcase_add_test(tc, test_names_unique_and_found);
	tcase_add_test(tc, test_setter_refuses_then_accepts);
	tcase_add_test(tc, test_mounts_and_env);
	tcase_add_test(tc, test_apply_missing_argument);
	tcase_add_test(tc, test_env_packed);
	tcase_add_test(tc, test_parse_argv);
	tcase_add_test(tc, test_usage_from_table);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(options_suite());

	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
